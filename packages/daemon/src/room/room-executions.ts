import { randomUUID } from 'node:crypto';
import { type Clock, type Logger, releaseLargeTransient } from '@nteract-mcp/foundation';
import { OutputsDocument } from '@nteract-mcp/output-shaping';
import {
  type OutputEdit,
  outputEventOf,
  type WireExecutionState,
  type WireNotebookAnswer,
  type WireRoomEvent,
  type WireRuntimeState,
} from '@nteract-mcp/runtimed-protocol';
import { DaemonError } from '../daemon-error.js';
import type { DocumentChange, NotebookDocument, NotebookOutput } from '../document/notebook-document.js';
import { blobCharsOf, blobsOfOutputs, resolveBlobTexts } from '../persistence/blob-text.js';
import type { LedgerRecord } from '../persistence/room-journal.js';
import { type ExecutionRecord, executionDoneEvent, executionState, scratchCellId } from './execution-record.js';
import type { RoomKernel } from './kernel-launcher.js';
import { OutputCoalescer } from './output-coalescer.js';

/** The end of the sentence that tells an agent its execution ran in a new kernel (after "this" or "it"). */
const newKernelConsequence =
  'runs in a new kernel, so variables and imports from earlier runs are not defined until their cells run again.';

/**
 * How many executions (the most recent) a restarted journal keeps in its header, outputs included:
 * those `get_execution` answers after a daemon restart once the journal was rotated by a save.
 */
export const durableExecutionCount = 32;

/** The room's kernel as executions use it (see `RoomKernelKeeper`). */
export interface ExecutionKernel {
  readonly runtime: WireRuntimeState;
  /** The running kernel, if any. */
  readonly current: RoomKernel | undefined;
  /** Why the kernel that ran this notebook's code is gone, until an execution says so. */
  readonly kernelGone: string | undefined;
  /** {@link ExecutionKernel.kernelGone}, cleared: the execution taking it tells the agent. */
  takeKernelGone(): string | undefined;
  ensureKernel(): Promise<RoomKernel | undefined>;
}

export interface RoomExecutionsInit {
  readonly notebookId: string;
  readonly document: NotebookDocument;
  readonly kernel: ExecutionKernel;
  /** Finished executions kept for `get_execution`. */
  readonly history: number;
  /** Times the gathering of a running cell's output changes (see `OutputCoalescer`). */
  readonly clock: Clock;
  readonly logger: Logger;
  /** Sends an event to every peer. */
  readonly broadcast: (event: WireRoomEvent) => void;
  /** Sends an event about a change of the document to every peer, and marks the document unsaved. */
  readonly changed: (event: WireRoomEvent) => void;
  /** Journals a change of the document (the start and end of an execution). */
  readonly journal: (change: DocumentChange) => void;
  /** Journals the state of an execution (when queued, and when it ended), for `get_execution` after a daemon restart. */
  readonly journalExecution?: (state: WireExecutionState) => void;
  /** An execution of a cell ended (after its `execution_done` broadcast). */
  readonly finished?: (record: ExecutionRecord) => void;
  /**
   * Where a finished run's large output values go (a blob store; see `NotebookDocument.keepLargeOutputs`):
   * its record and its cell keep them there, not in the heap. None: kept as strings.
   */
  readonly spill?: (outputs: readonly NotebookOutput[]) => readonly NotebookOutput[];
  /** Asks the peer of an execution that allows input for a line (the code's `input()`). */
  readonly askInput?: (record: ExecutionRecord, prompt: string, password: boolean) => Promise<string>;
}

/**
 * The executions of one room: the queue (one execution at a time, in order, scratch runs included),
 * the one running, and the finished ones kept for `get_execution`; cancelling; and executions the
 * journal says were under way when the daemon stopped (they answer `aborted`).
 */
export class RoomExecutions {
  readonly #init: RoomExecutionsInit;
  readonly #executions = new Map<string, ExecutionRecord>();
  #queue: Promise<unknown> = Promise.resolve();

  public constructor(init: RoomExecutionsInit) {
    this.#init = init;
  }

