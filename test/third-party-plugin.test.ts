import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { startUserSession, type UserSession, waitFor } from './support/index.js';

/** The example third-party plugin's module, as built (it exports `createPlugin`). */
const examplePlugin = fileURLToPath(new URL('../examples/custom-rejoin-rule/dist/plugin.js', import.meta.url));

const archived = {
  cells: [{ cell_type: 'code', id: 'c1', metadata: {}, source: 'answer = 41 + 1', outputs: [], execution_count: null }],
  metadata: { kernelspec: { name: 'python3', display_name: 'Python 3', language: 'python' } },
  nbformat: 4,
  nbformat_minor: 5,
};

const sessions: UserSession[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const session of sessions.splice(0)) await session.stop();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** The shipped bins as a user starts them, with the example plugin and an archive holding report.ipynb. */
async function startWithArchive(): Promise<{ session: UserSession; archive: string; work: string }> {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'third-party-')));
  dirs.push(root);
  const archive = join(root, 'archive');
  const work = join(root, 'work');
  mkdirSync(archive);
  mkdirSync(work);
  writeFileSync(join(archive, 'report.ipynb'), JSON.stringify(archived));
  const session = await startUserSession({
    env: { NTERACT_MCP_PLUGINS: examplePlugin, ACME_ARCHIVE_DIR: archive, ACME_ARCHIVE_WORK_DIR: work },
  });
  sessions.push(session);
  return { session, archive, work };
}

describe('a third-party plugin in the shipped product', () => {
  it('is loaded by the real child from NTERACT_MCP_PLUGINS: its own target kind (one notebook backend) connects through connect_notebook and comes back through that backend after a child crash', {
    timeout: 180_000,
  }, async () => {
    const { session, work } = await startWithArchive();

    const connected = await session.call('connect_notebook', { url: 'archive:report.ipynb' });
    expect(connected.isError, connected.text + session.stderr()).toBe(false);
    expect(connected.json).toMatchObject({ path: join(work, 'report.ipynb') });
    expect(connected.session?.target).toBe('archive:report.ipynb');
    const cells = await session.call('get_all_cells');
    expect(cells.text).toContain('answer = 41 + 1');

    // The child dies; the next call goes at once. The proxy hands the archive target to the new
    // child, which has the plugin again and rejoins by reopening through the plugin's backend.
    await session.faults.killChild();
    const after = await session.call('get_all_cells');
    expect(after.isError, after.text).toBe(false);
    // The restart notice is the last item: the tool's own output stays first.
    expect(after.texts.at(-1)).toBe('[nteract] MCP server restarted, session reconnected to archive:report.ipynb\n');
    expect(after.texts[0]).toContain('answer = 41 + 1');
    expect(after.text).toContain('answer = 41 + 1');
    expect(after.session?.rejoin).toEqual({ requested: 'archive:report.ipynb', outcome: 'rejoined' });
    const status = await session.call('session_status');
    expect(status.json?.active).toMatchObject({ target: 'archive:report.ipynb', origin: 'rejoin' });
  });

  it('keeps its session through a daemon restart: core reopens the working copy through the plugin backend, edits kept', {
    timeout: 180_000,
  }, async () => {
    const { session, archive, work } = await startWithArchive();

    const connected = await session.call('connect_notebook', { url: 'archive:report.ipynb' });
    expect(connected.isError, connected.text + session.stderr()).toBe(false);
    const created = await session.call('create_cell', { source: 'edited = "in the working copy"' });
    expect(created.isError, created.text).toBe(false);
    const workingCopy = join(work, 'report.ipynb');
    await waitFor('the edit saved to the working copy', () =>
      readFileSync(workingCopy, 'utf8').includes('in the working copy'),
    );

    // The daemon dies (SIGKILL); the next call, an edit, goes at once and lands on the notebook
    // brought back on a new daemon, beside the edit made before.
    await session.faults.killDaemon();
    const edited = await session.call('create_cell', { source: 'after = "the restart"' });
    expect(edited.isError, edited.text + session.stderr()).toBe(false);
    const after = await session.call('get_all_cells');
    expect(after.isError, after.text).toBe(false);
    expect(after.text).toContain('in the working copy');
    expect(after.text).toContain('answer = 41 + 1');
    expect(after.text.match(/after = "the restart"/g)).toHaveLength(1);
    const status = await session.call('session_status');
    expect(status.json?.active, status.text).toMatchObject({ target: 'archive:report.ipynb', path: workingCopy });
    await waitFor('the edit after the restart saved to the working copy', () =>
      readFileSync(workingCopy, 'utf8').includes('the restart'),
    );
    // The archive itself was never written: the agent's edits live in the working copy only.
    expect(readFileSync(join(archive, 'report.ipynb'), 'utf8')).not.toContain('in the working copy');
  });

  it('refuses to start a child whose plugin module cannot be loaded, naming it on stderr', {
    timeout: 120_000,
  }, async () => {
    const session = await startUserSession({ env: { NTERACT_MCP_PLUGINS: '/nonexistent/acme-plugin.js' } });
    sessions.push(session);
    const outcome = await session.send('list_active_notebooks');
    expect(outcome.ok && !outcome.outcome.isError).toBe(false);
    expect(session.stderr()).toContain("runt-mcp: cannot load the plugin module '/nonexistent/acme-plugin.js'");
  });
});
