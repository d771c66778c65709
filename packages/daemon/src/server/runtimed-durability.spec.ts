import { chmodSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RuntimedConnection, RuntimedFrame, WireRoomInfo } from '@nteract-mcp/runtimed-protocol';
import { RuntimedProtocolError } from '@nteract-mcp/runtimed-protocol';
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

async function until<T>(
  read: () => T | Promise<T>,
  accept: (value: T) => boolean,
  what: string,
  timeoutMs = 30_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
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

  it('journals a source edit (and its undo) without the cell’s outputs, and replays it onto them after a SIGKILL', async () => {
    const d = await daemon(noAutosave);
    const path = join(d.dir, 'outputs.ipynb');
    const printed = 'an output line of the run\n'.repeat(4000);
    const document = NotebookDocument.fromIpynb(
      JSON.stringify({
        nbformat: 4,
        nbformat_minor: 5,
        metadata: {},
        cells: [
          {
            id: 'run',
            cell_type: 'code',
            source: 'v0',
            execution_count: 3,
            metadata: {},
            outputs: [{ output_type: 'stream', name: 'stdout', text: printed }],
          },
        ],
      }),
      path,
    );
    writeFileSync(path, document.toIpynb());
    const opened = await d.connect({
      channel: 'notebook',
      mode: 'open',
      path,
      peer_label: 'agent',
      source_edits: true,
    });
    connections.push(opened.connection);
    const edit = (source: string, key: string) =>
      opened.connection.request({ type: 'update_cell', cell_id: 'run', source, idempotency_key: key });
    for (let n = 1; n <= 5; n++) await edit(`v${n}`, `edit-${n}`);
    await opened.connection.request({ type: 'undo', idempotency_key: 'undo-1' });
    const journal = readFileSync(join(d.dataDir, 'journal', `${opened.greeting.notebook_id}.jsonl`), 'utf8');
    const records = journal.trim().split('\n').slice(1);
    expect(records).toHaveLength(6);
    for (const record of records) expect(record).toContain('"op":"source"');
    // Six edits with their ledger entries: a few hundred bytes each, the outputs in none of them.
    expect(journal).not.toContain('an output line of the run');
    expect(Buffer.byteLength(journal)).toBeLessThan(printed.length / 10);
    await d.kill();

    const again = await restart(d, noAutosave);
    const back = await again.connect({ channel: 'notebook', mode: 'open', path, peer_label: 'agent' });
    connections.push(back.connection);
    expect(back.greeting.cells).toEqual([
      expect.objectContaining({
        id: 'run',
        source: 'v4',
        edited_by: 'agent',
        execution_count: 3,
        outputs: [{ output_type: 'stream', name: 'stdout', text: printed }],
      }),
    ]);
    // The retried edit is answered from the journal's ledger, in the form this (older) peer reads.
    const retried = await back.connection.request({
      type: 'update_cell',
      cell_id: 'run',
      source: 'v2',
      idempotency_key: 'edit-2',
    });
    expect(retried.cell).toMatchObject({ source: 'v2', outputs: [{ text: printed }] });
    expect(
      ((await back.connection.request({ type: 'get_cell', cell_id: 'run' })).cell as { source: string }).source,
    ).toBe('v4');
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
    expect(RuntimedProtocolError.is(refused) && refused.code).toBe('file_conflict');
    expect((refused as Error).message).toBe(
      `${path} was changed on disk by another program while this notebook had unsaved edits; the file was left as it is and your version was saved as ${copy}. Reconnect (connect_notebook with the path) to load the file, or save_notebook to overwrite it with your version.`,
    );
    const listed = (await d.control({ type: 'list_rooms' })).rooms as WireRoomInfo[];
    expect(listed[0]?.file_conflict).toBe((refused as Error).message);
    await d.stop(); // the final save must not overwrite the file either
    expect(readFileSync(path, 'utf8')).toBe(external);
  });
});

describe('runtimed kernel keep-alive: vanished vs clean peers (real ipykernel kernels)', () => {
  async function openWithKernel(d: TestDaemon, path: string) {
    const opened = await open(d, path);
    await until(
      async () => ((await opened.connection.request({ type: 'get_runtime' })).runtime as { state: string }).state,
      (state) => state === 'ready',
      `a kernel for ${path}`,
    );
    return opened;
  }

  async function run(connection: RuntimedConnection, source: string): Promise<string> {
    const { cell } = (await connection.request({ type: 'insert_cell', source })) as { cell: { id: string } };
    const started = await connection.request({ type: 'execute_cell', cell_id: cell.id });
    const done = await until(
      () => connection.request({ type: 'get_execution', execution_id: started.execution_id }),
      (execution) => execution.status !== 'queued' && execution.status !== 'running',
      `execution of ${source}`,
    );
    return (done.outputs as { output_type: string; text?: string }[])
      .filter((output) => output.output_type === 'stream')
      .map((output) => output.text)
      .join('');
  }

  it('keeps a vanished peer’s kernel (and its variables) past the normal keep-alive; a clean leave gets the normal one', {
    timeout: 180_000,
  }, async () => {
    const d = await daemon([
      '--keep-alive-ms',
      '300',
      '--vanished-keep-alive-ms',
      '15000',
      '--autosave-debounce-ms',
      '20',
      '--autosave-max-ms',
      '100',
    ]);
    const { connection: control } = await d.connect({ channel: 'control' });
    connections.push(control);
    const events: RuntimedFrame[] = [];
    control.onFrame((frame) => events.push(frame));
    await control.request({ type: 'subscribe' });
    const stoppedEvents = (notebookId: unknown) =>
      events.filter(
        (frame) =>
          frame.event === 'kernel_status' &&
          frame.notebook_id === notebookId &&
          (frame.runtime as { state: string }).state === 'stopped',
      );

    const crashPath = join(d.dir, 'crashed-child.ipynb');
    const crashing = await openWithKernel(d, crashPath);
    await run(crashing.connection, 'x = 41');
    const leaving = await openWithKernel(d, join(d.dir, 'clean-exit.ipynb'));
    const crashedId = crashing.greeting.notebook_id;
    const leftId = leaving.greeting.notebook_id;

    crashing.connection.close(); // the connection ends without `leave`: a crashed child
    await until(
      () => events.filter((frame) => frame.event === 'peer_left' && frame.notebook_id === crashedId),
      (left) => left.length === 1 && left[0]?.departure === 'vanished',
      'the vanished peer_left',
    );
    expect(await leaving.connection.request({ type: 'leave' })).toMatchObject({ left: true });
    await until(
      () => stoppedEvents(leftId),
      (stopped) => stopped.length === 1,
      'the clean room’s kernel to stop',
    );

    // The clean keep-alive has run out, the vanished one has not: the restarted child finds its kernel.
    expect(stoppedEvents(crashedId)).toEqual([]);
    const rooms = (await d.control({ type: 'list_rooms' })).rooms as WireRoomInfo[];
    expect(rooms.find((room) => room.notebook_id === crashedId)?.has_kernel).toBe(true);
    const rejoined = await openWithKernel(d, crashPath);
    expect(await run(rejoined.connection, 'print(x + 1)')).toBe('42\n');

    // And it does end: vanished again, the kernel stops after the longer keep-alive.
    rejoined.connection.close();
    await until(
      () => stoppedEvents(crashedId),
      (stopped) => stopped.length === 1,
      'the vanished room’s kernel to stop',
      90_000,
    );
  });
});
