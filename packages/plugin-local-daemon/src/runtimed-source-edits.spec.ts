import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DaemonPort, Logger } from '@nteract-mcp/core';
import { createTestContainer, RecordingLogger } from '@nteract-mcp/core/testing';
import type { RuntimedFrame } from '@nteract-mcp/runtimed-protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { createLocalDaemonPlugin } from './create-local-daemon-plugin.js';
import { RuntimedNotebookHandle } from './runtimed-notebook-handle.js';
import { type ScriptedPeer, scriptedRuntimedDaemon } from './testing/scripted-runtimed-daemon.js';

// The handle declares `source_edits` and applies them to its copy of the cells: a source edit
// (another peer's broadcast, or the answer to its own edit) carries no outputs, and the copy keeps
// the ones it holds.

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const outputs = [{ output_type: 'stream', name: 'stdout', text: 'a long run printed this\n' }];
const ran = { id: 'a', cell_type: 'code', source: 'run()', outputs, execution_count: 7, metadata: { tags: ['t'] } };

/** A handle on a scripted daemon holding {@link ran} at version 3; `answer` answers each edit request. */
async function handleOn(
  answer: (request: RuntimedFrame, connection: ScriptedPeer) => void,
): Promise<{ handle: RuntimedNotebookHandle; daemon: () => ScriptedPeer; requests: RuntimedFrame[] }> {
  const dir = mkdtempSync(join(tmpdir(), 'rtd-source-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  let peer: ScriptedPeer | undefined;
  const daemon = await scriptedRuntimedDaemon(join(dir, 'd.sock'), {
    onHandshake: (connection) => {
      peer = connection;
      connection.send({
        type: 'connected',
        notebook_id: '0b9f2c44-5d1e-4a7b-9c3d-2e8f6a1b7c90',
        notebook_path: '/abs/a.ipynb',
        ephemeral: false,
        document_version: 3,
        cells: [ran],
        runtime: { state: 'ready', kernel_status: 'idle' },
        peer_id: 'p1',
        daemon_pid: 4242,
        daemon_started_at: '2026-01-01T00:00:00.000Z',
      });
    },
    onRequest: (request, connection) => {
      const id = request.id as number;
      if (request.type === 'get_runtime')
        connection.send({ type: 'ok', id, runtime: { state: 'ready', kernel_status: 'idle' } });
      else if (request.type === 'get_cells') connection.send({ type: 'ok', id, document_version: 3, cells: [ran] });
      else answer(request, connection);
    },
  });
  cleanups.push(() => daemon.stop());
  const port = createTestContainer({ plugins: [createLocalDaemonPlugin({ socketPath: join(dir, 'd.sock') })] })
    .override(Logger, new RecordingLogger())
    .build()
    .get(DaemonPort);
  const handle = await port.openNotebook('/abs/a.ipynb', { peerLabel: 'agent:unit:1' });
  cleanups.push(() => handle.close());
  if (!(handle instanceof RuntimedNotebookHandle)) throw new Error('the port made another kind of handle');
  await handle.listCells();
  return { handle, daemon: () => peer as ScriptedPeer, requests: daemon.requests };
}

describe('source edits in the runtimed notebook handle', () => {
  it("applies another peer's cell_source_set to its copy, keeping the cell's outputs, count and metadata", async () => {
    const { handle, daemon } = await handleOn(() => undefined);
    const told: string[] = [];
    handle.onDidChangeCells((change) => told.push(`${change.kind} ${change.cellId}`));
    daemon().send({
      type: 'broadcast',
      event: 'cell_source_set',
      document_version: 4,
      cell: { id: 'a', cell_type: 'code', source: 'run(fast=True)', version: 'v4', edited_by: 'human:Ada' },
    });
    await expect.poll(() => told).toEqual(['updated a']);
    expect(await handle.getCell('a')).toEqual({
      id: 'a',
      cellType: 'code',
      source: 'run(fast=True)',
      outputs,
      executionCount: 7,
      metadata: { tags: ['t'] },
      version: 'v4',
      editedBy: 'human:Ada',
    });
  });

  it('answers its own source edit with the cell as the edit left it, outputs from its copy (none travelled)', async () => {
    const { handle, requests } = await handleOn((request, connection) => {
      if (request.type !== 'update_cell') return;
      connection.send({
        type: 'ok',
        id: request.id as number,
        document_version: 4,
        cell_source: { id: 'a', cell_type: 'code', source: request.source, version: 'v4', edited_by: 'agent:unit:1' },
      });
    });
    const updated = await handle.updateCell('a', { source: 'run(2)' });
    expect(updated).toMatchObject({ id: 'a', source: 'run(2)', outputs, executionCount: 7, version: 'v4' });
    expect((await handle.listCells())[0]).toMatchObject({ source: 'run(2)', outputs, version: 'v4' });
    // Its copy held the cell: nothing was read again.
    expect(requests.filter((request) => request.type === 'get_cell' || request.type === 'get_cells')).toHaveLength(1);
  });

  it('reads the cell when its copy is stale, and still takes a whole cell from a daemon before source edits', async () => {
    let answerWhole = false;
    const { handle, requests } = await handleOn((request, connection) => {
      const id = request.id as number;
      if (request.type === 'get_cell') {
        connection.send({ type: 'ok', id, cell: { ...ran, source: 'run(3)', version: 'v9' } });
      } else if (request.type === 'update_cell' && answerWhole) {
        connection.send({ type: 'ok', id, document_version: 10, cell: { ...ran, source: 'whole', outputs: [] } });
      } else if (request.type === 'update_cell') {
        // Version 4 went to someone else and was missed: the copy cannot place version 9.
        connection.send({
          type: 'ok',
          id,
          document_version: 9,
          cell_source: { id: 'a', cell_type: 'code', source: 'run(3)', version: 'v9' },
        });
      }
    });
    const updated = await handle.updateCell('a', { source: 'run(3)' });
    expect(updated).toMatchObject({ source: 'run(3)', outputs, executionCount: 7, version: 'v9' });
    expect(requests.filter((request) => request.type === 'get_cell')).toHaveLength(1);
    answerWhole = true;
    expect(await handle.updateCell('a', { source: 'whole' })).toMatchObject({ source: 'whole', outputs: [] });
  });
});
