import {
  type CellOutput,
  type CellType,
  type Clock,
  CoreError,
  type DaemonIncarnation,
  type ExecuteOptions,
  type ExecutionResult,
  type ExecutionState,
  type InsertCellRequest,
  type Logger,
  type MutationOptions,
  type NotebookCell,
  type NotebookHandle,
  type NotebookHandleCloseReason,
  type NotebookReadiness,
  type SavedNotebook,
  type Subscription,
  type Timer,
} from '@nteract-mcp/core';
import type { RuntimedConnection, RuntimedFrame, WireRuntimeState } from '@nteract-mcp/runtimed-protocol';
import {
  type FinalExecutionStatus,
  isFinalExecutionStatus,
  readCell,
  readCells,
  readExecutionState,
  readGreetingIncarnation,
  readNumber,
  readOptionalString,
  readOutput,
  readRecord,
  readRuntimeState,
  readString,
} from './runtimed-wire-readers.js';
import { toCoreError } from './to-core-error.js';

/** How long {@link RuntimedNotebookHandle.close} waits for the daemon to answer `leave`. */
export const leaveTimeoutMs = 1000;

/** What a {@link RuntimedNotebookHandle} needs besides its connection. */
export interface RuntimedNotebookHandleOptions {
  readonly clock: Clock;
  readonly logger: Logger;
}

/** Someone waiting for one execution's broadcasts. */
interface ExecutionWatcher {
  output(output: CellOutput): void;
  done(status: FinalExecutionStatus): void;
  fail(error: Error): void;
}

/** Execution broadcasts that arrived before we knew whose execution they were. */
interface EarlyExecutionEvents {
  readonly outputs: CellOutput[];
  done: FinalExecutionStatus | undefined;
}

/**
 * One peer connection to a room of the local daemon `runtimed` (notebook channel), behind core's
 * {@link NotebookHandle} port. Built by `RuntimedDaemonPort` from an open connection and the
 * daemon's `connected` greeting; not meant to be constructed by anyone else.
 *
 * Guarantees:
 * - `daemonIncarnation` is the daemon life named by the greeting (`daemon_pid`, `daemon_started_at`).
 * - The cell list starts from the greeting and follows our own answers and the room's broadcasts in
 *   document-version order; a gap in versions (a broadcast we could not place) makes the next read
 *   fetch the whole list again instead of serving a cache that may be wrong.
 * - Every mutation carries `idempotency_key` when `options.idempotencyKey` is given.
 * - `onDidClose` fires exactly once: `closed` after {@link RuntimedNotebookHandle.close},
 *   `disconnected` when the connection is lost or the daemon shuts down, `room-removed` when the
 *   daemon removed the room (`room_closed`). From then on every call rejects with `handleClosed`,
 *   including calls that were waiting for an answer.
 *
 * Does not guarantee: that `listCells` shows an edit another peer made a moment ago (broadcasts
 * travel as they travel), that a call rejected by a lost connection did not take effect in the
 * daemon (use idempotency keys), or that the kernel is still alive when `readiness()` says `ready`
 * (a stopped kernel is reported ready because the daemon restarts it on the next execution).
 */
export class RuntimedNotebookHandle implements NotebookHandle {
  public readonly notebookId: string;
  public readonly daemonIncarnation: DaemonIncarnation;
  readonly #connection: RuntimedConnection;
  readonly #clock: Clock;
  readonly #logger: Logger;
  #notebookPath: string | undefined;
  #cells: NotebookCell[];
  /** The document version `#cells` reflects. */
  #documentVersion: number;
  /** The newest document version any answer or broadcast has named. */
  #newestSeenVersion: number;
  /** `#cells` cannot be trusted (a version gap); the next read fetches the list. */
  #cellsStale = false;
  #refreshing: Promise<void> | undefined;
  #runtime: WireRuntimeState;
  /** Counts runtime broadcasts, to tell whether an answer's runtime may be older than one we saw. */
  #runtimeBroadcasts = 0;
  #closedReason: NotebookHandleCloseReason | undefined;
  readonly #initialSync: Promise<void>;
  readonly #closeListeners = new Set<{ readonly listener: (reason: NotebookHandleCloseReason) => void }>();
  readonly #readinessWaiters = new Set<() => void>();
  readonly #executionWatchers = new Map<string, Set<ExecutionWatcher>>();
  readonly #earlyExecutionEvents = new Map<string, EarlyExecutionEvents>();
  #executeRequestsInFlight = 0;
  readonly #subscriptions: Subscription[] = [];

