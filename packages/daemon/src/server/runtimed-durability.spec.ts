import { chmodSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CoreError } from '@nteract-mcp/core';
import type { RuntimedConnection, RuntimedFrame, WireRoomInfo } from '@nteract-mcp/core/runtimed-wire';
import { afterEach, describe, expect, it } from 'vitest';
import { NotebookDocument } from '../document/notebook-document.js';
import { startTestDaemon, type TestDaemon } from '../testing/start-test-daemon.js';

/** Autosave far away: whatever survives a crash in these tests survived through the journal. */
const noAutosave = ['--no-kernels', '--autosave-debounce-ms', '600000', '--autosave-max-ms', '600000'];
const fastAutosave = ['--no-kernels', '--autosave-debounce-ms', '20', '--autosave-max-ms', '100'];
const daemons: TestDaemon[] = [];
const connections: RuntimedConnection[] = [];

afterEach(async () => {
  for (const connection of connections.splice(0)) connection.close();
  for (const daemon of daemons.splice(0).reverse()) await daemon.dispose();
});

async function daemon(args: readonly string[]): Promise<TestDaemon> {
  const started = await startTestDaemon(args);
  daemons.push(started);
  return started;
}

async function restart(previous: TestDaemon, args: readonly string[]): Promise<TestDaemon> {
  const again = await previous.restart(args);
  daemons.push(again);
  return again;
}

async function open(d: TestDaemon, path: string) {
  const opened = await d.connect({ channel: 'notebook', mode: 'open', path, peer_label: 'agent' });
  connections.push(opened.connection);
  return opened;
}

async function until<T>(read: () => T | Promise<T>, accept: (value: T) => boolean, what: string): Promise<T> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const value = await read();
    if (accept(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; last value: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

function sourcesOf(path: string): string[] {
  try {
    return NotebookDocument.fromIpynb(readFileSync(path, 'utf8'), path)
      .cells()
      .map((cell) => cell.source);
  } catch {
    return ['<unreadable>'];
  }
}

function cellSources(frame: RuntimedFrame): string[] {
  return (frame.cells as { source: string }[]).map((cell) => cell.source);
}

/** What another program (JupyterLab, git) does: rewrite the file with one more cell. */
function externalAppend(path: string, source: string): void {
  const document = NotebookDocument.fromIpynb(readFileSync(path, 'utf8'), path);
  document.insert({ source, cellType: 'code' });
  writeFileSync(path, document.toIpynb());
}

describe('runtimed durability (real process)', () => {
  it('keeps three acknowledged edits through a SIGKILL right after them, and saves them to the file', async () => {
    const d = await daemon(noAutosave);
    const path = join(d.dir, 'crash.ipynb');
    const { connection } = await open(d, path);
    const first = await connection.request({ type: 'insert_cell', source: 'a = 1' });
    await connection.request({ type: 'insert_cell', source: 'b = 2', idempotency_key: 'insert-b' });
    await connection.request({
      type: 'update_cell',
      cell_id: (first.cell as { id: string }).id,
      source: 'a = 10',
    });
    await d.kill();
    expect(sourcesOf(path)).toEqual([]);

    const again = await restart(d, fastAutosave);
    const { connection: back, greeting } = await open(again, path);
    expect(cellSources(greeting)).toEqual(['a = 10', 'b = 2']);
    await until(
      () => sourcesOf(path),
      (sources) => sources.join('|') === 'a = 10|b = 2',
      'the replayed edits in the file',
    );
    // The retried request (same key) is answered from the journal's ledger, not applied twice.
    await back.request({ type: 'insert_cell', source: 'b = 2', idempotency_key: 'insert-b' });
    expect(cellSources(await back.request({ type: 'get_cells' }))).toEqual(['a = 10', 'b = 2']);
    const journalDir = join(again.dataDir, 'journal');
    expect(statSync(journalDir).mode & 0o777).toBe(0o700);
    for (const name of readdirSync(journalDir)) expect(statSync(join(journalDir, name)).mode & 0o777).toBe(0o600);
  });

  it('writes journaled edits into the file at start-up, before anyone opens the notebook', async () => {
    const d = await daemon(noAutosave);
    const path = join(d.dir, 'unopened.ipynb');
    const { connection } = await open(d, path);
    await connection.request({ type: 'insert_cell', source: 'kept' });
    await d.kill();
    await restart(d, fastAutosave);
    expect(sourcesOf(path)).toEqual(['kept']);
  });

  it('keeps a 0600 notebook 0600 through autosave', async () => {
    const d = await daemon(fastAutosave);
    const path = join(d.dir, 'private.ipynb');
    writeFileSync(path, NotebookDocument.empty().toIpynb());
    chmodSync(path, 0o600);
    const { connection } = await open(d, path);
    await connection.request({ type: 'insert_cell', source: 'secret = 1' });
    await until(
      () => sourcesOf(path),
      (sources) => sources[0] === 'secret = 1',
      'the autosave',
    );
    expect(statSync(path).mode & 0o777).toBe(0o600);
  });

  it('an external edit of an open notebook survives the agent’s next edit', async () => {
    const d = await daemon(fastAutosave);
    const path = join(d.dir, 'shared.ipynb');
    const { connection } = await open(d, path);
    const made = await connection.request({ type: 'insert_cell', source: 'mine' });
    await until(
      () => sourcesOf(path),
      (sources) => sources.join('|') === 'mine',
      'the first autosave',
    );
    externalAppend(path, 'added in JupyterLab');
    await connection.request({
      type: 'update_cell',
      cell_id: (made.cell as { id: string }).id,
      source: 'mine, edited',
    });
    await until(
      () => sourcesOf(path),
      (sources) => sources.join('|') === 'mine, edited|added in JupyterLab',
      'both changes in the file',
    );
  });

  it('with unsaved agent edits: leaves the changed file as it is, saves a conflict copy, and tells the agent', async () => {
    const d = await daemon(noAutosave);
    const path = join(d.dir, 'busy.ipynb');
    const { connection } = await open(d, path);
    await connection.request({ type: 'insert_cell', source: 'unsaved agent edit' });
    externalAppend(path, 'git checkout');
    const external = readFileSync(path, 'utf8');
    const copies = await until(
      () => readdirSync(d.dir).filter((name) => name.startsWith('busy.nteract-conflict-')),
      (names) => names.length === 1 && sourcesOf(join(d.dir, names[0] ?? ''))[0] === 'unsaved agent edit',
      'the conflict copy',
    );
    const copy = join(d.dir, copies[0] ?? '');
    const refused = await connection.request({ type: 'insert_cell', source: 'next edit' }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(CoreError.is(refused) && refused.code).toBe('file_conflict');
    expect((refused as Error).message).toBe(
      `${path} was changed on disk by another program while this notebook had unsaved edits; the file was left as it is and your version was saved as ${copy}. Reconnect (connect_notebook with the path) to load the file, or save_notebook to overwrite it with your version.`,
    );
    const listed = (await d.control({ type: 'list_rooms' })).rooms as WireRoomInfo[];
    expect(listed[0]?.file_conflict).toBe((refused as Error).message);
    await d.stop(); // the final save must not overwrite the file either
    expect(readFileSync(path, 'utf8')).toBe(external);
  });
});
