import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startUserSession, type ToolOutcome, type UserSession, waitFor } from './support/index.js';

const sessions: UserSession[] = [];
afterEach(async () => {
  for (const session of sessions.splice(0)) await session.stop();
});

/** nteract-mcp as a user runs it (test/support), with helpers for these tests. */
async function start() {
  const session = await startUserSession();
  sessions.push(session);
  /** Runs code in a new cell of the active notebook and returns its text output. */
  const run = async (source: string): Promise<string> => {
    const result = await session.call('create_cell', { source, and_run: true, timeout_secs: 60 });
    expect(result.isError, result.text).toBe(false);
    return result.text;
  };
  /** A daemon restart as a user does it: `runtimed stop`, then `runtimed start`. */
  const restartDaemon = async (): Promise<void> => {
    const before = await session.pids.waitForDaemon();
    await session.faults.stopDaemon();
    if (session.pids.daemon() === undefined) {
      const started = await session.runtimed(['start']);
      // The child may have brought it back first; then `start` says so and that daemon serves.
      if (started.code !== 0) expect(started.stderr).toContain('already running');
    }
    await session.pids.waitForDaemon(before);
  };
  /** Polls a tool until its result satisfies `accept` (the background rejoin takes a moment). */
  const until = (name: string, args: Record<string, unknown>, accept: (result: ToolOutcome) => boolean) =>
    waitFor(
      `${name} to answer as expected`,
      async () => {
        const result = await session.call(name, args);
        if (accept(result)) return result;
        throw new Error(`last ${name} result: ${result.text}`);
      },
      { timeoutMs: 45_000, intervalMs: 250 },
    );
  return { session, call: session.call, run, restartDaemon, until };
}