  /**
   * Takes over `connection` (it closes it on {@link RuntimedNotebookHandle.close}). Throws
   * `protocolViolation` for a greeting that lacks what a `connected` frame must carry; the caller
   * then still owns the connection.
   */
  public constructor(connection: RuntimedConnection, greeting: RuntimedFrame, options: RuntimedNotebookHandleOptions) {
    if (greeting.type !== 'connected') {
      throw new CoreError(
        'protocolViolation',
        `The daemon answered a notebook handshake with '${String(greeting.type)}' instead of 'connected'`,
      );
    }
    this.notebookId = readString(greeting, 'notebook_id', 'notebook greeting');
    this.daemonIncarnation = readGreetingIncarnation(greeting);
    this.#notebookPath = readOptionalString(greeting, 'notebook_path', 'notebook greeting');
    this.#cells = readCells(greeting, 'notebook greeting');
    this.#documentVersion = readNumber(greeting, 'document_version', 'notebook greeting');
    this.#newestSeenVersion = this.#documentVersion;
    this.#runtime = readRuntimeState(readRecord(greeting, 'runtime', 'notebook greeting'));
    this.#connection = connection;
    this.#clock = options.clock;
    this.#logger = options.logger.child('plugin-local-daemon:RuntimedNotebookHandle');
    this.#subscriptions.push(connection.onFrame((frame) => this.onFrame(frame)));
    this.#subscriptions.push(connection.onClose((reason) => this.finish('disconnected', reason)));
    // Frames that followed the greeting in the same read reached no listener yet (the connection
    // hands out the greeting first), so ask once for what they may have changed.
    this.#initialSync = this.resynchronise();
  }

  public get notebookPath(): string | undefined {
    return this.#notebookPath;
  }

  public get isClosed(): boolean {
    return this.#closedReason !== undefined;
  }

  public get closedReason(): NotebookHandleCloseReason | undefined {
    return this.#closedReason;
  }

  /**
   * Document `ready` (the greeting carries the whole document); runtime from the daemon's state:
   * `ready` and `stopped` are `ready` (a stopped kernel restarts on the next execution),
   * `unavailable` is `unavailable` with the daemon's reason, `not_started` and `starting` are `pending`.
   */
  public readiness(): NotebookReadiness {
    const { state, reason } = this.#runtime;
    if (state === 'unavailable') {
      return { document: 'ready', runtime: 'unavailable', reason: reason ?? 'no kernel is available' };
    }
    return { document: 'ready', runtime: state === 'ready' || state === 'stopped' ? 'ready' : 'pending' };
  }

