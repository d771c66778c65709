import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { startTestDaemon } from '@nteract-mcp/daemon/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { startUserSession, type UserSession, waitFor } from './support/index.js';

const sessions: UserSession[] = [];
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const session of sessions.splice(0)) await session.stop();
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface StoredNotebook {
  cells: { id: string; cell_type: string; metadata: object; source: string[] | string; outputs?: unknown[] }[];
}

function codeCell(id: string, source: string) {
  return { cell_type: 'code', id, metadata: {}, source: [source], outputs: [], execution_count: null };
}

function writeNotebook(path: string, cells: ReturnType<typeof codeCell>[]): void {
  writeFileSync(path, `${JSON.stringify({ cells, metadata: {}, nbformat: 4, nbformat_minor: 5 }, null, 1)}\n`);
}

function sourcesIn(path: string): string[] {
  try {
    const notebook = JSON.parse(readFileSync(path, 'utf8')) as StoredNotebook;
    return notebook.cells.map((cell) => (Array.isArray(cell.source) ? cell.source.join('') : cell.source));
  } catch {
    return ['<unreadable>'];
  }
}

/** What JupyterLab or a `git checkout` does to an open notebook: the file is rewritten with one more cell. */
function appendCellOnDisk(path: string, id: string, source: string): void {
  const notebook = JSON.parse(readFileSync(path, 'utf8')) as StoredNotebook;
  notebook.cells.push(codeCell(id, source));
  writeFileSync(path, `${JSON.stringify(notebook, null, 1)}\n`);
}

const untilFile = (path: string, expected: string[]) =>
  waitFor(
    `${path} to hold ${JSON.stringify(expected)}`,
    () => {
      const sources = sourcesIn(path);
      if (sources.join('|') === expected.join('|')) return sources;
      throw new Error(`it holds ${JSON.stringify(sources)}`);
    },
    { timeoutMs: 30_000, intervalMs: 50 },
  );

