import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ChildServerTestHarness, startChildServerTestHarness } from '@nteract-mcp/core/testing';
import type { RuntimedFrame } from '@nteract-mcp/runtimed-protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { createLocalDaemonPlugin } from './create-local-daemon-plugin.js';
import { type ScriptedPeer, scriptedRuntimedDaemon } from './testing/scripted-runtimed-daemon.js';

/*
 * How many requests a tool call costs the daemon, through the whole child (tools, change notes,
 * the real RuntimedNotebookHandle) over a scripted daemon: a lone agent's calls ask only what the
 * tool needs; another peer's change costs one `get_changes`, at the next call.
 */

const notebookId = '0b9f2c44-5d1e-4a7b-9c3d-2e8f6a1b7c90';
const startedAt = '2026-01-01T00:00:00.000Z';
const hello = { type: 'hello', pid: 4242, started_at: startedAt, version: '9.9.9', protocol_version: 1 };

function wireCell(id: string, source: string, version: string): RuntimedFrame {
  return { id, cell_type: 'code', source, outputs: [], execution_count: null, metadata: {}, version };
}

/**
 * One notebook room, as the daemon keeps it for this test: cells by id, a document version that
 * every change raises, a change log (`l.<version>` cursors), and a kernel that prints `out` once.
 */
class ScriptedRoom {
  public version = 0;
  public readonly cells: RuntimedFrame[] = [];
  public readonly log: Record<string, unknown>[] = [];
  public notebookPeer: ScriptedPeer | undefined;
  /** Notebook-channel requests, by type, in arrival order. */
  public readonly requests: string[] = [];
  #executions = 0;

  public answer(request: RuntimedFrame, peer: ScriptedPeer): void {
    this.requests.push(String(request.type));
    const id = request.id as number;
    if (request.type === 'execute_cell') this.execute(String(request.cell_id), id, peer);
    else peer.send({ type: 'ok', id, ...this.answerFields(request) });
  }

  /** What the answer to `request` carries besides its type and id. */
  private answerFields(request: RuntimedFrame): Record<string, unknown> {
    switch (request.type) {
      case 'get_runtime':
        return { runtime: { state: 'ready', kernel_status: 'idle' } };
      case 'get_cells':
        return { document_version: this.version, cells: this.cells };
      case 'get_changes': {
        const after = typeof request.since === 'string' ? Number(request.since.slice(2)) : 0;
        const changes = this.log.filter((change) => (change.document_version as number) > after);
        return { cursor: `l.${this.version}`, changes, complete: true };
      }
      case 'insert_cell': {
        const cell = wireCell(`c${this.cells.length + 1}`, String(request.source), `v${this.version + 1}`);
        const index = this.cells.push(cell) - 1;
        this.record('agent:claude-code:feedc0de', 'inserted', String(cell.id));
        return { cell, index, document_version: this.version };
      }
      case 'update_cell': {
        const at = this.cells.findIndex((cell) => cell.id === request.cell_id);
        const cell = { ...this.cells[at], source: String(request.source), version: `v${this.version + 1}` };
        this.cells[at] = cell;
        this.record('agent:claude-code:feedc0de', 'edited', String(request.cell_id));
        return { cell, document_version: this.version };
      }
      default:
        throw new Error(`the scripted room does not answer ${String(request.type)}`);
    }
  }

  /** Another peer (a person in the live page) edits a cell: broadcast to this peer, logged. */
  public editAsPerson(cellId: string, source: string): void {
    const at = this.cells.findIndex((cell) => cell.id === cellId);
    const cell = { ...this.cells[at], source, version: `v${this.version + 1}`, edited_by: 'human:ada' };
    this.cells[at] = cell;
    this.record('human:ada', 'edited', cellId);
    this.notebookPeer?.send({ type: 'broadcast', event: 'cell_updated', document_version: this.version, cell });
  }

  /** Another peer runs a cell: its output edit and its end are broadcast to this peer, its run logged. */
  public runAsPerson(cellId: string): void {
    this.notebookPeer?.send(...this.run(cellId, 'human:ada'));
  }

  /** Answers `queued`, then (as the kernel runs) one output edit and the end, each a document version. */
  private execute(cellId: string, id: number, peer: ScriptedPeer): void {
    const frames = this.run(cellId, 'agent:claude-code:feedc0de');
    const execution = { execution_id: `e${this.#executions}`, cell_id: cellId };
    peer.send({ type: 'ok', id, ...execution, status: 'queued', outputs: [], execution_count: null });
    setTimeout(() => peer.send(...frames), 5);
  }

  /** A run of `cellId` by `by`, ended: its output edit and end broadcasts (the document moved by both), logged. */
  private run(cellId: string, by: string): RuntimedFrame[] {
    this.#executions += 1;
    const execution = { execution_id: `e${this.#executions}`, cell_id: cellId };
    const output = { output_type: 'stream', name: 'stdout', text: 'out\n' };
    this.version += 1;
    const set = { event: 'output_set', document_version: this.version, ...execution, seq: 1, index: 0, output };
    this.version += 1;
    const done = {
      event: 'execution_done',
      ...execution,
      status: 'ok',
      execution_count: this.#executions,
      document_version: this.version,
      output_events: 1,
    };
    this.log.push({ document_version: this.version, at: startedAt, by, kind: 'ran', cell_id: cellId, status: 'ok' });
    return [
      { type: 'broadcast', ...set },
      { type: 'broadcast', ...done },
    ];
  }

