import {
  chmodSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ManualClock, RecordingLogger } from '@nteract-mcp/foundation/testing';
import { type NbformatOutput, OutputsDocument } from '@nteract-mcp/output-shaping';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { DaemonError } from '../daemon-error.js';
import { NotebookDocument } from '../document/notebook-document.js';
import { BlobText } from '../persistence/blob-text.js';
import { NotebookRegistry } from '../persistence/notebook-registry.js';
import { OutputBlobStore } from '../persistence/output-blob-store.js';
import { RoomJournal } from '../persistence/room-journal.js';
import { UntitledStore } from '../persistence/untitled-store.js';
import type { KernelLauncher } from './kernel-launcher.js';
import type { NotebookRoom, RoomPeer } from './notebook-room.js';
import { RoomCatalog } from './room-catalog.js';
import { defaultInputWaitMs } from './room-inputs.js';

const noKernels: KernelLauncher = { launch: async () => ({ kind: 'unavailable', reason: 'no kernels in this test' }) };

/** A kernel that prints its code back, with execution count 7. */
const echoKernels: KernelLauncher = {
  launch: async () => ({
    kind: 'started',
    kernel: {
      pid: 1,
      status: 'idle',
      onStatus: () => ({ dispose: () => undefined }),
      onExit: () => ({ dispose: () => undefined }),
      execute: async (code, options) => {
        const output = { output_type: 'stream', name: 'stdout', text: `${code}\n` };
        options?.onOutput?.({ kind: 'output', index: 0, output }, [output]);
        return { status: 'ok', executionCount: 7, outputs: [output] };
      },
      interrupt: async () => 'nothing_running' as const,
      restart: async () => undefined,
      shutdown: async () => undefined,
    },
  }),
};
/** A kernel whose executions never finish (the daemon dies under them). */
const stuckKernels: KernelLauncher = {
  launch: async () => {
    const launched = await echoKernels.launch(dir);
    if (launched.kind !== 'started') return launched;
    return { kind: 'started', kernel: { ...launched.kernel, execute: () => new Promise(() => undefined) } };
  },
};
/** A kernel whose code asks for a line (when the execution answers input) and prints it. */
const askingKernels: KernelLauncher = {
  launch: async () => {
    const launched = await echoKernels.launch(dir);
    if (launched.kind !== 'started') return launched;
    return {
      kind: 'started',
      kernel: {
        ...launched.kernel,
        execute: async (_code, options) => {
          if (!options?.onInput) {
            const refused = { output_type: 'error', ename: 'StdinNotImplementedError', evalue: '', traceback: [] };
            return { status: 'error', executionCount: 1, outputs: [refused] };
          }
          const value = await options.onInput('name? ', false);
          return {
            status: 'ok',
            executionCount: 1,
            outputs: [{ output_type: 'stream', name: 'stdout', text: `hi ${value}\n` }],
          };
        },
      },
    };
  },
};
let launcher: KernelLauncher = noKernels;

let dir: string;
let clock: ManualClock;
const catalogs: RoomCatalog[] = [];

/** A catalog over `dir`, as one daemon life sees it (a second one on the same dir = after a crash). */
async function daemonLife(blobs?: OutputBlobStore): Promise<RoomCatalog> {
  const logger = new RecordingLogger();
  const catalog = new RoomCatalog({
    settings: {
      keepAliveMs: 1000,
      vanishedPeerKeepAliveMs: 5000,
      autosaveDebounceMs: 1000,
      autosaveMaxDelayMs: 5000,
      ledgerCapacity: 16,
      executionHistory: 16,
      reaperIntervalMs: 60_000,
      roomTtlMs: 10_000,
      roomSoftCap: 8,
    },
    launcher,
    registry: await NotebookRegistry.load(join(dir, 'data', 'registry.json'), logger),
    untitled: new UntitledStore(join(dir, 'data', 'untitled')),
    journal: { dir: join(dir, 'data', 'journal'), fsync: false, maxBytes: 1 << 20, ...(blobs ? { blobs } : {}) },
    clock,
    logger,
    emit: () => undefined,
  });
  catalogs.push(catalog);
  return catalog;
}

function peer(label: string, received: Record<string, unknown>[] = []): RoomPeer {
  return {
    id: `${label}-${Math.random()}`,
    label,
    send: (frame) => received.push({ ...frame }),
    disconnect: () => undefined,
  };
}

async function join_(catalog: RoomCatalog, path: string, received?: Record<string, unknown>[]) {
  const { room, release } = await catalog.open(path);
  const p = peer('agent', received);
  room.addPeer(p);
  release();
  return { room, peer: p };
}

function sourcesOf(path: string): string[] {
  return NotebookDocument.fromIpynb(readFileSync(path, 'utf8'), path)
    .cells()
    .map((cell) => cell.source);
}

/** Lets the room's async save (started by a timer) finish. */
async function saved(room: NotebookRoom): Promise<void> {
  clock.advance(5000);
  await room.flush();
}

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'room-'));
  clock = new ManualClock(Date.UTC(2026, 11, 1));
  launcher = noKernels;
});

afterEach(async () => {
  for (const catalog of catalogs.splice(0)) await catalog.closeAll('test over');
  rmSync(dir, { recursive: true, force: true });
});