describe('notebook files changed by other programs', () => {
  it('an external edit of an open notebook survives the agent’s next edit (as a user runs nteract-mcp)', {
    timeout: 120_000,
  }, async () => {
    const session = await startUserSession();
    sessions.push(session);
    const path = join(session.dirs.project, 'shared.ipynb');
    writeNotebook(path, [codeCell('c1', 'mine')]);
    const connected = await session.call('connect_notebook', { path });
    expect(connected.isError, connected.text).toBe(false);
    appendCellOnDisk(path, 'c2', 'added in JupyterLab');
    const edited = await session.call('set_cell', { cell_id: 'c1', source: 'mine, edited' });
    expect(edited.isError, edited.text).toBe(false);
    await untilFile(path, ['mine, edited', 'added in JupyterLab']);
    const cells = await session.call('get_all_cells', { format: 'json' });
    expect(cells.text).toContain('added in JupyterLab');
  });

  // A component test of runt-mcp and the daemon: unsaved edits exist only while the autosave is
  // held off, so this daemon is started with a long autosave delay (no user sets that).
  it('tells the agent plainly when the file changed under unsaved edits, and leaves the file alone', {
    timeout: 120_000,
  }, async () => {
    const daemon = await startTestDaemon([
      '--no-kernels',
      '--autosave-debounce-ms',
      '600000',
      '--autosave-max-ms',
      '600000',
    ]);
    cleanups.push(() => daemon.dispose());
    const client = new Client({ name: 'claude-code', version: '1.0.0' });
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [fileURLToPath(new URL('../packages/nteract-mcp/dist/runt-mcp.js', import.meta.url))],
      env: { ...process.env, RUNTIMED_SOCKET_PATH: daemon.socketPath, NTERACT_MCP_NO_AUTOSTART: '1' } as Record<
        string,
        string
      >,
      cwd: daemon.dir,
      stderr: 'pipe',
    });
    await client.connect(transport);
    cleanups.push(() => client.close());
    const call = async (name: string, args: Record<string, unknown> = {}) => {
      const result = (await client.callTool({ name, arguments: args })) as {
        content: { type: string; text: string }[];
        isError?: boolean;
      };
      return { text: result.content.map((item) => item.text).join('\n'), isError: result.isError === true };
    };

    const path = join(daemon.dir, 'busy.ipynb');
    writeNotebook(path, [codeCell('c1', 'first')]);
    expect((await call('connect_notebook', { path })).isError).toBe(false);
    expect((await call('create_cell', { source: 'unsaved agent edit' })).isError).toBe(false);
    appendCellOnDisk(path, 'c2', 'git checkout');
    const external = readFileSync(path, 'utf8');
    const refused = await call('create_cell', { source: 'next edit' });
    expect(refused.isError).toBe(true);
    expect(refused.text).toContain(
      `${path} was changed on disk by another program while this notebook had unsaved edits; the file was left as it is and your version was saved as ${join(daemon.dir, 'busy.nteract-conflict-')}`,
    );
    expect(refused.text).toContain('save_notebook to overwrite it');
    expect(readFileSync(path, 'utf8')).toBe(external);

    // Reconnecting loads the file; edits go on from there.
    const reconnected = await call('connect_notebook', { path });
    expect(reconnected.isError, reconnected.text).toBe(false);
    const cells = await call('get_all_cells', { format: 'json' });
    expect(cells.text).toContain('git checkout');
    expect(cells.text).not.toContain('unsaved agent edit');
    expect((await call('create_cell', { source: 'after reconnect' })).isError).toBe(false);
  });

  it('tells the agent when its file is deleted, renamed or replaced, and writes a deleted one back with the next edit', {
    timeout: 120_000,
  }, async () => {
    const session = await startUserSession();
    sessions.push(session);
    const path = join(session.dirs.project, 'watched.ipynb');
    writeNotebook(path, [codeCell('c1', 'mine')]);
    expect((await session.call('connect_notebook', { path })).isError).toBe(false);
    const told = (pattern: RegExp) =>
      waitFor(`the agent to be told ${String(pattern)}`, async () => {
        const status = await session.call('session_status');
        return pattern.test(status.text) || session.transport.news().some((line) => pattern.test(line));
      });

    // Deleted: told (status and the next answer); the next edit writes it back.
    rmSync(path);
    await told(new RegExp(`${path} was deleted or moved away by another program`));
    expect((await session.call('create_cell', { source: 'after delete' })).isError).toBe(false);
    await untilFile(path, ['mine', 'after delete']);
    await told(new RegExp(`${path} was written again with every edit`));

    // Renamed: told where it went.
    const renamed = join(session.dirs.project, 'renamed.ipynb');
    renameSync(path, renamed);
    await told(new RegExp(`${path} was renamed to ${renamed} by another program`));
    expect((await session.call('create_cell', { source: 'after rename' })).isError).toBe(false);
    await untilFile(path, ['mine', 'after delete', 'after rename']);

    // Replaced by another program (no unsaved edits): reloaded, and the agent is told.
    await waitFor(
      'the session to settle',
      async () => !(await session.call('session_status')).text.includes('file_missing'),
    );
    writeNotebook(path, [codeCell('t1', 'theirs')]);
    await told(
      new RegExp(`${path} was replaced on disk by another program; the notebook was reloaded from it \\(1 cell now\\)`),
    );
    expect((await session.call('get_all_cells', { format: 'json' })).text).toContain('theirs');
  });

  it('one rule for a path that does not exist: a new notebook in an existing directory (said so), an error in a missing one', {
    timeout: 120_000,
  }, async () => {
    const session = await startUserSession();
    sessions.push(session);
    const fresh = join(session.dirs.project, 'fresh.ipynb');
    const created = await session.call('connect_notebook', { path: 'fresh.ipynb' });
    expect(created.isError, created.text).toBe(false);
    expect(created.json).toMatchObject({
      created: true,
      note: `${fresh} did not exist: a new empty notebook was created there.`,
    });
    expect(existsSync(fresh)).toBe(true);
    const again = await session.call('connect_notebook', { path: 'fresh.ipynb' });
    expect(again.json?.created).toBeUndefined();

    const nowhere = join(session.dirs.project, 'no-such-dir', 'x.ipynb');
    const refused = await session.call('connect_notebook', { path: nowhere });
    expect(refused.isError).toBe(true);
    expect(refused.text).toContain(`the directory ${join(session.dirs.project, 'no-such-dir')} does not exist`);
    expect(existsSync(join(session.dirs.project, 'no-such-dir'))).toBe(false);
  });

  it('nteract-mcp --notebook with a file that does not exist yet opens a new notebook there (the README example)', {
    timeout: 120_000,
  }, async () => {
    const session = await startUserSession({ proxyArgs: ['--notebook', 'analysis.ipynb'] });
    sessions.push(session);
    const path = join(session.dirs.project, 'analysis.ipynb');
    const status = await waitFor('the --notebook notebook to be active', async () => {
      const answer = await session.call('session_status');
      const active = answer.json?.active as { path?: string } | null | undefined;
      return active?.path === path ? answer : undefined;
    });
    expect(status.text).not.toContain('no longer exists');
    // The first child served it: it did not die waiting for the daemon it started (exit code 13).
    expect((status.json?.proxy as { restart_count?: number } | undefined)?.restart_count).toBe(0);
    expect(session.stderr()).not.toContain('"exitClass":"crash"');
    expect(existsSync(path)).toBe(true);
    expect((await session.call('create_cell', { source: 'x = 1' })).isError).toBe(false);
    await untilFile(path, ['x = 1']);
  });
});