describe('rejoin after a daemon restart, as a user runs nteract-mcp', () => {
  it('brings a saved notebook back by itself after a daemon restart: document restored, new kernel', {
    timeout: 120_000,
  }, async () => {
    const t = await start();
    const created = await t.call('create_notebook', {});
    expect(created.isError, created.text).toBe(false);
    expect(await t.run('x = 41')).not.toContain('Error');
    expect(await t.run('print(x + 1)')).toContain('42');
    const path = join(t.session.dirs.project, 'saved.ipynb');
    const saved = await t.call('save_notebook', { path });
    expect(saved.json).toMatchObject({ path, notebook_id: created.json?.notebook_id });
    await t.restartDaemon();
    const back = await t.until('get_all_cells', { format: 'json' }, (result) => !result.isError);
    expect(back.text).toContain('x = 41');
    const status = await t.call('session_status');
    expect(status.json).toMatchObject({ active: { notebook_id: created.json?.notebook_id, path } });
    expect(await t.run('print(x)')).toContain('NameError');
  });

  it('brings a persisted untitled notebook back, and reports an ephemeral one as evicted', {
    timeout: 120_000,
  }, async () => {
    const t = await start();
    const kept = await t.call('create_notebook', { ephemeral: false });
    await t.run('draft = 1');
    await t.restartDaemon();
    const back = await t.until(
      'session_status',
      {},
      (result) => (result.json?.active as { notebook_id?: string } | null)?.notebook_id === kept.json?.notebook_id,
    );
    expect(back.json?.last_drop).toMatchObject({ reason: 'disconnected' });
    expect((await t.call('get_all_cells', { format: 'json' })).text).toContain('draft = 1');

    const ephemeral = await t.call('create_notebook', {});
    await t.run('scratch = 2');
    await t.restartDaemon();
    const evicted = await t.until('get_all_cells', {}, (result) => result.isError && result.text.includes('evicted'));
    expect(evicted.text).toBe(
      `No active notebook session (notebook was evicted (idle timeout)). Reconnect with: connect_notebook(notebook_id="${String(ephemeral.json?.notebook_id)}")`,
    );
    const rooms = await t.call('list_active_notebooks');
    expect(rooms.text).not.toContain(String(ephemeral.json?.notebook_id));
  });

  it('switches among three notebooks and back; parked kernels outlive the keep-alive', {
    timeout: 120_000,
  }, async () => {
    const t = await start();
    // The user started the daemon with a short keep-alive; the child finds and uses it.
    // (Should the child have started one with the defaults already, that one is stopped first.)
    await waitFor('a daemon with a 1 s keep-alive', async () => {
      await t.session.faults.stopDaemon();
      const started = await t.session.runtimed(['start', '--keep-alive-ms', '1000']);
      if (started.code === 0) return true;
      throw new Error(started.stderr);
    });
    const ids: string[] = [];
    for (const name of ['alpha', 'beta', 'gamma']) {
      const created = await t.call('create_notebook', {});
      ids.push(String(created.json?.notebook_id));
      await t.run(`who = '${name}'`);
    }
    // Longer than the keep-alive: a kernel without peers would be gone by now (a lower bound, not a timing assertion).
    await new Promise((resolve) => setTimeout(resolve, 2500));
    const ready = (result: ToolOutcome) =>
      (result.json?.active as { readiness?: { runtime?: string } })?.readiness?.runtime === 'ready';
    const back = await t.call('connect_notebook', { notebook_id: ids[0] });
    expect(back.json).toMatchObject({ notebook_id: ids[0], switched_from: ids[2] });
    await t.until('session_status', {}, ready);
    expect(await t.run('print(who)')).toContain('alpha');
    await t.call('connect_notebook', { notebook_id: ids[1] });
    await t.until('session_status', {}, ready);
    expect(await t.run('print(who)')).toContain('beta');
    const status = await t.call('session_status');
    expect(status.json?.parked).toHaveLength(2);
  });
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

async function untilFile(path: string, accept: (sources: string[]) => boolean): Promise<string[]> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const sources = sourcesIn(path);
    if (accept(sources)) return sources;
    if (Date.now() > deadline) throw new Error(`timed out; ${path} holds ${JSON.stringify(sources)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('runt-mcp and notebook files changed by other programs (real daemon)', () => {
  it('an external edit of an open notebook survives the agent’s next edit', { timeout: 120_000 }, async () => {
    const t = await start(['--no-kernels', '--autosave-debounce-ms', '20', '--autosave-max-ms', '100']);
    const path = join(t.daemon().dir, 'shared.ipynb');
    writeNotebook(path, [codeCell('c1', 'mine')]);
    const connected = await t.call('connect_notebook', { path });
    expect(connected.isError, connected.text).toBe(false);
    appendCellOnDisk(path, 'c2', 'added in JupyterLab');
    const edited = await t.call('set_cell', { cell_id: 'c1', source: 'mine, edited' });
    expect(edited.isError, edited.text).toBe(false);
    await untilFile(path, (sources) => sources.join('|') === 'mine, edited|added in JupyterLab');
  });

  it('tells the agent plainly when the file changed under unsaved edits, and leaves the file alone', {
    timeout: 120_000,
  }, async () => {
    const t = await start(['--no-kernels', '--autosave-debounce-ms', '600000', '--autosave-max-ms', '600000']);
    const path = join(t.daemon().dir, 'busy.ipynb');
    writeNotebook(path, [codeCell('c1', 'first')]);
    expect((await t.call('connect_notebook', { path })).isError).toBe(false);
    expect((await t.call('create_cell', { source: 'unsaved agent edit' })).isError).toBe(false);
    appendCellOnDisk(path, 'c2', 'git checkout');
    const external = readFileSync(path, 'utf8');
    const refused = await t.call('create_cell', { source: 'next edit' });
    expect(refused.isError).toBe(true);
    expect(refused.text).toContain(
      `${path} was changed on disk by another program while this notebook had unsaved edits; the file was left as it is and your version was saved as ${join(t.daemon().dir, 'busy.nteract-conflict-')}`,
    );
    expect(refused.text).toContain('save_notebook to overwrite it');
    expect(readFileSync(path, 'utf8')).toBe(external);

    // Reconnecting loads the file; edits go on from there.
    const reconnected = await t.call('connect_notebook', { path });
    expect(reconnected.isError, reconnected.text).toBe(false);
    const cells = await t.call('get_all_cells', { format: 'json' });
    expect(cells.text).toContain('git checkout');
    expect(cells.text).not.toContain('unsaved agent edit');
    expect((await t.call('create_cell', { source: 'after reconnect' })).isError).toBe(false);
  });
});