describe('NotebookRoom journal', () => {
  it('brings back acknowledged edits the autosave never wrote, and the file gets them on the next save', async () => {
    const path = join(dir, 'a.ipynb');
    const first = await daemonLife();
    const { room, peer: p } = await join_(first, path);
    const made = await room.handle(p, { type: 'insert_cell', source: 'x = 1' });
    const cellId = (made.cell as { id: string }).id;
    await room.handle(p, { type: 'update_cell', cell_id: cellId, source: 'x = 2' });
    await room.handle(p, { type: 'insert_cell', source: '# note', cell_type: 'markdown', index: 0 });
    expect(sourcesOf(path)).toEqual([]); // the debounced autosave has not run: only the journal has them

    // A new daemon life on the same data dir (the first one "crashed": nothing was saved).
    const second = await daemonLife();
    const back = await join_(second, path);
    expect(back.room.cells().map((cell) => cell.source)).toEqual(['# note', 'x = 2']);
    await saved(back.room);
    expect(sourcesOf(path)).toEqual(['# note', 'x = 2']);
    const journal = RoomJournal.read(join(dir, 'data', 'journal'), back.room.notebookId);
    expect(typeof journal === 'object' && RoomJournal.hasEdits(journal)).toBe(false);
  });

  it('brings back the outputs and execution count an execution recorded in the document', async () => {
    launcher = echoKernels;
    const path = join(dir, 'x.ipynb');
    const first = await daemonLife();
    const received: Record<string, unknown>[] = [];
    const { room, peer: p } = await join_(first, path, received);
    const made = await room.handle(p, { type: 'insert_cell', source: 'hello' });
    await room.handle(p, { type: 'execute_cell', cell_id: (made.cell as { id: string }).id });
    await vi.waitFor(() => expect(received.some((frame) => frame.event === 'execution_done')).toBe(true));
    const second = await daemonLife();
    const back = await join_(second, path);
    expect(back.room.cells()[0]).toMatchObject({
      execution_count: 7,
      outputs: [{ output_type: 'stream', text: 'hello\n' }],
    });
  });

  it("answers a page of an execution's outputs instead of the outputs when asked, and an empty page past the end", async () => {
    launcher = echoKernels;
    const life = await daemonLife();
    const received: Record<string, unknown>[] = [];
    const { room, peer: p } = await join_(life, join(dir, 'page.ipynb'), received);
    const made = await room.handle(p, { type: 'insert_cell', source: 'hello' });
    const started = await room.handle(p, { type: 'execute_cell', cell_id: (made.cell as { id: string }).id });
    await vi.waitFor(() => expect(received.some((frame) => frame.event === 'execution_done')).toBe(true));
    const executionId = String(started.execution_id);
    const whole = await room.handle(p, { type: 'get_execution', execution_id: executionId });
    const document = new OutputsDocument(whole.outputs as NbformatOutput[]);
    const page = await room.handle(p, {
      type: 'get_execution',
      execution_id: executionId,
      outputs_page: { offset: 3, length: 10, budget_bytes: 100_000 },
    });
    expect(page).toEqual({ ...whole, outputs: [], outputs_page: document.page(3, 10, 100_000) });
    expect((page.outputs_page as { text: string }).text).toBe(document.text.slice(3, 13));
    const past = await room.handle(p, {
      type: 'get_execution',
      execution_id: executionId,
      outputs_page: { offset: document.text.length + 1, length: 10, budget_bytes: 100_000 },
    });
    expect(past.outputs_page).toEqual({
      offset: document.text.length + 1,
      length: 0,
      total_chars: document.text.length,
      text: '',
    });
  });

  it('tells an execution as output edits and an end that does not repeat them, and answers a retry of a finished one as it ended', async () => {
    launcher = echoKernels;
    const path = join(dir, 'done.ipynb');
    const life = await daemonLife();
    const received: Record<string, unknown>[] = [];
    const { room, peer: p } = await join_(life, path, received);
    const made = await room.handle(p, { type: 'insert_cell', source: 'hello' });
    const cellId = (made.cell as { id: string }).id;
    const started = await room.handle(p, { type: 'execute_cell', cell_id: cellId, idempotency_key: 'run-2' });
    expect(started.status).toBe('queued');
    await vi.waitFor(() => expect(received.some((frame) => frame.event === 'execution_done')).toBe(true));
    const done = received.find((frame) => frame.event === 'execution_done');
    const read = await room.handle(p, { type: 'get_execution', execution_id: String(started.execution_id) });
    // The edits and the end carry what a read would give: nobody needs to read.
    const edits = received.filter((frame) => frame.event === 'output_set');
    expect(edits).toEqual([
      expect.objectContaining({
        execution_id: started.execution_id,
        seq: 1,
        index: 0,
        output: (read.outputs as unknown[])[0],
      }),
    ]);
    expect(done).toMatchObject({
      execution_id: started.execution_id,
      status: read.status,
      execution_count: read.execution_count,
      output_events: 1,
    });
    expect(done).not.toHaveProperty('outputs');
    // Each change of the document is the next version: the edit, then the end's execution count.
    expect(done?.document_version).toBe(Number(edits[0]?.document_version) + 1);
    expect(read.outputs).toEqual([expect.objectContaining({ output_type: 'stream', text: 'hello\n' })]);
    // A retry of the same request, long after: the execution as it ended, not the first `queued`.
    const retried = await room.handle(p, { type: 'execute_cell', cell_id: cellId, idempotency_key: 'run-2' });
    expect(retried).toEqual(read);
  });

  it('answers a retried execution that the crash interrupted as aborted, saying why', async () => {
    launcher = stuckKernels;
    const path = join(dir, 'stuck.ipynb');
    const first = await daemonLife();
    const { room, peer: p } = await join_(first, path);
    const made = await room.handle(p, { type: 'insert_cell', source: 'while True: pass' });
    const cellId = (made.cell as { id: string }).id;
    const started = await room.handle(p, { type: 'execute_cell', cell_id: cellId, idempotency_key: 'run-1' });
    expect(started.status).toBe('queued');
    const second = await daemonLife();
    const back = await join_(second, path);
    const retried = await back.room.handle(back.peer, {
      type: 'execute_cell',
      cell_id: cellId,
      idempotency_key: 'run-1',
    });
    expect(retried).toMatchObject({ execution_id: started.execution_id, status: 'aborted' });
    const read = await back.room.handle(back.peer, {
      type: 'get_execution',
      execution_id: String(started.execution_id),
    });
    expect(read).toMatchObject({ status: 'aborted', outputs: [{ ename: 'DaemonRestarted' }] });
    // It had started in the kernel: the answer never says it did not run.
    const said = String((read.outputs as { evalue?: string }[])[0]?.evalue);
    expect(said).toContain('may have run in part or in full');
    expect(said).not.toContain('did not run');
  });

  it('says an execution still queued when the daemon stopped did not run', async () => {
    // The kernel does not start until the end of the test: the execution stays queued until the daemon stops.
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    launcher = { launch: (at) => gate.then(() => noKernels.launch(at)) };
    const path = join(dir, 'queued.ipynb');
    const first = await daemonLife();
    const { room, peer: p } = await join_(first, path);
    const made = await room.handle(p, { type: 'insert_cell', source: 'x = 1' });
    const cellId = (made.cell as { id: string }).id;
    const started = await room.handle(p, { type: 'execute_cell', cell_id: cellId, idempotency_key: 'run-q' });
    expect(started.status).toBe('queued');
    const second = await daemonLife();
    const back = await join_(second, path);
    const read = await back.room.handle(back.peer, {
      type: 'get_execution',
      execution_id: String(started.execution_id),
    });
    expect(read).toMatchObject({ status: 'aborted', outputs: [{ ename: 'DaemonRestarted' }] });
    expect(String((read.outputs as { evalue?: string }[])[0]?.evalue)).toContain('it did not run');
    release();
  });

  it('answers get_execution for a finished execution after a crash, and after a save rotated the journal', async () => {
    launcher = echoKernels;
    const path = join(dir, 'kept.ipynb');
    const first = await daemonLife();
    const received: Record<string, unknown>[] = [];
    const { room, peer: p } = await join_(first, path, received);
    const made = await room.handle(p, { type: 'insert_cell', source: 'print(42)' });
    const started = await room.handle(p, { type: 'execute_cell', cell_id: (made.cell as { id: string }).id });
    await vi.waitFor(() => expect(received.some((frame) => frame.event === 'execution_done')).toBe(true));
    const executionId = String(started.execution_id);
    const ended = await room.handle(p, { type: 'get_execution', execution_id: executionId });
    expect(ended).toMatchObject({ status: 'ok', execution_count: 7 });

    // The daemon dies (no save): a new daemon life answers it from the journal, as it ended.
    const second = await daemonLife();
    const back = await join_(second, path);
    expect(await back.room.handle(back.peer, { type: 'get_execution', execution_id: executionId })).toEqual(ended);

    // A save rotates the journal: the execution moves into its header and still answers.
    await saved(back.room);
    const third = await daemonLife();
    const again = await join_(third, path);
    expect(await again.room.handle(again.peer, { type: 'get_execution', execution_id: executionId })).toEqual(ended);
  });

  it('asks the executing peer for input(), again a peer of its label after it left, and gives the kernel the answer', async () => {
    launcher = askingKernels;
    const path = join(dir, 'ask.ipynb');
    const life = await daemonLife();
    const received: Record<string, unknown>[] = [];
    const other: Record<string, unknown>[] = [];
    const { room, peer: agent } = await join_(life, path, received);
    const bystander = peer('human:Ada', other);
    room.addPeer(bystander);
    const made = await room.handle(agent, { type: 'insert_cell', source: 'input()' });
    const cellId = (made.cell as { id: string }).id;

    // Without allow_input the code's input() raises, as before.
    const refused = await room.handle(agent, { type: 'execute_cell', cell_id: cellId });
    await vi.waitFor(async () =>
      expect(
        await room.handle(agent, { type: 'get_execution', execution_id: String(refused.execution_id) }),
      ).toMatchObject({ status: 'error' }),
    );

    const started = await room.handle(agent, { type: 'execute_cell', cell_id: cellId, allow_input: true });
    await vi.waitFor(() => expect(received.some((frame) => frame.event === 'input_request')).toBe(true));
    const asked = received.find((frame) => frame.event === 'input_request') as Record<string, unknown>;
    expect(asked).toMatchObject({
      execution_id: started.execution_id,
      cell_id: cellId,
      prompt: 'name? ',
      password: false,
    });
    // Only the peer that started it is asked.
    expect(other.some((frame) => frame.event === 'input_request')).toBe(false);

    // Its server restarts: the new peer of the same label is asked again and answers.
    room.removePeer(agent.id, 'vanished');
    const again: Record<string, unknown>[] = [];
    const back = peer('agent', again);
    room.addPeer(back);
    await vi.waitFor(() => expect(again.some((frame) => frame.event === 'input_request')).toBe(true));
    const reply = {
      type: 'input_reply',
      execution_id: String(started.execution_id),
      input_id: String(asked.input_id),
    } as const;
    expect(await room.handle(back, { ...reply, value: 'Ada' })).toEqual({ accepted: true });
    expect(await room.handle(back, { ...reply, value: 'twice' })).toEqual({ accepted: false });
    await vi.waitFor(async () =>
      expect(
        await room.handle(back, { type: 'get_execution', execution_id: String(started.execution_id) }),
      ).toMatchObject({
        status: 'ok',
        outputs: [{ text: 'hi Ada\n' }],
      }),
    );
  });

  it('keeps a scratch run started with start_code as an execution: read by id, journaled, no broadcast, no cell touched', async () => {
    launcher = echoKernels;
    const path = join(dir, 'scratch.ipynb');
    const first = await daemonLife();
    const received: Record<string, unknown>[] = [];
    const { room, peer: p } = await join_(first, path, received);
    await room.handle(p, { type: 'insert_cell', source: 'x = 1' });
    const started = await room.handle(p, { type: 'start_code', source: 'print(2)' });
    expect(started).toMatchObject({ cell_id: 'scratch', status: 'queued' });
    const executionId = String(started.execution_id);
    await vi.waitFor(async () =>
      expect(await room.handle(p, { type: 'get_execution', execution_id: executionId })).toMatchObject({
        status: 'ok',
        outputs: [{ text: 'print(2)\n' }],
      }),
    );
    expect(received.some((frame) => frame.event === 'execution_done' || frame.event === 'execution_output')).toBe(
      false,
    );
    expect(room.cells()[0]).toMatchObject({ outputs: [], execution_count: null });
    const second = await daemonLife();
    const back = await join_(second, path);
    expect(await back.room.handle(back.peer, { type: 'get_execution', execution_id: executionId })).toMatchObject({
      status: 'ok',
    });
  });

  it('gives the kernel an empty line when nobody answers input() within the bound', async () => {
    launcher = askingKernels;
    const life = await daemonLife();
    const received: Record<string, unknown>[] = [];
    const { room, peer: p } = await join_(life, join(dir, 'unanswered.ipynb'), received);
    const made = await room.handle(p, { type: 'insert_cell', source: 'input()' });
    const started = await room.handle(p, {
      type: 'execute_cell',
      cell_id: (made.cell as { id: string }).id,
      allow_input: true,
    });
    await vi.waitFor(() => expect(received.some((frame) => frame.event === 'input_request')).toBe(true));
    clock.advance(defaultInputWaitMs);
    await vi.waitFor(async () =>
      expect(await room.handle(p, { type: 'get_execution', execution_id: String(started.execution_id) })).toMatchObject(
        { status: 'ok', outputs: [{ text: 'hi \n' }] },
      ),
    );
  });

  it('runs an execution queued with run_after only when the one it names ended ok', async () => {
    launcher = askingKernels;
    const life = await daemonLife();
    const { room, peer: p } = await join_(life, join(dir, 'after.ipynb'));
    const made = await room.handle(p, { type: 'insert_cell', source: 'input()' });
    const cellId = (made.cell as { id: string }).id;
    // Without allow_input the asking kernel's run ends `error`: the one after it is not run.
    const first = await room.handle(p, { type: 'execute_cell', cell_id: cellId });
    const second = await room.handle(p, {
      type: 'execute_cell',
      cell_id: cellId,
      run_after: String(first.execution_id),
    });
    await vi.waitFor(async () =>
      expect(await room.handle(p, { type: 'get_execution', execution_id: String(second.execution_id) })).toMatchObject({
        status: 'aborted',
        outputs: [{ ename: 'NotRun' }],
      }),
    );
  });

  it('still dedupes a request key after the replay', async () => {
    const path = join(dir, 'k.ipynb');
    const first = await daemonLife();
    const { room, peer: p } = await join_(first, path);
    const answer = await room.handle(p, { type: 'insert_cell', source: 'once', idempotency_key: 'key-1' });
    const second = await daemonLife();
    const back = await join_(second, path);
    const retried = await back.room.handle(back.peer, {
      type: 'insert_cell',
      source: 'once',
      idempotency_key: 'key-1',
    });
    expect(retried).toEqual(answer);
    expect(back.room.cells()).toHaveLength(1);
    // Also after a save rotated the journal (the ledger moves into its header).
    await saved(back.room);
    const third = await daemonLife();
    const again = await join_(third, path);
    await again.room.handle(again.peer, { type: 'insert_cell', source: 'once', idempotency_key: 'key-1' });
    expect(again.room.cells()).toHaveLength(1);
    await expect(
      again.room.handle(again.peer, { type: 'delete_cell', cell_id: 'nope', idempotency_key: 'key-1' }),
    ).rejects.toMatchObject({ kind: 'idempotencyConflict' });
  });

  it('sets a journal aside when the file was changed by another program while the daemon was down', async () => {
    const path = join(dir, 'm.ipynb');
    const first = await daemonLife();
    const { room, peer: p } = await join_(first, path);
    await room.handle(p, { type: 'insert_cell', source: 'lost?' });
    const external = NotebookDocument.empty();
    external.insert({ source: 'from JupyterLab', cellType: 'code' });
    writeFileSync(path, external.toIpynb());
    const second = await daemonLife();
    const back = await join_(second, path);
    expect(back.room.cells().map((cell) => cell.source)).toEqual(['from JupyterLab']);
    const aside = readdirSync(join(dir, 'data', 'journal')).filter((name) => name.includes('.unmatched.'));
    expect(aside).toHaveLength(1);
    const answer = await back.room.handle(back.peer, { type: 'insert_cell', source: 'next' });
    expect(answer.warning).toContain(aside[0]);
  });

  it('stops calling an untitled ephemeral notebook ephemeral once it is saved to a file', async () => {
    const catalog = await daemonLife();
    const { room, release } = await catalog.create({ runtime: 'python', workingDir: dir, ephemeral: true });
    const p = peer('agent');
    room.addPeer(p);
    release();
    expect(room.ephemeral).toBe(true);
    expect(room.info().ephemeral).toBe(true);
    await room.handle(p, { type: 'save', path: join(dir, 'kept.ipynb') });
    expect(room.ephemeral).toBe(false);
    expect(room.info().ephemeral).toBe(false);
  });

  it('replays a persisted untitled notebook from its store file', async () => {
    const first = await daemonLife();
    const { room, release } = await first.create({ runtime: 'python', workingDir: dir, ephemeral: false });
    const p = peer('agent');
    room.addPeer(p);
    release();
    await room.handle(p, { type: 'insert_cell', source: 'untitled edit' });
    const second = await daemonLife();
    const back = await second.attach(room.notebookId);
    back.release();
    expect(back.room.cells().map((cell) => cell.source)).toEqual(['untitled edit']);
  });
});

