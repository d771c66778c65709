import { randomUUID } from 'node:crypto';
import {
  type CellOutput,
  type CellType,
  type Clock,
  CoreError,
  type ExecuteOptions,
  type ExecutionResult,
  type ExecutionState,
  type HostedUrlTarget,
  type InsertCellRequest,
  type KernelInterruptOutcome,
  type Logger,
  type MutationOptions,
  type NotebookCell,
  type NotebookCellChange,
  type NotebookHandle,
  type NotebookHandleCloseReason,
  type NotebookReadiness,
  ReadinessWaiters,
  type SavedNotebook,
  type ScratchRun,
  type Subscription,
  type Timer,
} from '@nteract-mcp/core';
import { OutputCollector } from '@nteract-mcp/output-shaping';
import { newCell, toNotebookCell } from './hosted-cell.js';
import {
  endsWithin,
  type HostedExecutionRecord,
  rememberExecution,
  resultWhenDone,
  scratchCellId,
  stateOf,
} from './hosted-execution-record.js';
import type { HostedIdempotencyLedger } from './hosted-idempotency-ledger.js';
import { HostedNotebookFile } from './hosted-notebook-file.js';
import { hostedNotebookId } from './hosted-notebook-id.js';
import type {
  JupyterServerPort,
  ServerKernelConnection,
  ServerNotebookFile,
  ServerSession,
} from './jupyter-server-port.js';

/** The end of the sentence that tells an agent its code runs in a new kernel. */
export const newKernelConsequence =
  'runs in a new kernel, so variables and imports from earlier runs are not defined until their cells run again.';

/** How long {@link HostedNotebookHandle.close} waits for writes in progress (an execution's outputs) to reach the server. */
export const closeFlushTimeoutMs = 5_000;

/** How often a handle asks the server whether its kernel still runs (a culled kernel leaves the websocket open). */
export const kernelWatchMs = 5_000;

/** How long an interrupted execution has to end before the interrupt is reported as not effective. */
const interruptVerifyMs = 5_000;

/** What a {@link HostedNotebookHandle} is made of: the loaded file, the server session and its kernel. */
export interface HostedNotebookHandleOptions {
  readonly target: HostedUrlTarget;
  readonly server: JupyterServerPort;
  readonly file: ServerNotebookFile;
  readonly session: ServerSession;
  /** Connected and ready (`ready()` resolved). */
  readonly kernel: ServerKernelConnection;
  /** Said with the first execution: why the kernel that ran earlier code is gone. */
  readonly kernelNotice?: string;
  readonly clock: Clock;
  readonly logger: Logger;
  /** What calls with an idempotency key did, shared by every handle of the notebook (a new one after a loss too). */
  readonly ledger: HostedIdempotencyLedger;
}

/**
 * One notebook on a Jupyter Server behind core's {@link NotebookHandle} port: the document as
 * loaded through the contents API, the server-side session for its path and that session's
 * kernel over the websocket.
 *
 * Guarantees:
 * - `notebookId` is derived from the URL identity (the same after a rejoin); `notebookPath` is
 *   the URL identity (no credentials); `daemonIncarnation` is `undefined` (hosted sessions are
 *   never part of local incarnation reconciliation).
 * - Every edit is applied to the document and saved through the contents API, one at a time.
 *   Before writing, the file's `last_modified` on the server is compared with the one this handle
 *   loaded or last wrote: when the file changed on the server meanwhile (or is gone) nothing is
 *   written, the edit is undone here and the call rejects `invalidRequest` (code
 *   `file_changed_on_server`) saying to reconnect to load the server's version.
 * - Executions run over the kernel websocket; their outputs (nbformat) and execution count are
 *   written into the cell and saved when the execution ends, and the execution counts as done
 *   only once that save settled (a save refused by the rule above is logged; the result is still
 *   returned), so no write of this handle is in flight when the agent hears of the result. The
 *   contents API has no conditional write: a change made on the server between the check and the
 *   write of a save can still be overwritten; the window is one REST round trip.
 * - Outputs are built from the kernel's messages by `OutputCollector` (`@nteract-mcp/output-shaping`),
 *   as the local daemon builds them (streams merged with `\r` applied, `clear_output`, display
 *   updates); an output passed to `onOutput` or returned is never changed afterwards.
 * - A mutation or execution with an idempotency key seen for this notebook (by any of its handles
 *   in this process: {@link HostedIdempotencyLedger}) returns the first result, not applied again.
 * - `kernelNotice` is given with the first execution after the kernel that ran earlier code is
 *   gone (the handle was opened on a new kernel after a loss, or the kernel restarted by itself).
 * - `onDidChangeCells` listeners are told of this handle's own changes: an edit once it is saved,
 *   an execution's outputs as they come (the cell cleared, each output, the end).
 * - `onDidClose` fires once: `closed` after {@link HostedNotebookHandle.close}, `disconnected` when
 *   the kernel websocket is lost (the server went away); then every call rejects `handleClosed`.
 *
 * Does not guarantee: changes made by anyone else (the Jupyter Server tells no one of edits to a
 * file; they are seen after a reconnect); idempotency across processes (a restarted child starts
 * with an empty ledger); that a change made on the server between the check and the write is seen
 * (the contents API has no conditional write); outputs of an execution running when the
 * connection was lost (`aborted` here, though the kernel may finish it).
 */
