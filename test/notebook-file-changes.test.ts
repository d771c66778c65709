import { readFileSync, writeFileSync } from 'node:fs';
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
});