describe('NotebookRoom large outputs', () => {
  const blobStore = () => new OutputBlobStore({ dir: join(dir, 'data', 'blobs'), thresholdChars: 100, fsync: false });
  const outputsIn = (path: string) =>
    NotebookDocument.fromIpynb(readFileSync(path, 'utf8'), path)
      .cells()
      .map((cell) => cell.outputs);

  it("keeps a finished run's large output in a blob, answers peers with its text, pages it and saves it whole", async () => {
    launcher = echoKernels;
    const path = join(dir, 'large.ipynb');
    const blobs = blobStore();
    const life = await daemonLife(blobs);
    const received: Record<string, unknown>[] = [];
    const { room, peer: p } = await join_(life, path, received);
    const code = 'y'.repeat(300);
    const made = await room.handle(p, { type: 'insert_cell', source: code });
    const cellId = (made.cell as { id: string }).id;
    const started = await room.handle(p, { type: 'execute_cell', cell_id: cellId });
    await vi.waitFor(() => expect(received.some((frame) => frame.event === 'execution_done')).toBe(true));
    const text = room.cells()[0]?.outputs[0]?.text;
    expect(text).toBeInstanceOf(BlobText);
    expect(readdirSync(blobs.dir)).toContain((text as BlobText).sha);
    // What a peer receives (the wire is JSON): the text itself.
    const answer = JSON.parse(JSON.stringify(await room.handle(p, { type: 'get_cell', cell_id: cellId })));
    expect(answer.cell.outputs).toEqual([{ output_type: 'stream', name: 'stdout', text: `${code}\n` }]);
    const page = await room.handle(p, {
      type: 'get_execution',
      execution_id: String(started.execution_id),
      outputs_page: { offset: 290, length: 20, budget_bytes: 100_000 },
    });
    const inMemory = new OutputsDocument([{ output_type: 'stream', name: 'stdout', text: `${code}\n` }]);
    expect(page.outputs_page).toEqual(inMemory.page(290, 20, 100_000));
    await saved(room);
    expect(outputsIn(path)).toEqual([[{ output_type: 'stream', name: 'stdout', text: `${code}\n` }]]);
  });

  it("holds the blobs of an open room's outputs against every sweep, and lets them go when the room closes", async () => {
    const path = join(dir, 'loaded.ipynb');
    const big = 'z'.repeat(500);
    const file = NotebookDocument.empty();
    const { cell } = file.insert({ source: 'print(z)', cellType: 'code' });
    file.setExecutionState(cell.id, [{ output_type: 'display_data', data: { 'text/plain': big }, metadata: {} }], 1);
    writeFileSync(path, file.toIpynb());
    const blobs = blobStore();
    const life = await daemonLife(blobs);
    const { room } = await join_(life, path);
    const value = ((room.cells()[0]?.outputs[0]?.data ?? {}) as Record<string, unknown>)['text/plain'];
    expect(value).toBeInstanceOf(BlobText);
    // A daemon start's sweep (no journal names the blob: only the room does) leaves it.
    RoomJournal.sweepBlobs({ dir: join(dir, 'data', 'journal'), fsync: false, maxBytes: 1 << 20, blobs });
    expect((value as BlobText).text()).toBe(big);
    await life.closeAll('test over');
    expect(readdirSync(blobs.dir)).toEqual([]);
    expect(outputsIn(path)).toEqual([[{ output_type: 'display_data', data: { 'text/plain': big }, metadata: {} }]]);
  });
});