export class HostedNotebookHandle implements NotebookHandle {
  public readonly notebookId: string;
  public readonly daemonIncarnation = undefined;
  readonly #target: HostedUrlTarget;
  readonly #server: JupyterServerPort;
  readonly #kernel: ServerKernelConnection;
  readonly #clock: Clock;
  readonly #logger: Logger;
  readonly #file: HostedNotebookFile;
  #kernelNotice: string | undefined;
  #restartingOnRequest = false;
  /** The kernel was seen idle or busy since this handle was made: a `starting` then is a new process. */
  #kernelRan = false;
  #closing = false;
  #closedReason: NotebookHandleCloseReason | undefined;
  readonly #ledger: HostedIdempotencyLedger;
  readonly #executions = new Map<string, HostedExecutionRecord>();
  readonly #closeListeners = new Set<(reason: NotebookHandleCloseReason) => void>();
  readonly #readinessWaiters = new ReadinessWaiters(
    () => this.readiness(),
    () => (this.#closedReason === undefined ? undefined : this.closedError()),
  );
  readonly #subscriptions: Subscription[] = [];
  #kernelWatch: Timer | undefined;

  public constructor(options: HostedNotebookHandleOptions) {
    this.#target = options.target;
    this.notebookId = hostedNotebookId(options.target.url);
    this.#server = options.server;
    this.#kernel = options.kernel;
    this.#clock = options.clock;
    this.#logger = options.logger;
    this.#ledger = options.ledger;
    this.#file = new HostedNotebookFile({
      target: options.target,
      server: options.server,
      file: options.file,
      logger: options.logger,
      notebookId: this.notebookId,
    });
    this.#kernelNotice = options.kernelNotice;
    this.#kernelRan = options.kernel.status === 'idle' || options.kernel.status === 'busy';
    this.#subscriptions.push(
      options.kernel.onStatus((status) => this.onKernelStatus(status)),
      options.kernel.onConnectionLost((reason) => this.finish('disconnected', reason)),
    );
    this.watchKernel();
  }

  public get notebookPath(): string {
    return this.#target.url;
  }

  public get isClosed(): boolean {
    return this.#closedReason !== undefined;
  }

  public get closedReason(): NotebookHandleCloseReason | undefined {
    return this.#closedReason;
  }

  /** Set while this handle runs on a new kernel it has not told about yet (cleared by the next execution, which carries it). */
  public get kernelNotice(): string | undefined {
    return this.#kernelNotice === undefined ? undefined : `${this.#kernelNotice}: code now ${newKernelConsequence}`;
  }

  /** The server's kernel id (the same one after a rejoin while the server kept the session). */
  public get kernelId(): string {
    return this.#kernel.kernelId;
  }

  /** Document `ready` (loaded); runtime `ready` while the kernel is idle or busy, `unavailable` when it is dead. */
  public readiness(): NotebookReadiness {
    const status = this.#kernel.status;
    if (status === 'dead') {
      return { document: 'ready', runtime: 'unavailable', reason: 'the kernel on the Jupyter Server is dead' };
    }
    return { document: 'ready', runtime: status === 'idle' || status === 'busy' ? 'ready' : 'pending' };
  }

  public waitUntilReady(signal?: AbortSignal): Promise<NotebookReadiness> {
    return this.#readinessWaiters.wait(signal);
  }

  public async listCells(): Promise<readonly NotebookCell[]> {
    this.assertOpen();
    return this.#file.listCells();
  }

  public async getCell(cellId: string): Promise<NotebookCell> {
    this.assertOpen();
    return toNotebookCell(this.#file.cell(cellId));
  }

  public insertCell(request: InsertCellRequest, options?: MutationOptions): Promise<NotebookCell> {
    return this.mutate(options, () => {
      const cell = newCell(request.cellType, request.source);
      const cells = [...this.#file.cells];
      const index = request.index === undefined ? cells.length : Math.max(0, Math.min(request.index, cells.length));
      cells.splice(index, 0, cell);
      this.#file.cells = cells;
      return toNotebookCell(cell);
    });
  }

  public updateCell(
    cellId: string,
    patch: { readonly source?: string; readonly cellType?: CellType },
    options?: MutationOptions,
  ): Promise<NotebookCell> {
    return this.mutate(options, () => {
      const cell = this.#file.cell(cellId, options);
      if (patch.source !== undefined) cell.source = patch.source;
      if (patch.cellType !== undefined && patch.cellType !== cell.cellType) {
        cell.cellType = patch.cellType;
        if (patch.cellType !== 'code') {
          cell.outputs = [];
          cell.executionCount = null;
        }
      }
      return toNotebookCell(cell);
    });
  }

  public deleteCell(cellId: string, options?: MutationOptions): Promise<void> {
    return this.mutate(options, () => {
      const cell = this.#file.cell(cellId, options);
      this.#file.cells = this.#file.cells.filter((candidate) => candidate !== cell);
    });
  }

  public moveCell(cellId: string, afterCellId: string | undefined, options?: MutationOptions): Promise<void> {
    return this.mutate(options, () => {
      const cell = this.#file.cell(cellId, options);
      if (afterCellId !== undefined) this.#file.cell(afterCellId);
      const rest = this.#file.cells.filter((candidate) => candidate !== cell);
      const index = afterCellId === undefined ? 0 : rest.findIndex((candidate) => candidate.id === afterCellId) + 1;
      rest.splice(index, 0, cell);
      this.#file.cells = rest;
    });
  }

  public clearOutputs(cellId: string, options?: MutationOptions): Promise<void> {
    return this.mutate(options, () => {
      const cell = this.#file.cell(cellId, options);
      cell.outputs = [];
      cell.executionCount = null;
    });
  }

  /**
   * Runs the cell in the session's kernel (`onStarted` told its id as it is sent); outputs go into
   * the cell as they come (and to `onOutput`), saved at the end. Waits at most `timeoutMs` (then
   * `timeout` with the outputs so far; the rest by {@link HostedNotebookHandle.getExecution}).
   */
  public executeCell(cellId: string, options?: ExecuteOptions): Promise<ExecutionResult> {
    if (this.#closedReason !== undefined) return Promise.reject(this.closedError());
    return this.#ledger
      .once(this.notebookId, options?.idempotencyKey, () => this.startExecution(cellId, options))
      .then((record) => resultWhenDone(record, this.#clock, options?.timeoutMs));
  }

  public async getExecution(executionId: string): Promise<ExecutionState> {
    this.assertOpen();
    const record = this.#executions.get(executionId);
    if (!record) {
      throw new CoreError('invalidRequest', `Unknown execution ${executionId} in notebook ${this.notebookId}`);
    }
    return stateOf(record);
  }

  /**
   * Runs `source` in the session's kernel without a cell (a scratch run, as `run_code` asks): the
   * notebook is not touched, the kernel keeps it out of its history and its execution count does
   * not grow (`store_history: false`); it runs after what the kernel has queued. Its outputs are
   * answered and kept nowhere. Waits at most `timeoutMs` (then `timeout` with the outputs so far;
   * the code goes on running, and {@link HostedNotebookHandle.interruptKernel} stops it).
   */
  public async runScratch(source: string, options: { readonly timeoutMs?: number } = {}): Promise<ScratchRun> {
    const record = await this.startScratchRecord(source);
    const result = await resultWhenDone(record, this.#clock, options.timeoutMs);
    return {
      status: result.status,
      outputs: result.outputs,
      ...(result.kernelNotice === undefined ? {} : { kernelNotice: result.kernelNotice }),
    };
  }

  /**
   * A scratch run kept as an execution (`run_code` as a task): started and answered at once (its
   * id, `cellId` {@link scratchCellId}); read it with {@link HostedNotebookHandle.getExecution}.
   * The kernel's input requests are not offered (`allowInput` is not honoured: code asking for
   * input gets the kernel's error).
   */
  public async startScratch(source: string): Promise<ExecutionState> {
    return stateOf(await this.startScratchRecord(source));
  }

  public async interruptKernel(): Promise<KernelInterruptOutcome> {
    this.assertOpen();
    const running = [...this.#executions.values()].find((record) => record.status === 'running');
    await this.#kernel.interrupt();
    if (running === undefined) return 'nothing_running';
    return (await endsWithin(running, this.#clock, interruptVerifyMs)) ? 'interrupted' : 'still_running';
  }

  public async restartKernel(): Promise<void> {
    this.assertOpen();
    this.#restartingOnRequest = true;
    try {
      await this.#kernel.restart();
    } finally {
      this.#restartingOnRequest = false;
      this.wakeReadiness();
    }
  }

  /**
   * Writes the notebook to its file on the server now (edits are saved as they happen; this is
   * for the agent's explicit save). Another path is refused: a hosted notebook stays where it is.
   */
  public async save(path?: string): Promise<SavedNotebook> {
    this.assertOpen();
    if (path !== undefined && path !== this.#target.url) {
      throw new CoreError(
        'unsupportedOperation',
        `A notebook on a Jupyter Server is saved where it is (${this.#target.url}), after every change; it cannot be saved to '${path}'.`,
      );
    }
    await this.#file.save();
    return { notebookId: this.notebookId, path: this.#target.url };
  }

  /**
   * Lets the writes in progress finish (at most {@link closeFlushTimeoutMs}), then closes the
   * kernel websocket; the server keeps the session and its kernel (a later connect reattaches
   * it). Idempotent.
   */
  public async close(): Promise<void> {
    if (this.#closedReason !== undefined || this.#closing) return;
    this.#closing = true;
    let timer: Timer | undefined;
    await Promise.race([
      this.#file.writes,
      new Promise<void>((resolve) => {
        timer = this.#clock.setTimer(closeFlushTimeoutMs, resolve);
      }),
    ]);
    timer?.cancel();
    this.finish('closed', 'closed by the client');
  }

  public onDidClose(listener: (reason: NotebookHandleCloseReason) => void): Subscription {
    if (this.#closedReason !== undefined) {
      this.callCloseListener(listener, this.#closedReason);
      return { dispose: () => undefined };
    }
    const entry = (reason: NotebookHandleCloseReason) => listener(reason);
    this.#closeListeners.add(entry);
    return { dispose: () => this.#closeListeners.delete(entry) };
  }

  public onDidChangeCells(listener: (change: NotebookCellChange) => void): Subscription {
    return this.#file.onDidChangeCells(listener);
  }

  /** Applies a change, saves it (the conflict rule), and undoes it when the save fails; tells it once saved. */
  private mutate<R>(options: MutationOptions | undefined, change: () => R): Promise<R> {
    if (this.#closedReason !== undefined) return Promise.reject(this.closedError());
    return this.#ledger.once(this.notebookId, options?.idempotencyKey, () =>
      this.#file.edit(change, () => this.assertOpen()),
    );
  }

  private async startExecution(cellId: string, options: ExecuteOptions | undefined): Promise<HostedExecutionRecord> {
    this.assertOpen();
    this.#file.cell(cellId, options);
    // A kernel shut down on the server (culled) leaves the websocket open: asked first, so the
    // code is not sent to a kernel that is gone (the connection is then lost, and recovered).
    if (!(await this.checkKernel())) throw this.closedError();
    const cell = this.#file.cell(cellId, options);
    const executionId = randomUUID();
    if (cell.cellType !== 'code') {
      const record: HostedExecutionRecord = {
        executionId,
        cellId,
        status: 'ok',
        outputs: [],
        executionCount: null,
        done: Promise.resolve(),
      };
      rememberExecution(this.#executions, record);
      options?.onStarted?.(executionId);
      return record;
    }
    cell.outputs = [];
    cell.executionCount = null;
    this.#file.tellChange({ kind: 'updated', cellId });
    return this.run(executionId, cell.source, { cellId, options });
  }

  /** A scratch run begins: no cell is touched, and the kernel keeps it out of its history. */
  private async startScratchRecord(source: string): Promise<HostedExecutionRecord> {
    this.assertOpen();
    if (!(await this.checkKernel())) throw this.closedError();
    return this.run(randomUUID(), source, undefined);
  }

  /**
   * Sends `source` to the kernel as one execution, remembered from now on. With a `cell`, its
   * outputs are written into that cell as they come and saved when it ends (it counts as done once
   * that save settled); without one (a scratch run), `store_history` is off and nothing is written.
   * The kernel notice waiting for the agent goes with it.
   */
  private run(
    executionId: string,
    source: string,
    cell: { readonly cellId: string; readonly options: ExecuteOptions | undefined } | undefined,
  ): HostedExecutionRecord {
    const cellId = cell?.cellId ?? scratchCellId;
    const notice = this.#kernelNotice;
    this.#kernelNotice = undefined;
    const outputs = new OutputCollector();
    let resolveDone: () => void = () => undefined;
    const record: HostedExecutionRecord = {
      executionId,
      cellId,
      status: 'running',
      outputs: [],
      executionCount: null,
      ...(notice === undefined ? {} : { kernelNotice: `${notice}: this ${newKernelConsequence}` }),
      done: new Promise<void>((resolve) => {
        resolveDone = resolve;
      }),
    };
    rememberExecution(this.#executions, record);
    cell?.options?.onStarted?.(executionId);
    void this.#kernel
      .execute(
        source,
        (message) => {
          const changes = outputs.apply(message.msgType, message.content);
          if (!changes.some((change) => change.kind !== 'displayUpdate')) return;
          record.outputs = outputs.snapshot();
          if (cell === undefined) return;
          const live = this.#file.find(cellId);
          if (live) {
            live.outputs = record.outputs;
            this.#file.tellChange({ kind: 'updated', cellId });
          }
          for (const change of changes) if (change.kind === 'output') this.tellOutput(cell.options, change.output);
        },
        cell === undefined ? { storeHistory: false } : {},
      )
      .then(
        (reply) => ({ status: reply.status, executionCount: reply.executionCount }),
        (error: unknown) => {
          this.#logger.warn('execution failed', { notebookId: this.notebookId, error });
          return { status: 'aborted' as const, executionCount: null };
        },
      )
      .then(({ status, executionCount }) => {
        record.status = status;
        record.outputs = outputs.snapshot();
        if (cell === undefined) {
          resolveDone();
          return;
        }
        record.executionCount = executionCount;
        const live = this.#file.find(cellId);
        if (live) {
          live.outputs = record.outputs;
          live.executionCount = executionCount;
          if (this.#closedReason === undefined) this.#file.tellChange({ kind: 'updated', cellId });
        }
        // Done once its outputs are saved: no write of ours is in flight when the agent hears of
        // it, so a change made on the server after that is seen, never overwritten.
        const saved =
          this.#closedReason === undefined && live
            ? this.#file.save().catch((error: unknown) =>
                this.#logger.warn('could not save the outputs of an execution', {
                  notebookId: this.notebookId,
                  error: error instanceof Error ? error.message : String(error),
                }),
              )
            : Promise.resolve();
        void saved.then(resolveDone);
      });
    return record;
  }

  private tellOutput(options: ExecuteOptions | undefined, output: CellOutput): void {
    try {
      options?.onOutput?.(output);
    } catch (error) {
      this.#logger.warn('an onOutput callback threw; the execution goes on', { notebookId: this.notebookId, error });
    }
  }

  /** Asks the server again after {@link kernelWatchMs}, while open. */
  private watchKernel(): void {
    if (this.#closedReason !== undefined) return;
    this.#kernelWatch = this.#clock.setTimer(kernelWatchMs, () => {
      void this.checkKernel().finally(() => this.watchKernel());
    });
  }

  /**
   * Whether the server still runs this handle's kernel. When it says it does not (culled for
   * idleness, or shut down from elsewhere), the connection is closed as lost: the recovery opens
   * the notebook again, on a new kernel. A server that does not answer is left to the websocket.
   */
  private async checkKernel(): Promise<boolean> {
    let exists: boolean;
    try {
      exists = await this.#server.kernelExists(this.#kernel.kernelId);
    } catch {
      return this.#closedReason === undefined;
    }
    if (!exists) {
      this.finish('disconnected', 'the Jupyter Server no longer runs the kernel (culled for idleness, or shut down)');
    }
    return exists && this.#closedReason === undefined;
  }

  private onKernelStatus(status: string): void {
    if (status === 'dead') {
      // The kernel is gone (shut down on the server, culled, or it could not restart): the
      // notebook is reached again from scratch, on a new kernel.
      this.finish('disconnected', 'the kernel on the Jupyter Server is dead');
      return;
    }
    // A restart not asked for here: `restarting`, or only the new process `starting` (classic notebook).
    const restarted =
      status === 'restarting' || status === 'autorestarting' || (status === 'starting' && this.#kernelRan);
    if (restarted && !this.#restartingOnRequest) {
      this.#kernelNotice = 'The kernel on the Jupyter Server restarted (it died, or was restarted from elsewhere)';
    }
    if (status === 'idle' || status === 'busy') this.#kernelRan = true;
    this.wakeReadiness();
  }

  private wakeReadiness(): void {
    this.#readinessWaiters.wake();
  }

  private finish(reason: NotebookHandleCloseReason, detail: string): void {
    if (this.#closedReason !== undefined) return;
    this.#closedReason = reason;
    this.#kernelWatch?.cancel();
    for (const subscription of this.#subscriptions.splice(0)) subscription.dispose();
    if (reason !== 'closed') {
      this.#logger.info('hosted notebook connection closed', { notebook: this.#target.url, reason, detail });
    }
    for (const record of this.#executions.values()) {
      if (record.status === 'running' || record.status === 'queued') {
        record.status = 'aborted';
        record.note = `The connection to the kernel was lost while this cell ran (${detail}), so its end is not known (the kernel may have finished it, or be gone with its state). The notebook is reconnected by itself; run the cell again once it is back.`;
      }
    }
    this.#file.disposeListeners();
    this.#kernel.dispose();
    this.#server.dispose();
    this.wakeReadiness();
    const listeners = [...this.#closeListeners];
    this.#closeListeners.clear();
    for (const listener of listeners) this.callCloseListener(listener, reason);
  }

  private callCloseListener(listener: (reason: NotebookHandleCloseReason) => void, reason: NotebookHandleCloseReason) {
    try {
      listener(reason);
    } catch (error) {
      this.#logger.error('an onDidClose listener threw', { notebookId: this.notebookId, error });
    }
  }

  private assertOpen(): void {
    if (this.#closedReason !== undefined) throw this.closedError();
  }

  private closedError(): CoreError {
    return new CoreError(
      'handleClosed',
      `Notebook ${this.#target.url} connection is closed (${this.#closedReason ?? 'disconnected'})`,
    );
  }
}
