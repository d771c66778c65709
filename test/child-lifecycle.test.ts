import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { startTestDaemon, type TestDaemon } from '@nteract-mcp/daemon/testing';
import { afterEach, describe, expect, it } from 'vitest';

const runtMcp = fileURLToPath(new URL('../packages/nteract-mcp/dist/runt-mcp.js', import.meta.url));
const cleanups: (() => Promise<void>)[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface ToolResult {
  readonly text: string;
  readonly isError: boolean;
  readonly json: Record<string, unknown> | undefined;
}

/** A real daemon and a real `runt-mcp` child driven by an SDK client. */
async function start(daemonArgs: readonly string[] = ['--keep-alive-ms', '1000']) {
  let daemon: TestDaemon = await startTestDaemon(daemonArgs);
  cleanups.push(() => daemon.dispose());
  const client = new Client({ name: 'claude-code', title: 'Claude Code', version: '1.0.0' });
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [runtMcp],
    env: {
      ...process.env,
      RUNTIMED_SOCKET_PATH: daemon.socketPath,
      NTERACT_MCP_NO_AUTOSTART: '1',
      NTERACT_MCP_AGENT_SESSION: 's1',
    } as Record<string, string>,
    cwd: daemon.dir,
    stderr: 'pipe',
  });
  await client.connect(transport);
  cleanups.push(() => client.close());
  const call = async (name: string, args: Record<string, unknown> = {}): Promise<ToolResult> => {
    const result = (await client.callTool({ name, arguments: args })) as {
      content: { type: string; text: string }[];
      isError?: boolean;
    };
    const text = result.content.map((item) => item.text).join('\n');
    let json: Record<string, unknown> | undefined;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    return { text, isError: result.isError === true, json };
  };
  /** Runs code in a new cell of the active notebook and returns its text output. */
  const run = async (source: string): Promise<string> => {
    const result = await call('create_cell', { source, and_run: true, timeout_secs: 60 });
    expect(result.isError, result.text).toBe(false);
    return result.text;
  };
  const restartDaemon = async (): Promise<void> => {
    await daemon.stop();
    const next = await daemon.restart();
    const previous = daemon;
    daemon = next;
    cleanups.push(() => next.dispose());
    void previous;
  };
  /** Polls a tool until its result satisfies `accept` (background rejoin takes a moment). */
  const until = async (
    name: string,
    args: Record<string, unknown>,
    accept: (result: ToolResult) => boolean,
  ): Promise<ToolResult> => {
    const deadline = Date.now() + 45_000;
    for (;;) {
      const result = await call(name, args);
      if (accept(result)) return result;
      if (Date.now() > deadline) throw new Error(`timed out; last ${name} result: ${result.text}`);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  };
  return { client, call, run, restartDaemon, until, daemon: () => daemon };
}

describe('runt-mcp with a real daemon', () => {
  it('brings a saved notebook back by itself after a daemon restart: document restored, new kernel', {
    timeout: 120_000,
  }, async () => {
    const t = await start();
    const created = await t.call('create_notebook', {});
    expect(created.isError, created.text).toBe(false);
    expect(await t.run('x = 41')).not.toContain('Error');
    expect(await t.run('print(x + 1)')).toContain('42');
    const path = join(t.daemon().dir, 'saved.ipynb');
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

  it('switches among three notebooks and back; parked kernels stay alive', { timeout: 120_000 }, async () => {
    const t = await start();
    const ids: string[] = [];
    for (const name of ['alpha', 'beta', 'gamma']) {
      const created = await t.call('create_notebook', {});
      ids.push(String(created.json?.notebook_id));
      await t.run(`who = '${name}'`);
    }
    await new Promise((resolve) => setTimeout(resolve, 2500));
    const back = await t.call('connect_notebook', { notebook_id: ids[0] });
    expect(back.json).toMatchObject({ notebook_id: ids[0], switched_from: ids[2] });
    await t.until(
      'session_status',
      {},
      (result) => (result.json?.active as { readiness?: { runtime?: string } })?.readiness?.runtime === 'ready',
    );
    expect(await t.run('print(who)')).toContain('alpha');
    await t.call('connect_notebook', { notebook_id: ids[1] });
    await t.until(
      'session_status',
      {},
      (result) => (result.json?.active as { readiness?: { runtime?: string } })?.readiness?.runtime === 'ready',
    );
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