describe('NotebookRoom journal bounds', () => {
  it('saves at once when the journal outgrows its cap, which rotates it back to a header', async () => {
    const path = join(dir, 'big.ipynb');
    const catalog = await daemonLife();
    const { room, peer: p } = await join_(catalog, path);
    const made = await room.handle(p, { type: 'insert_cell', source: '' });
    const cellId = (made.cell as { id: string }).id;
    const journalFile = RoomJournal.fileOf(join(dir, 'data', 'journal'), room.notebookId);
    const big = 'y'.repeat(64 * 1024);
    for (let i = 0; i < 20; i++) await room.handle(p, { type: 'update_cell', cell_id: cellId, source: `${i}${big}` });
    // The clock never moves: only the cap can have made it save.
    await vi.waitFor(() => expect(sourcesOf(path)[0]).toMatch(/^\d+y/), { timeout: 10_000, interval: 20 });
    await vi.waitFor(() => expect(statSync(journalFile).size).toBeLessThan(1 << 20), { timeout: 10_000, interval: 20 });
  });
});

describe('NotebookRoom external changes', () => {
  function rewriteWithExtraCell(path: string, source: string): void {
    const document = NotebookDocument.fromIpynb(readFileSync(path, 'utf8'), path);
    document.insert({ source, cellType: 'code' });
    writeFileSync(path, document.toIpynb());
  }

  it('loads an external change when the room has no unsaved edits, tells the peers, and keeps both in the file', async () => {
    const path = join(dir, 'e.ipynb');
    const catalog = await daemonLife();
    const received: Record<string, unknown>[] = [];
    const { room, peer: p } = await join_(catalog, path);
    const watcher = peer('watcher', received);
    room.addPeer(watcher);
    const made = await room.handle(p, { type: 'insert_cell', source: 'mine' });
    await saved(room);
    rewriteWithExtraCell(path, 'theirs');
    await room.handle(p, { type: 'update_cell', cell_id: (made.cell as { id: string }).id, source: 'mine, edited' });
    await saved(room);
    expect(sourcesOf(path)).toEqual(['mine, edited', 'theirs']);
    expect(received.map((frame) => frame.event)).toContain('cell_inserted');
  });

  it('tells the peers when the file is replaced on disk and reloaded', async () => {
    const path = join(dir, 'r.ipynb');
    const catalog = await daemonLife();
    const received: Record<string, unknown>[] = [];
    const { room, peer: p } = await join_(catalog, path, received);
    await room.handle(p, { type: 'insert_cell', source: 'mine' });
    await saved(room);
    rewriteWithExtraCell(path, 'theirs');
    // The next edit sees it (the watcher may be slower than the test).
    await room.handle(p, { type: 'insert_cell', source: 'next' });
    const notices = received.filter((frame) => frame.event === 'notice').map((frame) => frame.message);
    expect(notices).toEqual([
      `${path} was replaced on disk by another program; the notebook was reloaded from it (2 cells now). Read the cells again before editing.`,
    ]);
  });

  it('tells the peers when the file is deleted, keeps the notebook, and writes the file back with the next edit', async () => {
    const path = join(dir, 'd.ipynb');
    const catalog = await daemonLife();
    const received: Record<string, unknown>[] = [];
    const { room, peer: p } = await join_(catalog, path, received);
    await room.handle(p, { type: 'insert_cell', source: 'mine' });
    await saved(room);
    rmSync(path);
    await room.handle(p, { type: 'insert_cell', source: 'after' });
    expect(room.conditions()).toEqual([
      expect.objectContaining({
        kind: 'file_missing',
        message: `${path} was deleted or moved away by another program. The daemon keeps this notebook, and the next edit or save_notebook writes it to ${path} again.`,
      }),
    ]);
    await saved(room);
    expect(sourcesOf(path)).toEqual(['mine', 'after']);
    expect(room.conditions()).toEqual([]);
    expect(received.filter((frame) => frame.event === 'notice').map((frame) => frame.message)).toContain(
      `${path} was written again with every edit.`,
    );
  });

  it('names where a renamed file went', async () => {
    const path = join(dir, 'old.ipynb');
    const catalog = await daemonLife();
    const { room, peer: p } = await join_(catalog, path);
    await room.handle(p, { type: 'insert_cell', source: 'mine' });
    await saved(room);
    const renamed = join(dir, 'new-name.ipynb');
    renameSync(path, renamed);
    await room.handle(p, { type: 'insert_cell', source: 'after' });
    expect(room.conditions()[0]?.message).toBe(
      `${path} was renamed to ${renamed} by another program. The daemon keeps this notebook, and the next edit or save_notebook writes it to ${path} again (connect_notebook(path='${renamed}') to follow the renamed file instead).`,
    );
  });

  it('judges a change made the moment our save is on disk, before the save has settled, as a change of a saved room', async () => {
    const path = join(dir, 'w.ipynb');
    const catalog = await daemonLife();
    const { room, peer: p } = await join_(catalog, path);
    const made = await room.handle(p, { type: 'insert_cell', source: 'mine' });
    const saving = room.flush();
    // Each turn of the loop, until our rename has happened (the save still has its directory fsync
    // and bookkeeping to do): the other program writes then, and the agent's next edit follows.
    while (sourcesOf(path).join('|') !== 'mine') await new Promise((resolve) => setImmediate(resolve));
    rewriteWithExtraCell(path, 'theirs');
    const edited = room.handle(p, {
      type: 'update_cell',
      cell_id: (made.cell as { id: string }).id,
      source: 'mine, edited',
    });
    await saving;
    await edited;
    await saved(room);
    expect(room.fileConflict).toBeUndefined();
    expect(sourcesOf(path)).toEqual(['mine, edited', 'theirs']);
  });

  it('with unsaved edits: leaves the file, writes the room version beside it (same mode), and says so', async () => {
    const path = join(dir, 'c.ipynb');
    const catalog = await daemonLife();
    const { room, peer: p } = await join_(catalog, path);
    await saved(room);
    chmodSync(path, 0o600);
    await room.handle(p, { type: 'insert_cell', source: 'unsaved' });
    rewriteWithExtraCell(path, 'theirs');
    const externalText = readFileSync(path, 'utf8');
    const refused = await room.handle(p, { type: 'insert_cell', source: 'more' }).catch((error: unknown) => error);
    expect(DaemonError.is(refused, 'fileConflict')).toBe(true);
    const message = (refused as Error).message;
    expect(message).toContain(`${path} was changed on disk by another program`);
    await saved(room);
    expect(readFileSync(path, 'utf8')).toBe(externalText);
    const copy = readdirSync(dir).find((name) => name.startsWith('c.nteract-conflict-'));
    expect(copy).toBeDefined();
    expect(message).toContain(join(dir, copy ?? ''));
    expect(sourcesOf(join(dir, copy ?? ''))).toEqual(['unsaved']);
    expect(statSync(join(dir, copy ?? '')).mode & 0o777).toBe(0o600);
    expect(room.info().file_conflict).toBe(message);

    // save_notebook overwrites with the room's version; reopening by path would have loaded the file.
    await room.handle(p, { type: 'save' });
    expect(sourcesOf(path)).toEqual(['unsaved']);
    expect(room.info().file_conflict).toBeUndefined();
  });

  it('re-checks the file right before an autosave: a change found there is not written over', async () => {
    const path = join(dir, 's.ipynb');
    const catalog = await daemonLife();
    const { room, peer: p } = await join_(catalog, path);
    chmodSync(path, 0o640);
    await room.handle(p, { type: 'insert_cell', source: 'unsaved' });
    rewriteWithExtraCell(path, 'theirs');
    const externalText = readFileSync(path, 'utf8');
    await saved(room);
    await room.flush();
    expect(readFileSync(path, 'utf8')).toBe(externalText);
    const copy = readdirSync(dir).find((name) => name.startsWith('s.nteract-conflict-'));
    expect(sourcesOf(join(dir, copy ?? 'missing'))).toEqual(['unsaved']);
    expect(statSync(join(dir, copy ?? 'missing')).mode & 0o777).toBe(0o640);
    expect(room.fileConflict).toContain(join(dir, copy ?? 'missing'));
  });

  it('a reconnect by path loads the file over a conflict', async () => {
    const path = join(dir, 'r.ipynb');
    const catalog = await daemonLife();
    const { room, peer: p } = await join_(catalog, path);
    await room.handle(p, { type: 'insert_cell', source: 'unsaved' });
    rewriteWithExtraCell(path, 'theirs');
    await expect(room.handle(p, { type: 'insert_cell', source: 'x' })).rejects.toMatchObject({ kind: 'fileConflict' });
    const again = await catalog.open(path);
    again.release();
    expect(again.room).toBe(room);
    expect(room.cells().map((cell) => cell.source)).toEqual(['theirs']);
    await room.handle(p, { type: 'insert_cell', source: 'after' });
    await saved(room);
    expect(sourcesOf(path)).toEqual(['theirs', 'after']);
  });
});