  public waitUntilReady(signal?: AbortSignal): Promise<NotebookReadiness> {
    return new Promise((resolve, reject) => {
      const check = (): boolean => {
        if (this.#closedReason !== undefined) reject(this.closedError());
        else if (signal?.aborted) reject(signal.reason);
        else {
          const readiness = this.readiness();
          if (readiness.runtime === 'pending') return false;
          resolve(readiness);
        }
        return true;
      };
      if (check()) return;
      const wake = (): void => {
        if (!check()) return;
        this.#readinessWaiters.delete(wake);
        signal?.removeEventListener('abort', wake);
      };
      this.#readinessWaiters.add(wake);
      signal?.addEventListener('abort', wake, { once: true });
    });
  }

  public async listCells(): Promise<readonly NotebookCell[]> {
    this.assertOpen();
    await this.#initialSync;
    if (this.#cellsStale) await this.refreshCells();
    this.assertOpen();
    return [...this.#cells];
  }

  /** From the cache when it holds the cell, else asks the daemon. Rejects `cellNotFound` (`Cell not found: <id>`). */
  public async getCell(cellId: string): Promise<NotebookCell> {
    this.assertOpen();
    await this.#initialSync;
    if (!this.#cellsStale) {
      const cached = this.#cells.find((cell) => cell.id === cellId);
      if (cached) return cached;
    }
    try {
      return readCell((await this.request({ type: 'get_cell', cell_id: cellId })).cell);
    } catch (error) {
      if (CoreError.is(error, 'cellNotFound')) {
        throw new CoreError('cellNotFound', `Cell not found: ${cellId}`, { code: error.code, cause: error });
      }
      throw error;
    }
  }

  public async insertCell(request: InsertCellRequest, options?: MutationOptions): Promise<NotebookCell> {
    const answer = await this.request({
      type: 'insert_cell',
      source: request.source,
      cell_type: request.cellType,
      ...(request.index === undefined ? {} : { index: request.index }),
      ...idempotency(options),
    });
    const cell = readCell(answer.cell);
    const index = readNumber(answer, 'index', 'insert_cell answer');
    this.applyChange(readNumber(answer, 'document_version', 'insert_cell answer'), () => this.placeCell(cell, index));
    return cell;
  }

  public async updateCell(
    cellId: string,
    patch: { readonly source?: string; readonly cellType?: CellType },
    options?: MutationOptions,
  ): Promise<NotebookCell> {
    const answer = await this.request({
      type: 'update_cell',
      cell_id: cellId,
      ...(patch.source === undefined ? {} : { source: patch.source }),
      ...(patch.cellType === undefined ? {} : { cell_type: patch.cellType }),
      ...idempotency(options),
    });
    const cell = readCell(answer.cell);
    this.applyChange(readNumber(answer, 'document_version', 'update_cell answer'), () => this.replaceCell(cell));
    return cell;
  }

  public async deleteCell(cellId: string, options?: MutationOptions): Promise<void> {
    const answer = await this.request({ type: 'delete_cell', cell_id: cellId, ...idempotency(options) });
    this.applyChange(readNumber(answer, 'document_version', 'delete_cell answer'), () => this.removeCell(cellId));
  }

  public async moveCell(cellId: string, afterCellId: string | undefined, options?: MutationOptions): Promise<void> {
    const answer = await this.request({
      type: 'move_cell',
      cell_id: cellId,
      after_cell_id: afterCellId ?? null,
      ...idempotency(options),
    });
    const index = readNumber(answer, 'index', 'move_cell answer');
    this.applyChange(readNumber(answer, 'document_version', 'move_cell answer'), () =>
      this.relocateCell(cellId, index),
    );
  }

  public async clearOutputs(cellId: string, options?: MutationOptions): Promise<void> {
    const answer = await this.request({ type: 'clear_outputs', cell_id: cellId, ...idempotency(options) });
    const cell = readCell(answer.cell);
    this.applyChange(readNumber(answer, 'document_version', 'clear_outputs answer'), () => this.replaceCell(cell));
  }

  /**
   * Asks the daemon to run the cell, then follows its `execution_output` broadcasts (each passed
   * to `onOutput`) until `execution_done`, and returns the final state read with `get_execution`.
   * When `timeoutMs` passes first it resolves `timeout` with the outputs so far; the execution goes
   * on in the daemon (read it later with {@link RuntimedNotebookHandle.getExecution}). A repeated
   * idempotency key follows the first execution instead of starting another.
   * Does not guarantee that `onOutput` sees every output of a replayed execution (those that
   * arrived before this call are only in the result).
   */
  public async executeCell(cellId: string, options?: ExecuteOptions): Promise<ExecutionResult> {
    this.assertOpen();
    this.#executeRequestsInFlight += 1;
    let started: ExecutionState;
    let early: EarlyExecutionEvents | undefined;
    try {
      started = readExecutionState(
        await this.request({ type: 'execute_cell', cell_id: cellId, ...idempotency(options) }),
      );
      // Broadcasts of this execution that came in the same read as the answer were buffered.
      early = this.#earlyExecutionEvents.get(started.executionId);
      this.#earlyExecutionEvents.delete(started.executionId);
    } finally {
      this.#executeRequestsInFlight -= 1;
      if (this.#executeRequestsInFlight === 0) this.#earlyExecutionEvents.clear();
    }
    if (isFinalExecutionStatus(started.status)) return toResult(started, started.status);
    return this.followExecution(started.executionId, early, options);
  }

  public async getExecution(executionId: string): Promise<ExecutionState> {
    return readExecutionState(await this.request({ type: 'get_execution', execution_id: executionId }));
  }

  public async interruptKernel(): Promise<void> {
    await this.request({ type: 'interrupt' });
  }

  public async restartKernel(): Promise<void> {
    const seen = this.#runtimeBroadcasts;
    const answer = await this.request({ type: 'restart_kernel' });
    if (answer.runtime !== undefined) this.applyRuntimeAnswer(readRuntimeState(answer.runtime), seen);
  }

  /** Saves to `path` (absolute `.ipynb`) or to the bound file; binds `notebookPath` to what was written. */
  public async save(path?: string): Promise<SavedNotebook> {
    const answer = await this.request({ type: 'save', ...(path === undefined ? {} : { path }) });
    const saved = readString(answer, 'notebook_path', 'save answer');
    this.#notebookPath = saved;
    return { notebookId: readOptionalString(answer, 'notebook_id', 'save answer') ?? this.notebookId, path: saved };
  }

  /**
   * Closes our connection (our peer leaves the room; other peers are untouched). Idempotent. Says
   * `leave` first (waiting at most {@link leaveTimeoutMs}), so the daemon knows this peer went on
   * purpose and keeps the kernel only for the normal keep-alive; a connection that just drops
   * counts as a crashed client, for which the daemon keeps the kernel longer.
   */
  public async close(): Promise<void> {
    if (this.#closedReason !== undefined) return;
    this.finish('closed', 'closed by the client');
    if (!this.#connection.isClosed) {
      let timer: Timer | undefined;
      await Promise.race([
        this.#connection.request({ type: 'leave' }).catch(() => undefined),
        new Promise<void>((resolve) => {
          timer = this.#clock.setTimer(leaveTimeoutMs, resolve);
        }),
      ]);
      timer?.cancel();
    }
    this.#connection.close();
  }

  /** Called once with why the handle closed; called at once when it already has. */
  public onDidClose(listener: (reason: NotebookHandleCloseReason) => void): Subscription {
    if (this.#closedReason !== undefined) {
      this.callCloseListener(listener, this.#closedReason);
      return { dispose: () => undefined };
    }
    const entry = { listener };
    this.#closeListeners.add(entry);
    return { dispose: () => this.#closeListeners.delete(entry) };
  }

  private async followExecution(
    executionId: string,
    early: EarlyExecutionEvents | undefined,
    options: ExecuteOptions | undefined,
  ): Promise<ExecutionResult> {
    let timer: Timer | undefined;
    let watcher: ExecutionWatcher | undefined;
    const outcome = new Promise<FinalExecutionStatus | 'timeout'>((resolve, reject) => {
      watcher = {
        output: (output) => this.deliverOutput(options, output),
        done: resolve,
        fail: reject,
      };
      for (const output of early?.outputs ?? []) watcher.output(output);
      if (early?.done !== undefined) resolve(early.done);
      if (options?.timeoutMs !== undefined) timer = this.#clock.setTimer(options.timeoutMs, () => resolve('timeout'));
    });
    // Settled by `fail` when the handle closes, possibly while nobody awaits it yet.
    outcome.catch(() => undefined);
    const registered = watcher as ExecutionWatcher;
    let watchers = this.#executionWatchers.get(executionId);
    if (!watchers) {
      watchers = new Set();
      this.#executionWatchers.set(executionId, watchers);
    }
    watchers.add(registered);
    try {
      // A replayed key answers the first execution's `queued` even when it finished long ago (no
      // more broadcasts will come), and a `done` may have raced with registering: look once.
      const now = await this.getExecution(executionId);
      if (isFinalExecutionStatus(now.status)) return toResult(now, now.status);
      const status = await outcome;
      const final = await this.getExecution(executionId);
      if (isFinalExecutionStatus(final.status)) return toResult(final, final.status);
      return toResult(final, status);
    } finally {
      timer?.cancel();
      watchers.delete(registered);
      if (watchers.size === 0 && this.#executionWatchers.get(executionId) === watchers) {
        this.#executionWatchers.delete(executionId);
      }
    }
  }

  private deliverOutput(options: ExecuteOptions | undefined, output: CellOutput): void {
    try {
      options?.onOutput?.(output);
    } catch (error) {
      this.#logger.warn('an onOutput callback threw; the execution goes on', { notebookId: this.notebookId, error });
    }
  }

  private onFrame(frame: RuntimedFrame): void {
    if (this.#closedReason !== undefined) return;
    if (frame.type === 'room_closed') {
      const why = typeof frame.reason === 'string' ? frame.reason : 'the room was closed';
      // A room that closed because the whole daemon stops is a lost connection (rejoin later),
      // not a removed notebook.
      this.finish(frame.code === 'daemon_shutdown' ? 'disconnected' : 'room-removed', why);
      this.#connection.close();
      return;
    }
    if (frame.type !== 'broadcast') return;
    try {
      this.onBroadcast(frame);
    } catch (error) {
      // A broadcast we cannot read may have changed the document: stop trusting the cache.
      this.#cellsStale = true;
      this.#logger.warn('ignored a broadcast that could not be read', { notebookId: this.notebookId, error });
    }
  }

  private onBroadcast(frame: RuntimedFrame): void {
    switch (frame.event) {
      case 'cell_inserted': {
        const cell = readCell(frame.cell);
        const index = readNumber(frame, 'index', 'cell_inserted');
        this.applyChange(readNumber(frame, 'document_version', 'cell_inserted'), () => this.placeCell(cell, index));
        return;
      }
      case 'cell_updated': {
        const cell = readCell(frame.cell);
        this.applyChange(readNumber(frame, 'document_version', 'cell_updated'), () => this.replaceCell(cell));
        return;
      }
      case 'cell_deleted': {
        const cellId = readString(frame, 'cell_id', 'cell_deleted');
        this.applyChange(readNumber(frame, 'document_version', 'cell_deleted'), () => this.removeCell(cellId));
        return;
      }
      case 'cell_moved': {
        const cellId = readString(frame, 'cell_id', 'cell_moved');
        const index = readNumber(frame, 'index', 'cell_moved');
        this.applyChange(readNumber(frame, 'document_version', 'cell_moved'), () => this.relocateCell(cellId, index));
        return;
      }
      case 'saved':
        this.#notebookPath = readString(frame, 'notebook_path', 'saved');
        return;
      case 'runtime':
        this.#runtimeBroadcasts += 1;
        this.setRuntime(readRuntimeState(frame.runtime));
        return;
      case 'execution_output': {
        const executionId = readString(frame, 'execution_id', 'execution_output');
        const output = readOutput(frame.output, 'execution output');
        const watchers = this.#executionWatchers.get(executionId);
        if (watchers) for (const watcher of [...watchers]) watcher.output(output);
        else this.earlyEvents(executionId)?.outputs.push(output);
        return;
      }
      case 'execution_done': {
        const executionId = readString(frame, 'execution_id', 'execution_done');
        const status = readString(frame, 'status', 'execution_done');
        const final: FinalExecutionStatus = isFinalExecutionStatus(status) ? status : 'aborted';
        const watchers = this.#executionWatchers.get(executionId);
        if (watchers) for (const watcher of [...watchers]) watcher.done(final);
        else {
          const early = this.earlyEvents(executionId);
          if (early) early.done = final;
        }
        return;
      }
      default:
        // peer_joined, peer_left and anything newer: nothing this handle keeps.
        return;
    }
  }

  /** Buffers execution broadcasts only while an `execute_cell` answer is on its way (it may be ours). */
  private earlyEvents(executionId: string): EarlyExecutionEvents | undefined {
    if (this.#executeRequestsInFlight === 0) return undefined;
    let events = this.#earlyExecutionEvents.get(executionId);
    if (!events) {
      events = { outputs: [], done: undefined };
      this.#earlyExecutionEvents.set(executionId, events);
    }
    return events;
  }

  /**
   * Applies a change named by `version` when it is the next one; ignores one already reflected (a
   * replayed answer); a gap (or a change that does not fit the cache) makes the cache stale.
   */
  private applyChange(version: number, apply: () => boolean): void {
    this.#newestSeenVersion = Math.max(this.#newestSeenVersion, version);
    if (this.#cellsStale || version <= this.#documentVersion) return;
    if (version !== this.#documentVersion + 1 || !apply()) {
      this.#cellsStale = true;
      return;
    }
    this.#documentVersion = version;
  }

  private placeCell(cell: NotebookCell, index: number): boolean {
    if (index < 0 || index > this.#cells.length || this.#cells.some((existing) => existing.id === cell.id))
      return false;
    this.#cells.splice(index, 0, cell);
    return true;
  }

  private replaceCell(cell: NotebookCell): boolean {
    const index = this.#cells.findIndex((existing) => existing.id === cell.id);
    if (index < 0) return false;
    this.#cells[index] = cell;
    return true;
  }

  private removeCell(cellId: string): boolean {
    const index = this.#cells.findIndex((existing) => existing.id === cellId);
    if (index < 0) return false;
    this.#cells.splice(index, 1);
    return true;
  }

  private relocateCell(cellId: string, index: number): boolean {
    const from = this.#cells.findIndex((existing) => existing.id === cellId);
    if (from < 0 || index < 0 || index >= this.#cells.length) return false;
    const [cell] = this.#cells.splice(from, 1) as [NotebookCell];
    this.#cells.splice(index, 0, cell);
    return true;
  }

  /** Replaces the cache with a snapshot unless the cache already reflects a newer version. */
  private applySnapshot(version: number, cells: NotebookCell[]): void {
    if (!this.#cellsStale && version <= this.#documentVersion) return;
    this.#cells = cells;
    this.#documentVersion = version;
    // Broadcasts newer than the snapshot that arrived before it was applied were not kept.
    this.#cellsStale = this.#newestSeenVersion > version;
  }

  private refreshCells(): Promise<void> {
    this.#refreshing ??= this.request({ type: 'get_cells' })
      .then((answer) =>
        this.applySnapshot(readNumber(answer, 'document_version', 'get_cells answer'), readCells(answer, 'get_cells')),
      )
      .finally(() => {
        this.#refreshing = undefined;
      });
    return this.#refreshing;
  }

  private async resynchronise(): Promise<void> {
    const seen = this.#runtimeBroadcasts;
    const [runtime, cells] = await Promise.allSettled([
      this.request({ type: 'get_runtime' }).then((answer) => readRuntimeState(answer.runtime)),
      this.refreshCells(),
    ]);
    if (runtime.status === 'fulfilled') this.applyRuntimeAnswer(runtime.value, seen);
    if (cells.status === 'rejected' && !this.isClosed) {
      this.#cellsStale = true;
      this.#logger.debug('could not refresh the cells after connecting', {
        notebookId: this.notebookId,
        error: cells.reason,
      });
    }
  }

  /**
   * An answer's runtime is the state when the daemon answered. A runtime broadcast seen while the
   * request was out is either older than the answer (then equal to it: every change is broadcast)
   * or newer, so the broadcast wins.
   */
  private applyRuntimeAnswer(runtime: WireRuntimeState, broadcastsBefore: number): void {
    if (this.#runtimeBroadcasts !== broadcastsBefore) return;
    this.setRuntime(runtime);
  }

  private setRuntime(runtime: WireRuntimeState): void {
    this.#runtime = runtime;
    for (const wake of [...this.#readinessWaiters]) wake();
  }

  private async request(
    message: Readonly<Record<string, unknown>> & { readonly type: string },
  ): Promise<RuntimedFrame> {
    this.assertOpen();
    try {
      return await this.#connection.request(message);
    } catch (error) {
      if (this.#closedReason !== undefined || this.#connection.isClosed) throw this.closedError(error);
      const converted = toCoreError(error);
      if (CoreError.is(converted)) throw converted;
      throw new CoreError('daemonUnavailable', `Request '${message.type}' failed: ${(error as Error).message}`, {
        cause: error,
      });
    }
  }

  private finish(reason: NotebookHandleCloseReason, detail: string): void {
    if (this.#closedReason !== undefined) return;
    this.#closedReason = reason;
    for (const subscription of this.#subscriptions.splice(0)) subscription.dispose();
    if (reason !== 'closed') {
      this.#logger.info('notebook connection closed', { notebookId: this.notebookId, reason, detail });
    }
    const error = this.closedError();
    for (const watchers of this.#executionWatchers.values()) for (const watcher of [...watchers]) watcher.fail(error);
    this.#executionWatchers.clear();
    this.#earlyExecutionEvents.clear();
    for (const wake of [...this.#readinessWaiters]) wake();
    const listeners = [...this.#closeListeners];
    this.#closeListeners.clear();
    for (const { listener } of listeners) this.callCloseListener(listener, reason);
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

  private closedError(cause?: unknown): CoreError {
    return new CoreError(
      'handleClosed',
      `Notebook ${this.notebookId} connection is closed (${this.#closedReason ?? 'disconnected'})`,
      cause === undefined ? undefined : { cause },
    );
  }
}

function idempotency(options: MutationOptions | undefined): { idempotency_key?: string } {
  return options?.idempotencyKey === undefined ? {} : { idempotency_key: options.idempotencyKey };
}

function toResult(state: ExecutionState, status: ExecutionResult['status']): ExecutionResult {
  return {
    executionId: state.executionId,
    cellId: state.cellId,
    status,
    outputs: state.outputs,
    executionCount: state.executionCount,
    ...(state.kernelNotice === undefined ? {} : { kernelNotice: state.kernelNotice }),
  };
}