  private record(by: string, kind: string, cellId: string): void {
    this.version += 1;
    this.log.push({ document_version: this.version, at: startedAt, by, kind, cell_id: cellId });
  }
}

describe('daemon round trips of a tool call (whole child, scripted daemon)', () => {
  let harness: ChildServerTestHarness | undefined;
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    await harness?.close();
    harness = undefined;
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  async function connected(): Promise<ScriptedRoom> {
    const dir = mkdtempSync(join(tmpdir(), 'rtd-trips-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const socketPath = join(dir, 'd.sock');
    const room = new ScriptedRoom();
    const daemon = await scriptedRuntimedDaemon(socketPath, {
      onHandshake: (peer) => {
        if (peer.handshake.channel !== 'notebook') return peer.send(hello);
        room.notebookPeer = peer;
        peer.send({
          type: 'connected',
          notebook_id: notebookId,
          notebook_path: null,
          ephemeral: true,
          document_version: room.version,
          cells: room.cells,
          runtime: { state: 'ready', kernel_status: 'idle' },
          peer_id: 'p1',
          daemon_pid: 4242,
          daemon_started_at: startedAt,
        });
      },
      onRequest: (request, peer) => {
        if (peer.handshake.channel === 'notebook') room.answer(request, peer);
        // The live page's address, asked by connect_notebook: this daemon serves none.
        else if (request.type === 'get_page') peer.send({ type: 'ok', id: request.id as number, url: null });
      },
    });
    cleanups.push(() => daemon.stop());
    harness = await startChildServerTestHarness({
      daemon: false,
      plugins: [createLocalDaemonPlugin({ socketPath, autoStart: false, heartbeatMs: 60_000 })],
    });
    await harness.callJson('connect_notebook', { notebook_id: notebookId });
    room.requests.splice(0);
    return room;
  }

  /** The notebook-channel requests `call` made (once its answer came). */
  async function requestsOf(room: ScriptedRoom, call: () => Promise<unknown>): Promise<string[]> {
    room.requests.splice(0);
    await call();
    return room.requests.splice(0);
  }

  it('create_cell(and_run=true) of a lone agent: insert_cell and execute_cell, nothing else', async () => {
    const room = await connected();
    const call = () => (harness as ChildServerTestHarness).callJson('create_cell', { source: 'x', and_run: true });
    expect(await requestsOf(room, call)).toEqual(['insert_cell', 'execute_cell']);
    expect(await requestsOf(room, call)).toEqual(['insert_cell', 'execute_cell']);
  });

  it('set_cell of a lone agent: update_cell only', async () => {
    const room = await connected();
    const created = await (harness as ChildServerTestHarness).callJson('create_cell', { source: 'x' });
    const set = () =>
      (harness as ChildServerTestHarness).callJson('set_cell', { cell_id: created.cell_id, source: 'y' });
    expect(await requestsOf(room, set)).toEqual(['update_cell']);
    expect(await requestsOf(room, set)).toEqual(['update_cell']);
  });

  it("another peer's edit: one get_changes at the next call, which names it; none after", async () => {
    const room = await connected();
    const h = harness as ChildServerTestHarness;
    const created = await h.callJson('create_cell', { source: 'x' });
    room.editAsPerson(String(created.cell_id), 'by ada');
    await new Promise((resolve) => setTimeout(resolve, 50));
    room.requests.splice(0);
    const answer = await h.call('create_cell', { source: 'z' });
    expect(room.requests.splice(0)).toEqual(['insert_cell', 'get_changes']);
    const texts = (answer.content as { text?: string }[]).map((item) => item.text ?? '').join('\n');
    expect(texts).toContain(`Since your last call, human:ada edited cell ${created.cell_id}.`);
    expect(await requestsOf(room, () => h.callJson('create_cell', { source: 'w' }))).toEqual(['insert_cell']);
  });

  it("another peer's run (outputs and end of a run this child does not follow): one get_changes, which names it", async () => {
    const room = await connected();
    const h = harness as ChildServerTestHarness;
    const created = await h.callJson('create_cell', { source: 'x', and_run: true });
    room.runAsPerson(String(created.cell_id));
    await new Promise((resolve) => setTimeout(resolve, 50));
    room.requests.splice(0);
    const answer = await h.call('create_cell', { source: 'z' });
    expect(room.requests.splice(0)).toEqual(['insert_cell', 'get_changes']);
    const texts = (answer.content as { text?: string }[]).map((item) => item.text ?? '').join('\n');
    expect(texts).toContain(`Since your last call, human:ada ran cell ${created.cell_id} (ok).`);
    expect(texts).not.toContain('agent:claude-code');
  });
});