describe('NotebookRoom peers at work', () => {
  it('names the peer that last edited each cell, after a daemon crash too, and never in the file', async () => {
    const path = join(dir, 'authors.ipynb');
    const first = await daemonLife();
    const { room, peer: agent } = await join_(first, path);
    const ada = peer('human:Ada');
    room.addPeer(ada);
    const made = await room.handle(agent, { type: 'insert_cell', source: 'x = 1' });
    const cellId = (made.cell as { id: string }).id;
    expect(made.cell).toMatchObject({ edited_by: 'agent' });
    const edited = await room.handle(ada, { type: 'update_cell', cell_id: cellId, source: 'x = 2' });
    expect(edited.cell).toMatchObject({ edited_by: 'human:Ada' });
    await room.handle(agent, { type: 'insert_cell', source: 'y = 1' });

    // The first daemon life ends without a save: the journal brings the authors back.
    const second = await daemonLife();
    const back = await join_(second, path);
    expect(back.room.cells().map((cell) => [cell.source, cell.edited_by])).toEqual([
      ['x = 2', 'human:Ada'],
      ['y = 1', 'agent'],
    ]);
    await saved(back.room);
    expect(readFileSync(path, 'utf8')).not.toContain('human:Ada');
  });

  it('tells where each peer is and which cell each one runs or waits for', async () => {
    launcher = stuckKernels;
    const life = await daemonLife();
    const { room, peer: first } = await join_(life, join(dir, 'busy.ipynb'));
    const second = peer('agent:other:2');
    room.addPeer(second);
    const a = ((await room.handle(first, { type: 'insert_cell', source: 'forever()' })).cell as { id: string }).id;
    const b = ((await room.handle(second, { type: 'insert_cell', source: 'later()' })).cell as { id: string }).id;
    await room.handle(first, { type: 'execute_cell', cell_id: a });
    await room.handle(second, { type: 'execute_cell', cell_id: b });
    await vi.waitFor(() => expect(room.activity().executions).toEqual({ running: a, queued: [b] }));
    expect(room.activity().peers).toEqual([
      { peer_id: first.id, label: 'agent', cell_id: a, running_cell_id: a },
      { peer_id: second.id, label: 'agent:other:2', cell_id: b, running_cell_id: b },
    ]);
    // A deleted cell is nobody's place any more.
    await room.handle(second, { type: 'delete_cell', cell_id: b });
    expect(room.activity().peers[1]?.cell_id).toBeNull();
  });
});