  /**
   * Queues the cell `cellId` for `peer` (a markdown cell ends `ok` at once); answers the execution
   * as it is now.
   */
  public start(
    cellId: string,
    peer?: { readonly id: string; readonly label: string },
    options: { readonly allowInput?: boolean; readonly runAfter?: string } = {},
  ): Record<string, unknown> {
    const cell = this.#init.document.cell(cellId);
    const record: ExecutionRecord = {
      executionId: randomUUID(),
      cellId,
      status: 'queued',
      outputs: [],
      executionCount: null,
      ...(peer === undefined ? {} : { peerId: peer.id, peerLabel: peer.label }),
      ...(options.allowInput === true && peer !== undefined ? { allowInput: true } : {}),
      ...(options.runAfter === undefined ? {} : { runAfter: options.runAfter }),
    };
    if (cell.cell_type !== 'code') {
      record.status = 'ok';
      this.remember(record);
      return executionState(record);
    }
    const { runtime } = this.#init.kernel;
    if (runtime.state === 'unavailable') {
      throw new DaemonError(
        'runtimeUnavailable',
        `Cannot execute: the runtime is unavailable (${runtime.reason ?? 'no kernel'})`,
      );
    }
    const kernelGone = this.#init.kernel.takeKernelGone();
    if (kernelGone !== undefined) record.kernelNotice = `${kernelGone}: this ${newKernelConsequence}`;
    this.remember(record);
    this.#init.journalExecution?.(executionState(record));
    const source = cell.source;
    this.#queue = this.#queue.catch(() => undefined).then(() => this.run(record, source));
    return executionState(record);
  }

  /**
   * An `execute_cell` answer as of now: the execution it names as it stands (a retried request's
   * ledger entry holds the state of the first answer, `queued`, which may be long over), with the
   * answer's other fields (a warning) kept. An execution no longer kept is answered as recorded.
   */
  public current(answer: Record<string, unknown>): Record<string, unknown> {
    const record = typeof answer.execution_id === 'string' ? this.#executions.get(answer.execution_id) : undefined;
    return record ? { ...answer, ...executionState(record) } : answer;
  }

  /** The executions not finished, in the order they run: the running one first, then the queue. */
  public unfinished(): ExecutionRecord[] {
    const waiting = [...this.#executions.values()].filter(
      (record) => record.status === 'queued' || record.status === 'running',
    );
    return [
      ...waiting.filter((record) => record.status === 'running'),
      ...waiting.filter((record) => record.status === 'queued'),
    ];
  }

  /** The `get_execution` answer. */
  /**
   * The state of an execution; with `page`, one page of its outputs read as one text (an
   * `OutputsDocument`) in `outputs_page` instead of its outputs. A page past the end is empty,
   * at the offset asked (the reader says so, with `total_chars`).
   */
  public get(
    executionId: string,
    page?: { readonly offset: number; readonly length: number; readonly budget_bytes: number },
  ): Record<string, unknown> {
    const record = this.#executions.get(executionId);
    if (!record) throw new DaemonError('badRequest', `Execution not found: ${executionId}`);
    if (!page) return executionState(record);
    // Values kept in blobs are read for this page only (dropped with the document below).
    const document = new OutputsDocument(resolveBlobTexts(record.outputs));
    const outputsPage = document.page(page.offset, page.length, page.budget_bytes) ?? {
      offset: page.offset,
      length: 0,
      total_chars: document.text.length,
      text: '',
    };
    // The outputs read as one text were a copy of them: the page's text is copied out of it (a
    // slice would keep it all alive until the answer is gone) and the copy is given back.
    releaseLargeTransient(document.text.length);
    const text = Buffer.from(outputsPage.text).toString();
    return { ...executionState({ ...record, outputs: [] }), outputs_page: { ...outputsPage, text } };
  }

