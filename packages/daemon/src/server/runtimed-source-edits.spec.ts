import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RuntimedConnection, RuntimedFrame } from '@nteract-mcp/runtimed-protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { startTestDaemon, type TestDaemon } from '../testing/start-test-daemon.js';

// A real daemon: a source edit moves the source, not the cell's outputs, to every peer that declared
// `source_edits` in its handshake (the broadcast and the editing peer's own answer); every other peer
// is told, and answered, the whole cell as before.

const daemons: TestDaemon[] = [];
const connections: RuntimedConnection[] = [];

afterEach(async () => {
  for (const connection of connections.splice(0)) connection.close();
  for (const daemon of daemons.splice(0)) await daemon.dispose();
});

/** Text no frame about a source edit may carry to a peer that declared source edits. */
const printed = 'printed by the run '.repeat(2000);

/** A notebook file with one code cell (`plot`) whose output is {@link printed}. */
function notebookWithOutputs(path: string): void {
  writeFileSync(
    path,
    JSON.stringify({
      nbformat: 4,
      nbformat_minor: 5,
      metadata: {},
      cells: [
        {
          id: 'plot',
          cell_type: 'code',
          source: 'print(text)',
          execution_count: 1,
          metadata: { tags: ['kept'] },
          outputs: [{ output_type: 'stream', name: 'stdout', text: printed }],
        },
      ],
    }),
  );
}

/** A peer of `path`'s room (declaring source edits or not), with every broadcast it is sent. */
async function joinRoom(daemon: TestDaemon, path: string, label: string, sourceEdits: boolean) {
  const { connection } = await daemon.connect({
    channel: 'notebook',
    mode: 'open',
    path,
    peer_label: label,
    ...(sourceEdits ? { source_edits: true as const } : {}),
  });
  connections.push(connection);
  const broadcasts: RuntimedFrame[] = [];
  connection.onFrame((frame) => {
    if (frame.type === 'broadcast' && typeof frame.document_version === 'number') broadcasts.push(frame);
  });
  return { connection, broadcasts };
}

describe('source edits on the notebook wire', () => {
  it('tells a source edit as cell_source_set to peers that declared source edits and as cell_updated, whole, to the others', async () => {
    const daemon = await startTestDaemon(['--no-kernels']);
    daemons.push(daemon);
    const path = join(daemon.dir, 'outputs.ipynb');
    notebookWithOutputs(path);
    const editor = await joinRoom(daemon, path, 'agent:editor:1', true);
    const reader = await joinRoom(daemon, path, 'agent:reader:1', true);
    const older = await joinRoom(daemon, path, 'agent:older:1', false);

    const answer = await editor.connection.request({ type: 'update_cell', cell_id: 'plot', source: 'print(text * 2)' });
    expect(answer.cell).toBeUndefined();
    expect(answer.cell_source).toEqual({
      id: 'plot',
      cell_type: 'code',
      source: 'print(text * 2)',
      version: expect.any(String),
      edited_by: 'agent:editor:1',
    });
    const version = answer.document_version as number;
    await expect.poll(() => reader.broadcasts.length).toBe(1);
    await expect.poll(() => older.broadcasts.length).toBe(1);
    expect(reader.broadcasts[0]).toEqual({
      type: 'broadcast',
      event: 'cell_source_set',
      document_version: version,
      cell: answer.cell_source,
    });
    expect(JSON.stringify(reader.broadcasts[0])).not.toContain('printed by the run');
    expect(older.broadcasts[0]).toMatchObject({
      event: 'cell_updated',
      document_version: version,
      cell: {
        ...(answer.cell_source as object),
        outputs: [{ output_type: 'stream', name: 'stdout', text: printed }],
        execution_count: 1,
        metadata: { tags: ['kept'] },
      },
    });
    expect(editor.broadcasts).toEqual([]);

    // A peer that did not declare them is answered the whole cell, and its edit is told the same way.
    const olderAnswer = await older.connection.request({ type: 'update_cell', cell_id: 'plot', source: 'print(1)' });
    expect(olderAnswer.cell_source).toBeUndefined();
    expect(olderAnswer.cell).toMatchObject({ source: 'print(1)', outputs: [{ text: printed }] });
    await expect.poll(() => editor.broadcasts.length).toBe(1);
    expect(editor.broadcasts[0]).toMatchObject({ event: 'cell_source_set', cell: { source: 'print(1)' } });
    expect(editor.broadcasts[0]?.cell).not.toHaveProperty('outputs');

    // An undo of a source edit is a source edit.
    await editor.connection.request({ type: 'update_cell', cell_id: 'plot', source: 'print(2)' });
    await editor.connection.request({ type: 'undo' });
    await expect.poll(() => reader.broadcasts.length).toBe(4);
    expect(reader.broadcasts[3]).toMatchObject({ event: 'cell_source_set', cell: { source: 'print(1)' } });
    expect(reader.broadcasts[3]?.cell).not.toHaveProperty('outputs');
    await expect.poll(() => older.broadcasts.length).toBe(3);
    expect(older.broadcasts[2]).toMatchObject({
      event: 'cell_updated',
      cell: { source: 'print(1)', outputs: [{ text: printed }] },
    });

    // A change of type clears the outputs: told whole to everyone, answered whole.
    const retyped = await editor.connection.request({ type: 'update_cell', cell_id: 'plot', cell_type: 'markdown' });
    expect(retyped.cell).toMatchObject({ cell_type: 'markdown', outputs: [] });
    await expect.poll(() => reader.broadcasts.length).toBe(5);
    expect(reader.broadcasts[4]).toMatchObject({ event: 'cell_updated', cell: { cell_type: 'markdown', outputs: [] } });
  });

  it('answers a replayed source edit in the form the asking peer reads', async () => {
    const daemon = await startTestDaemon(['--no-kernels']);
    daemons.push(daemon);
    const path = join(daemon.dir, 'replayed.ipynb');
    notebookWithOutputs(path);
    const editor = await joinRoom(daemon, path, 'agent:editor:1', true);
    const older = await joinRoom(daemon, path, 'agent:editor:1', false);
    const edit = { type: 'update_cell', cell_id: 'plot', source: 'once', idempotency_key: 'edit-once' } as const;
    const first = await editor.connection.request(edit);
    expect(first).toMatchObject({ cell_source: { source: 'once' } });
    expect(first).not.toHaveProperty('cell');
    await editor.connection.request({ type: 'update_cell', cell_id: 'plot', source: 'later' });
    expect(await editor.connection.request(edit)).toEqual({ ...first, id: expect.any(Number) });
    const replayed = await older.connection.request(edit);
    expect(replayed.document_version).toBe(first.document_version);
    expect(replayed.cell).toMatchObject({ source: 'once', outputs: [{ text: printed }], metadata: { tags: ['kept'] } });
    expect((await older.connection.request({ type: 'get_cell', cell_id: 'plot' })).cell).toMatchObject({
      source: 'later',
    });
  });
});