describe('NotebookRoom edits of several peers', () => {
  async function twoPeers(name: string) {
    const path = join(dir, name);
    const life = await daemonLife();
    const { room, peer: agent } = await join_(life, path);
    const ada = peer('human:Ada');
    room.addPeer(ada);
    return { room, agent, ada, path, life };
  }
  const idOf = (answer: Record<string, unknown>) => (answer.cell as { id: string }).id;

  it('refuses a write against an older version of the cell, naming who changed it, and changes nothing', async () => {
    const { room, agent, ada } = await twoPeers('stale.ipynb');
    const cellId = idOf(await room.handle(agent, { type: 'insert_cell', source: 'x = 1' }));
    const read = (await room.handle(agent, { type: 'get_cell', cell_id: cellId })).cell as { version: string };
    await room.handle(ada, { type: 'update_cell', cell_id: cellId, source: 'x = 42  # Ada' });
    const stale = room.handle(agent, {
      type: 'update_cell',
      cell_id: cellId,
      source: 'x = 2',
      expected_version: read.version,
    });
    await expect(stale).rejects.toMatchObject({ kind: 'staleCell' });
    await expect(stale).rejects.toThrow(/human:Ada edited it[\s\S]*Its source now:\nx = 42 {2}# Ada$/);
    await expect(
      room.handle(agent, { type: 'delete_cell', cell_id: cellId, expected_version: read.version }),
    ).rejects.toMatchObject({ kind: 'staleCell' });
    expect(room.cells().map((cell) => cell.source)).toEqual(['x = 42  # Ada']);
    // Against the version it has now, the write goes through.
    const current = room.cells()[0]?.version as string;
    const written = await room.handle(agent, {
      type: 'update_cell',
      cell_id: cellId,
      source: 'x = 2',
      expected_version: current,
    });
    expect(written.cell).toMatchObject({ source: 'x = 2', edited_by: 'agent' });
    expect(written.replaced).toBeUndefined();
  });

  it('says when a write replaced a change another peer made after the version this peer saw', async () => {
    const { room, agent, ada } = await twoPeers('replaced.ipynb');
    const made = (await room.handle(agent, { type: 'insert_cell', source: 'a' })).cell as {
      id: string;
      version: string;
    };
    const own = await room.handle(agent, {
      type: 'update_cell',
      cell_id: made.id,
      source: 'b',
      seen_version: made.version,
    });
    expect(own.replaced).toBeUndefined();
    const seen = (own.cell as { version: string }).version;
    await room.handle(ada, { type: 'update_cell', cell_id: made.id, source: 'c by Ada' });
    const adaVersion = room.cells()[0]?.version;
    const over = await room.handle(agent, { type: 'update_cell', cell_id: made.id, source: 'd', seen_version: seen });
    expect(over.replaced).toEqual({ by: 'human:Ada', version: adaVersion });
  });

  it('lists what the peers did since a cursor, and says when a cursor is from another life', async () => {
    const { room, agent, ada, path } = await twoPeers('changes.ipynb');
    const start = (await room.handle(agent, { type: 'get_changes' })) as { cursor: string; changes: unknown[] };
    expect(start.changes).toEqual([]);
    const a = idOf(await room.handle(agent, { type: 'insert_cell', source: 'a' }));
    const b = idOf(await room.handle(ada, { type: 'insert_cell', source: 'b' }));
    await room.handle(ada, { type: 'update_cell', cell_id: a, source: 'a by Ada' });
    await room.handle(ada, { type: 'move_cell', cell_id: b, after_cell_id: null });
    await room.handle(ada, { type: 'delete_cell', cell_id: a });
    const since = (await room.handle(agent, { type: 'get_changes', since: start.cursor })) as {
      cursor: string;
      complete: boolean;
      changes: { by: string; kind: string; cell_id: string; index?: number }[];
    };
    expect(since.complete).toBe(true);
    expect(since.changes.map(({ by, kind, cell_id, index }) => [by, kind, cell_id, index])).toEqual([
      ['agent', 'inserted', a, 0],
      ['human:Ada', 'inserted', b, 1],
      ['human:Ada', 'edited', a, undefined],
      ['human:Ada', 'moved', b, 0],
      ['human:Ada', 'deleted', a, undefined],
    ]);
    expect(
      ((await room.handle(agent, { type: 'get_changes', since: since.cursor })) as { changes: unknown[] }).changes,
    ).toEqual([]);

    // The daemon restarts: the room is another life; an old cursor is answered as such.
    const after = await join_(await daemonLife(), path);
    const old = (await after.room.handle(after.peer, { type: 'get_changes', since: since.cursor })) as {
      complete: boolean;
      note: string;
    };
    expect(old.complete).toBe(false);
    expect(old.note).toContain('before the daemon restarted');
  });

  it("undoes a peer's own last edits, durably, and refuses when another peer changed the cell since", async () => {
    const { room, agent, ada, path } = await twoPeers('undo.ipynb');
    const theirs = idOf(await room.handle(ada, { type: 'insert_cell', source: 'kept by Ada' }));
    const mine = idOf(await room.handle(agent, { type: 'insert_cell', source: 'v1' }));
    await room.handle(agent, { type: 'update_cell', cell_id: mine, source: 'v2' });
    await room.handle(agent, { type: 'update_cell', cell_id: mine, source: 'v3' });
    await room.handle(agent, { type: 'delete_cell', cell_id: theirs });
    const undone = (await room.handle(agent, { type: 'undo', count: 2 })) as {
      undone: { kind: string; cell_id: string }[];
    };
    expect(undone.undone.map(({ kind, cell_id }) => [kind, cell_id])).toEqual([
      ['inserted', theirs],
      ['edited', mine],
    ]);
    expect(room.cells().map((cell) => cell.source)).toEqual(['kept by Ada', 'v2']);
    expect(room.cells()[0]?.id).toBe(theirs);

    // Ada edits the cell: the agent's older edit of it is no longer its to revert.
    await room.handle(ada, { type: 'update_cell', cell_id: mine, source: 'v2 and Ada' });
    await expect(room.handle(agent, { type: 'undo' })).rejects.toThrow(
      /changed since by human:Ada\. Nothing was changed\./,
    );
    expect(room.cells().map((cell) => cell.source)).toEqual(['kept by Ada', 'v2 and Ada']);
    await expect(room.handle(agent, { type: 'undo', count: 9 })).rejects.toMatchObject({ kind: 'undoRefused' });

    // The undo was journaled like any edit: a new daemon life has it.
    const back = await join_(await daemonLife(), path);
    expect(back.room.cells().map((cell) => cell.source)).toEqual(['kept by Ada', 'v2 and Ada']);
    await expect(back.room.handle(back.peer, { type: 'undo' })).rejects.toThrow(/not kept across daemon restarts/);
  });
});