  /**
   * A scratch run: `source` in the kernel after what is queued, with no cell, no broadcast, no
   * history and no execution count; its outputs are answered and kept nowhere.
   */
  public async runScratch(source: string): Promise<WireNotebookAnswer<'run_code'>> {
    const kernels = this.#init.kernel;
    if (kernels.runtime.state === 'unavailable') {
      throw new DaemonError(
        'runtimeUnavailable',
        `Cannot run code: the runtime is unavailable (${kernels.runtime.reason ?? 'no kernel'})`,
      );
    }
    const run = this.#queue
      .catch(() => undefined)
      .then(async () => {
        const kernel = await kernels.ensureKernel().catch(() => undefined);
        if (!kernel) throw new DaemonError('runtimeUnavailable', kernels.runtime.reason ?? 'No kernel is available');
        // Said here as with a cell: the agent's next run of any kind is where it learns its state is gone.
        const kernelGone = kernels.takeKernelGone();
        const result = await kernel.execute(source, { storeHistory: false });
        return { result, kernelGone };
      });
    this.#queue = run.then(
      () => undefined,
      () => undefined,
    );
    const { result, kernelGone } = await run;
    return {
      status: result.status,
      outputs: [...result.outputs],
      ...(kernelGone === undefined ? {} : { kernel_notice: `${kernelGone}: this code ${newKernelConsequence}` }),
    };
  }

  /**
   * A scratch run kept as an execution (`start_code`): queued after what is queued, answered at
   * once; it runs like `run_code` (no cell, no history, no execution count, no broadcast) and is
   * read, cancelled and journaled like a cell's execution.
   */
  public startScratch(
    source: string,
    peer: { readonly id: string; readonly label: string },
    options: { readonly allowInput?: boolean } = {},
  ): WireExecutionState {
    const kernels = this.#init.kernel;
    if (kernels.runtime.state === 'unavailable') {
      throw new DaemonError(
        'runtimeUnavailable',
        `Cannot run code: the runtime is unavailable (${kernels.runtime.reason ?? 'no kernel'})`,
      );
    }
    const record: ExecutionRecord = {
      executionId: randomUUID(),
      cellId: scratchCellId,
      status: 'queued',
      outputs: [],
      executionCount: null,
      peerId: peer.id,
      peerLabel: peer.label,
      scratch: true,
      ...(options.allowInput === true ? { allowInput: true } : {}),
    };
    this.remember(record);
    this.#init.journalExecution?.(executionState(record));
    this.#queue = this.#queue.catch(() => undefined).then(() => this.run(record, source));
    return executionState(record);
  }

  /**
   * Stops one execution: a queued one never runs (it ends `aborted` now), the running one is
   * interrupted (it ends as the kernel reports it; `still_running` when it has not ended some
   * seconds later, the code ignoring the interrupt), a finished one is left alone. Other executions
   * are not touched: a running execution is interrupted only when it is the one named.
   */
  public async cancel(executionId: string): Promise<WireNotebookAnswer<'cancel_execution'>> {
    const record = this.#executions.get(executionId);
    if (!record) throw new DaemonError('badRequest', `Execution not found: ${executionId}`);
    if (record.status === 'queued') {
      record.status = 'aborted';
      record.outputs = [
        { output_type: 'error', ename: 'ExecutionCancelled', evalue: 'Cancelled before it started.', traceback: [] },
      ];
      this.finish(record);
      return { execution_id: executionId, cancelled: 'dequeued' };
    }
    const kernel = this.#init.kernel.current;
    if (record.status !== 'running' || !kernel) return { execution_id: executionId, cancelled: 'none' };
    const outcome = await kernel.interrupt();
    this.#init.logger.info('kernel interrupted to cancel an execution', {
      pid: this.#init.kernel.current?.pid,
      executionId,
      outcome,
    });
    // Said as it is: an execution that goes on after the interrupt was not cancelled.
    return { execution_id: executionId, cancelled: outcome === 'still_running' ? 'still_running' : 'interrupted' };
  }

  /**
   * The executions the journal kept from before the daemon stopped: a finished one answers
   * `get_execution` as it ended; one still queued or running never finished in this daemon life
   * and answers `aborted`, saying why: one that never started did not run, one that started may
   * have run in part or in full. Call before {@link restoredLedgerRecord}.
   */
  public restore(states: readonly WireExecutionState[]): void {
    for (const state of states) {
      const unfinished = state.status === 'queued' || state.status === 'running';
      this.remember(
        unfinished
          ? abortedByRestart(state.execution_id, state.cell_id, state.status === 'queued' ? 'never-started' : 'started')
          : {
              executionId: state.execution_id,
              cellId: state.cell_id,
              status: state.status,
              outputs: [...state.outputs],
              executionCount: state.execution_count,
              ...(state.kernel_notice === undefined ? {} : { kernelNotice: state.kernel_notice }),
            },
      );
    }
  }

  /** The blobs the kept executions' outputs reference, added to `into`. */
  public blobsHeld(into: Set<string>): void {
    for (const record of this.#executions.values()) blobsOfOutputs(record.outputs, into);
  }

  /** The most recent executions as the journal keeps them across a rotation (see {@link durableExecutionCount}). */
  public snapshot(): WireExecutionState[] {
    return [...this.#executions.values()].slice(-durableExecutionCount).map(executionState);
  }

  /**
   * The ledger entry of an `execute_cell` journaled before the daemon stopped, answered as the
   * execution stands now: as it ended when the journal kept its end ({@link restore}), otherwise
   * (it never finished in this daemon life) `aborted`, saying why; `get_execution` answers the same.
   */
  public restoredLedgerRecord(record: LedgerRecord): LedgerRecord {
    const result = record.result as Record<string, unknown> | null;
    if (record.operation !== 'execute_cell' || typeof result?.execution_id !== 'string') return record;
    const known = this.#executions.get(result.execution_id);
    if (known) return { ...record, result: executionState(known) };
    if (result.status !== 'queued' && result.status !== 'running') return record;
    // Nothing journaled of it but its request: whether it started is not known.
    const aborted = abortedByRestart(result.execution_id, String(result.cell_id), 'started');
    this.remember(aborted);
    return { ...record, result: executionState(aborted) };
  }

  private async run(record: ExecutionRecord, source: string): Promise<void> {
    // Cancelled while queued: it already ended.
    if (record.status !== 'queued') return;
    const before = record.runAfter === undefined ? undefined : this.#executions.get(record.runAfter);
    if (record.runAfter !== undefined && before?.status !== 'ok') {
      record.status = 'aborted';
      const how = before ? `ended ${before.status}` : 'is not known here';
      record.outputs = [
        { output_type: 'error', ename: 'NotRun', evalue: `Not run: the execution before it ${how}.`, traceback: [] },
      ];
      this.finish(record);
      return;
    }
    const kernels = this.#init.kernel;
    const kernel = await kernels.ensureKernel().catch(() => undefined);
    // Cancelled while its kernel was starting: it already ended.
    if (record.status !== 'queued') return;
    if (!kernel) {
      record.status = 'aborted';
      record.outputs = [
        {
          output_type: 'error',
          ename: 'RuntimeUnavailable',
          evalue: kernels.runtime.reason ?? 'no kernel',
          traceback: [],
        },
      ];
      this.finish(record);
      return;
    }
    record.status = 'running';
    // Journaled before the kernel is asked: after a crash, an execution that started says it may
    // have run; one still queued says it did not.
    this.#init.journalExecution?.(executionState(record));
    if (!record.scratch) this.startCellExecution(record);
    else {
      const kernelGone = kernels.takeKernelGone();
      if (kernelGone !== undefined) record.kernelNotice = `${kernelGone}: this code ${newKernelConsequence}`;
    }
    // What peers are told of the outputs as they come: small edits, gathered per short window.
    let live: readonly NotebookOutput[] = [];
    const coalescer = record.scratch
      ? undefined
      : new OutputCoalescer(this.#init.clock, (edits) => this.publishOutputs(record, live, edits));
    try {
      const askInput = this.#init.askInput;
      const result = await kernel.execute(source, {
        ...(record.scratch ? { storeHistory: false } : {}),
        ...(record.allowInput === true && askInput
          ? { onInput: (prompt: string, password: boolean) => askInput(record, prompt, password) }
          : {}),
        onOutput: (change, outputs) => {
          live = outputs;
          if (coalescer) coalescer.add(change);
          else record.outputs = outputs.slice();
        },
      });
      coalescer?.flush();
      record.status = result.status;
      record.outputs = this.#init.spill?.(result.outputs) ?? result.outputs;
      // The texts the run built, now in blobs, are garbage once this run is told: given back soon.
      releaseLargeTransient(blobCharsOf(record.outputs));
      record.executionCount = result.executionCount;
      if (result.status === 'aborted' && kernels.current !== kernel && kernels.kernelGone !== undefined) {
        // The kernel died under this run (its exit was handled before this continuation).
        record.kernelNotice = `${kernels.takeKernelGone()} while this cell ran, so it was aborted. Run it again: it ${newKernelConsequence}`;
      }
    } catch (error) {
      coalescer?.flush();
      record.status = 'aborted';
      this.#init.logger.warn('execution failed', { notebookId: this.#init.notebookId, error });
    }
    coalescer?.dispose();
    if (!record.scratch) this.endCellExecution(record);
    this.finish(record);
  }

  /**
   * Tells peers what a running cell's outputs became (`outputs`, the kernel's live list, copied
   * here) as `edits`, one broadcast and one document version each, numbered in the execution's
   * sequence. A cell deleted while it ran is told nothing more: its end carries its outputs.
   */
  private publishOutputs(record: ExecutionRecord, outputs: readonly NotebookOutput[], edits: OutputEdit[]): void {
    record.outputs = outputs.slice();
    if (record.outputEvents === undefined) return;
    let version: number;
    try {
      version = this.#init.document.setRunningOutputs(record.cellId, record.outputs.slice(), edits.length);
    } catch (error) {
      if (!DaemonError.is(error, 'cellNotFound')) throw error;
      // Its end carries its outputs instead.
      record.outputEvents = undefined;
      return;
    }
    const first = version - edits.length + 1;
    // A large value of a rich output set now goes to the blob store at once (it is whole when set;
    // a stream grows, and goes there when its run ends): peers that read references get one.
    const spill = this.#init.spill;
    edits.forEach((told, index) => {
      const edit =
        spill !== undefined && told.kind === 'set' && told.output.output_type !== 'stream'
          ? { ...told, output: spill([told.output])[0] ?? told.output }
          : told;
      record.outputEvents = (record.outputEvents ?? 0) + 1;
      this.#init.changed(
        outputEventOf(edit, {
          document_version: first + index,
          execution_id: record.executionId,
          cell_id: record.cellId,
          seq: record.outputEvents,
        }),
      );
    });
  }

  /**
   * Puts a finished run's outputs and execution count into its cell, journaled; the document
   * version is the one `execution_done` names (peers set the count; the outputs are what the
   * output edits built). A cell deleted while it ran is left alone.
   */
  private endCellExecution(record: ExecutionRecord): void {
    try {
      const cell = this.#init.document.setExecutionState(record.cellId, record.outputs, record.executionCount);
      this.#init.journal({ op: 'set', cell });
      record.endVersion = this.#init.document.version;
    } catch (error) {
      if (!DaemonError.is(error, 'cellNotFound')) throw error;
    }
  }

  private finish(record: ExecutionRecord): void {
    this.#init.journalExecution?.(executionState(record));
    if (record.scratch) {
      this.#init.finished?.(record);
      return;
    }
    // A change of the document (the execution count) when it names a version: autosave is due.
    if (record.endVersion !== undefined) this.#init.changed(executionDoneEvent(record));
    else this.#init.broadcast(executionDoneEvent(record));
    this.#init.finished?.(record);
  }

  /** A cell's run begins: its outputs and count are cleared, journaled, and told (the output edits follow). */
  private startCellExecution(record: ExecutionRecord): void {
    try {
      const cell = this.#init.document.setExecutionState(record.cellId, [], null);
      record.outputEvents = 0;
      this.#init.journal({ op: 'set', cell });
      this.#init.changed({ event: 'cell_updated', document_version: this.#init.document.version, cell });
    } catch (error) {
      if (!DaemonError.is(error, 'cellNotFound')) throw error;
    }
  }

  private remember(record: ExecutionRecord): void {
    this.#executions.set(record.executionId, record);
    for (const [id, old] of this.#executions) {
      if (this.#executions.size <= this.#init.history) break;
      if (old.status !== 'queued' && old.status !== 'running') this.#executions.delete(id);
    }
  }
}

/** An execution the daemon stopped under (it was queued or running): it ends `aborted`, saying why. */
/**
 * An execution the daemon stopped under, as the next daemon answers it. `never-started`: the
 * journal says it was still queued, so it did not run and running it again is safe. `started`
 * (or not known): its code may have run in part or in full, and what it did outside the kernel
 * stays done; the answer says so and never "did not run".
 */
function abortedByRestart(executionId: string, cellId: string, how: 'never-started' | 'started'): ExecutionRecord {
  const evalue =
    how === 'never-started'
      ? 'The daemon stopped before this execution started: it did not run. Run the cell again.'
      : 'The daemon stopped while this execution ran: its code may have run in part or in full (what it did outside the kernel, such as files written, stays done), and the kernel and its state are gone. Check what it did before running the cell again.';
  return {
    executionId,
    cellId,
    status: 'aborted',
    outputs: [{ output_type: 'error', ename: 'DaemonRestarted', evalue, traceback: [] }],
    executionCount: null,
  };
}
