import {
  type CellActivity,
  type CellActivityPage,
  type CellType,
  type Clock,
  CoreError,
  cellChangesBetween,
  type DaemonIncarnation,
  type ExecuteOptions,
  type ExecutionResult,
  type ExecutionState,
  type InputRequest,
  type InsertCellRequest,
  type KernelInterruptOutcome,
  type Logger,
  type MutationOptions,
  type NotebookCell,
  type NotebookCellChange,
  type NotebookCondition,
  type NotebookHandle,
  type NotebookHandleCloseReason,
  type NotebookReadiness,
  type OutputsPageRequest,
  ReadinessWaiters,
  type SavedNotebook,
  type Subscription,
  type Timer,
  type UpdatedCell,
} from '@nteract-mcp/core';
import { ListenerSet } from '@nteract-mcp/foundation';
import {
  checkWire,
  outputEditOf,
  type RuntimedConnection,
  type RuntimedFrame,
  type WireNotebookAnswer,
  type WireNotebookRequest,
  type WireRuntimeState,
  wireNotebookConnectedSchema,
  wireRoomClosedSchema,
  wireRoomEventNames,
  wireRoomEventSchema,
} from '@nteract-mcp/runtimed-protocol';
import { BlobReferenceResolver } from './blob-reference-resolver.js';
import { ExecutionFollower } from './execution-follower.js';
import { type CellChange, cellAfterSourceEdit, RetainedProjection } from './retained-projection.js';
import { RuntimedExecutionControls } from './runtimed-execution-controls.js';
import { RuntimedRoomNotes } from './runtimed-room-notes.js';
import {
  readFromDaemon,
  toCellActivity,
  toCellChange,
  toCellNotice,
  toExecutionState,
  toIncarnation,
  toNotebookCell,
  toReadiness,
  toUpdateChange,
} from './runtimed-wire-readers.js';
import { editFields, executeFields, mutationFields } from './runtimed-wire-writers.js';
import { absentWhenNotFound, requestFailure } from './to-core-error.js';

/** How long {@link RuntimedNotebookHandle.close} waits for the daemon to answer `leave`. */
export const leaveTimeoutMs = 1000;

/** What a {@link RuntimedNotebookHandle} needs besides its connection. */
export interface RuntimedNotebookHandleOptions {
  readonly clock: Clock;
  readonly logger: Logger;
}

/**
 * One peer connection to a room of the local daemon `runtimed` (notebook channel), behind core's
 * {@link NotebookHandle} port. Built by `RuntimedDaemonPort` from an open connection and the
 * daemon's `connected` greeting; not meant to be constructed by anyone else.
 *
 * Guarantees:
 * - `daemonIncarnation` is the daemon life named by the greeting (`daemon_pid`, `daemon_started_at`).
 * - The cell list starts from the greeting and follows our own answers and the room's broadcasts in
 *   document-version order (a {@link RetainedProjection}); a gap in versions (a broadcast we could
 *   not place) makes the next read fetch the whole list again instead of serving a cache that may
 *   be wrong.
 * - Every mutation carries `idempotency_key` when `options.idempotencyKey` is given.
 * - Large output values stay blob references in the copy (the daemon's blob store holds them);
 *   every cell and execution handed out holds their texts (a {@link BlobReferenceResolver}).
 * - Every change the cell list takes (our answers, the room's broadcasts, outputs of executions,
 *   a list fetched again, told as what differs from the copy it replaced) is told to the
 *   `onDidChangeCells` listeners once the copy shows it; while any listens, a stale copy is
 *   fetched again at once, so no change stays untold.
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
  public readonly kernelName: string | undefined;
  public readonly comments: NonNullable<NotebookHandle['comments']>;
  readonly #connection: RuntimedConnection;
  readonly #clock: Clock;
  readonly #logger: Logger;
  #notebookPath: string | undefined;
  /** The cells, kept by document version; a stale one is fetched again on the next read. */
  readonly #projection: RetainedProjection;
  readonly #executions: ExecutionFollower;
  readonly #blobs: BlobReferenceResolver;
  #refreshing: Promise<void> | undefined;
  #runtime: WireRuntimeState;
  /** Counts runtime broadcasts, to tell whether an answer's runtime may be older than one we saw. */
  #runtimeBroadcasts = 0;
  #closedReason: NotebookHandleCloseReason | undefined;
  readonly #initialSync: Promise<void>;
  readonly #closeListeners: ListenerSet<NotebookHandleCloseReason>;
  readonly #changeListeners: ListenerSet<NotebookCellChange>;
  readonly #controls: RuntimedExecutionControls;
  readonly #readinessWaiters = new ReadinessWaiters(
    () => this.readiness(),
    () => (this.#closedReason === undefined ? undefined : this.closedError()),
  );
  readonly #subscriptions: Subscription[] = [];
  /** The room's conditions, notices and comment changes, and the comments capability. */
  readonly #notes: RuntimedRoomNotes;

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
    const connected = readFromDaemon(wireNotebookConnectedSchema, greeting, 'notebook greeting');
    this.notebookId = connected.notebook_id;
    this.daemonIncarnation = toIncarnation(connected.daemon_pid, connected.daemon_started_at);
    this.#notebookPath = connected.notebook_path ?? undefined;
    this.#projection = new RetainedProjection(connected.document_version, connected.cells.map(toNotebookCell));
    this.#blobs = new BlobReferenceResolver(connected.blob_dir);
    this.#runtime = connected.runtime;
    this.#notes = new RuntimedRoomNotes(connected, (message) => this.request(message));
    this.comments = this.#notes.comments;
    this.kernelName = connected.kernel_name;
    this.#connection = connection;
    this.#clock = options.clock;
    this.#logger = options.logger.child('plugin-local-daemon:RuntimedNotebookHandle');
    const logThrown = (what: string) => (error: unknown) =>
      this.#logger.error(`an ${what} listener threw`, { notebookId: this.notebookId, error });
    this.#closeListeners = new ListenerSet(logThrown('onDidClose'));
    this.#changeListeners = new ListenerSet(logThrown('onDidChangeCells'));
    this.#controls = new RuntimedExecutionControls({
      request: (message) => this.request(message),
      clock: options.clock,
      onListenerError: logThrown('onInputRequest'),
    });
    this.#executions = new ExecutionFollower({
      clock: options.clock,
      readExecution: (executionId) => this.getExecution(executionId),
      onCallbackError: (error) =>
        this.#logger.warn('an execution callback or cancellation failed; the execution goes on', {
          notebookId: this.notebookId,
          error,
        }),
      cancelExecution: (executionId) => this.request({ type: 'cancel_execution', execution_id: executionId }),
    });
    this.#subscriptions.push(connection.onFrame((frame) => this.onFrame(frame)));
    this.#subscriptions.push(connection.onClose((reason) => this.finish('disconnected', reason)));
    // Frames that followed the greeting in the same read reached no listener yet (the connection
    // hands out the greeting first), so ask once for what they may have changed.
    this.#initialSync = this.resynchronise();
  }

  public get notebookPath(): string | undefined {
    return this.#notebookPath;
  }

  /** The room's document version as this handle's retained projection last saw it. */
  public get documentVersion(): number {
    return this.#projection.version;
  }

  /** Own: our answers, and the outputs and ends of the runs we follow (see {@link RetainedProjection}). */
  public get othersChangeCount(): number {
    return this.#projection.othersChangeCount;
  }

  public async getChanges(since?: string): Promise<CellActivityPage> {
    const answer = await this.request({ type: 'get_changes', ...(since === undefined ? {} : { since }) });
    return {
      cursor: answer.cursor,
      activities: answer.changes.map(toCellActivity),
      complete: answer.complete,
      ...(answer.note === undefined ? {} : { note: answer.note }),
    };
  }

  /** The room broadcasts what the undo changed to every peer, this one too: the projection follows. */
  public async undo(count: number, options?: MutationOptions): Promise<readonly CellActivity[]> {
    const answer = await this.request({ type: 'undo', count, ...mutationFields(options) });
    return answer.undone.map(toCellActivity);
  }

  /** The room's conditions, from the greeting and every `conditions` broadcast since. */
  public get conditions(): readonly NotebookCondition[] {
    return this.#notes.conditions;
  }

  public takeNotices(): readonly string[] {
    return this.#notes.take();
  }

  public get isClosed(): boolean {
    return this.#closedReason !== undefined;
  }

  public get closedReason(): NotebookHandleCloseReason | undefined {
    return this.#closedReason;
  }

  /** Document `ready` (the greeting carries the whole document); runtime from the daemon's state ({@link toReadiness}). */
  public readiness(): NotebookReadiness {
    return toReadiness(this.#runtime);
  }

  public waitUntilReady(signal?: AbortSignal): Promise<NotebookReadiness> {
    return this.#readinessWaiters.wait(signal);
  }

  public async listCells(): Promise<readonly NotebookCell[]> {
    this.assertOpen();
    await this.#initialSync;
    if (this.#projection.isStale) await this.refreshCells();
    this.assertOpen();
    return this.#blobs.cells(this.#projection.cells());
  }

  /** From the cache when it holds the cell, else asks the daemon. Rejects `cellNotFound` (`Cell not found: <id>`). */
  public async getCell(cellId: string): Promise<NotebookCell> {
    this.assertOpen();
    await this.#initialSync;
    const cached = this.#projection.find(cellId);
    if (cached) return this.#blobs.cell(cached);
    try {
      return this.#blobs.cell(toNotebookCell((await this.request({ type: 'get_cell', cell_id: cellId })).cell));
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
      ...mutationFields(options),
    });
    const cell = toNotebookCell(answer.cell);
    this.applyChange({ kind: 'insert', cell, index: answer.index, version: answer.document_version }, true);
    return cell;
  }

  public async updateCell(
    cellId: string,
    patch: { readonly source?: string; readonly cellType?: CellType },
    options?: MutationOptions,
  ): Promise<UpdatedCell> {
    const answer = await this.request({
      type: 'update_cell',
      cell_id: cellId,
      ...(patch.source === undefined ? {} : { source: patch.source }),
      ...(patch.cellType === undefined ? {} : { cell_type: patch.cellType }),
      ...editFields(options),
    });
    const change = toUpdateChange(answer);
    this.applyChange(change, true);
    // A source edit (answered so: this peer declared `source_edits`) left the outputs where they were.
    const cell =
      change.kind === 'update'
        ? change.cell
        : cellAfterSourceEdit(await this.getCell(cellId).catch(absentWhenNotFound), change.cell);
    return this.#blobs.cell(answer.replaced === undefined ? cell : { ...cell, replaced: answer.replaced });
  }

  public async deleteCell(cellId: string, options?: MutationOptions): Promise<void> {
    const answer = await this.request({
      type: 'delete_cell',
      cell_id: cellId,
      ...editFields(options),
    });
    this.applyChange({ kind: 'delete', cellId, version: answer.document_version }, true);
  }

  public async moveCell(cellId: string, afterCellId: string | undefined, options?: MutationOptions): Promise<void> {
    const answer = await this.request({
      type: 'move_cell',
      cell_id: cellId,
      after_cell_id: afterCellId ?? null,
      ...mutationFields(options),
    });
    this.applyChange({ kind: 'move', cellId, index: answer.index, version: answer.document_version }, true);
  }

  public async clearOutputs(cellId: string, options?: MutationOptions): Promise<void> {
    const answer = await this.request({
      type: 'clear_outputs',
      cell_id: cellId,
      ...mutationFields(options),
    });
    this.applyChange({ kind: 'update', cell: toNotebookCell(answer.cell), version: answer.document_version }, true);
  }

  /**
   * Asks the daemon to run the cell and follows its output events until `execution_done` (no
   * `get_execution` read: one round trip); at `timeoutMs` resolves `timeout` with the outputs so
   * far (the run goes on; read it with {@link RuntimedNotebookHandle.getExecution}). A repeated
   * idempotency key follows the first execution; see {@link ExecutionFollower} for the rest.
   */
  public async executeCell(cellId: string, options?: ExecuteOptions): Promise<ExecutionResult> {
    this.assertOpen();
    const start = async () =>
      toExecutionState(await this.request({ type: 'execute_cell', cell_id: cellId, ...executeFields(options) }));
    return this.#blobs.withOutputs(await this.#executions.follow(start, options));
  }

  public readonly onInputRequest = (listener: (request: InputRequest) => void) =>
    this.#controls.onInputRequest(listener);
  public readonly answerInput = (request: InputRequest, value?: string) => this.#controls.answerInput(request, value);
  public readonly cancelExecution = (executionId: string) => this.#controls.cancelExecution(executionId);
  public readonly startScratch = (source: string, options?: { allowInput?: boolean }) =>
    this.#controls.startScratch(source, options);
  public readonly runScratch = async (source: string, options?: { timeoutMs?: number }) =>
    this.#blobs.withOutputs(await this.#controls.runScratch(source, options));

  public async getExecution(executionId: string): Promise<ExecutionState> {
    return this.#blobs.withOutputs(
      toExecutionState(await this.request({ type: 'get_execution', execution_id: executionId })),
    );
  }

  public readonly getExecutionPage = (executionId: string, page: OutputsPageRequest) =>
    this.#controls.getExecutionPage(executionId, page);

  public async interruptKernel(): Promise<KernelInterruptOutcome> {
    const answer = await this.request({ type: 'interrupt' });
    // A daemon before `outcome` answered only `interrupted: true`.
    return answer.outcome ?? 'interrupted';
  }

  public async restartKernel(): Promise<void> {
    const seen = this.#runtimeBroadcasts;
    const answer = await this.request({ type: 'restart_kernel' });
    this.applyRuntimeAnswer(answer.runtime, seen);
  }

  /** Saves to `path` (absolute `.ipynb`) or to the bound file; binds `notebookPath` to what was written. */
  public async save(path?: string): Promise<SavedNotebook> {
    const answer = await this.request({ type: 'save', ...(path === undefined ? {} : { path }) });
    this.#notebookPath = answer.notebook_path;
    return { notebookId: answer.notebook_id, path: answer.notebook_path };
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
        this.#connection.requestNotebook({ type: 'leave' }).catch(() => undefined),
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
    const subscription = this.#closeListeners.add(listener);
    // Closed already: told now, as the others were.
    if (this.#closedReason !== undefined) this.#closeListeners.tellOnce(this.#closedReason);
    return subscription;
  }

  /** Called with each change to the cells from now on (see the class guarantees); never after the handle closed. */
  public onDidChangeCells(listener: (change: NotebookCellChange) => void): Subscription {
    const subscription = this.#changeListeners.add(listener);
    // A copy that went stale while nobody listened is fetched again now: nothing stays untold.
    this.catchUp();
    return subscription;
  }

  private onFrame(frame: RuntimedFrame): void {
    if (this.#closedReason !== undefined) return;
    if (frame.type === 'room_closed') {
      // Closed it is, even when the frame says little more: then the notebook counts as removed.
      const closed = checkWire(wireRoomClosedSchema, frame);
      const why = closed.ok ? closed.value.reason : 'the room was closed';
      // A room that closed because the whole daemon stops is a lost connection (rejoin later),
      // not a removed notebook.
      this.finish(closed.ok && closed.value.code === 'daemon_shutdown' ? 'disconnected' : 'room-removed', why);
      this.#connection.close();
      return;
    }
    // Not a broadcast, or an event a newer daemon has: nothing this handle keeps.
    if (frame.type !== 'broadcast' || !wireRoomEventNames.has(String(frame.event))) return;
    try {
      this.onBroadcast(frame);
    } catch (error) {
      // A broadcast we cannot read may have changed the document: stop trusting the cache.
      this.#projection.markStale();
      this.#logger.warn('ignored a broadcast that could not be read', { notebookId: this.notebookId, error });
    }
  }

  private onBroadcast(frame: RuntimedFrame): void {
    const event = readFromDaemon(wireRoomEventSchema, frame, `'${String(frame.event)}' broadcast`);
    switch (event.event) {
      case 'cell_inserted':
      case 'cell_updated':
      case 'cell_source_set':
      case 'cell_deleted':
      case 'cell_moved':
        this.applyChange(toCellChange(event));
        return;
      case 'saved':
        this.#notebookPath = event.notebook_path;
        return;
      case 'runtime':
        this.#runtimeBroadcasts += 1;
        this.setRuntime(event.runtime);
        return;
      case 'output_set':
      case 'stream_appended':
      case 'outputs_cleared': {
        const edit = outputEditOf(event);
        const own = this.#executions.follows(event.execution_id);
        this.applyChange({ kind: 'outputs', cellId: event.cell_id, edit, version: event.document_version }, own);
        this.#executions.edited(event.execution_id, event.seq, edit);
        return;
      }
      case 'execution_output':
        // A daemon before the output edits: the output whole (a `cell_updated` carries the cell).
        this.#executions.output(event.execution_id, event.output);
        return;
      case 'execution_done': {
        const { cell_id: cellId, execution_count: executionCount, document_version: version } = event;
        const own = this.#executions.follows(event.execution_id);
        if (version !== undefined) this.applyChange({ kind: 'count', cellId, executionCount, version }, own);
        // The run's large values went to the blob store: the copy holds references, not the texts.
        const replaced = version !== undefined && this.#projection.replaceOutputs(cellId, version, event.blob_outputs);
        if (replaced) this.#blobs.dropped(replaced);
        this.#executions.done(event);
        return;
      }
      case 'input_request':
        this.#controls.received(event);
        return;
      case 'conditions':
      case 'notice':
      case 'comment_thread':
        this.#notes.told(event);
        return;
      case 'peer_joined':
      case 'peer_left':
      case 'presence':
        return;
    }
  }

  /** Applies `change` (`own`: ours) to the copy; tells it when applied, fetches the list again when it could not be placed. */
  private applyChange(change: CellChange, own = false): void {
    const outcome = this.#projection.apply(change, own);
    if (outcome === 'applied') {
      this.tellChange(toCellNotice(change));
    } else if (outcome === 'refetch') {
      this.catchUp();
    }
  }

  /** While anyone listens for changes and the copy is stale: fetch the list again (and again while it stays stale). */
  private catchUp(): void {
    if (this.#changeListeners.size === 0 || this.#closedReason !== undefined || !this.#projection.isStale) return;
    this.refreshCells().then(
      () => this.catchUp(),
      (error: unknown) =>
        this.#logger.debug('could not fetch the cells again after a change', { notebookId: this.notebookId, error }),
    );
  }

  private tellChange(change: NotebookCellChange): void {
    this.#changeListeners.tell(change);
  }

  private refreshCells(): Promise<void> {
    this.#refreshing ??= this.request({ type: 'get_cells' })
      .then((answer) => {
        const before = this.#projection.cells();
        const outcome = this.#projection.applySnapshot(answer.document_version, answer.cells.map(toNotebookCell));
        if (outcome === 'reflected') return;
        for (const change of cellChangesBetween(before, this.#projection.cells())) this.tellChange(change);
      })
      .finally(() => {
        this.#refreshing = undefined;
      });
    return this.#refreshing;
  }

  private async resynchronise(): Promise<void> {
    const seen = this.#runtimeBroadcasts;
    const [runtime, cells] = await Promise.allSettled([
      this.request({ type: 'get_runtime' }).then((answer) => answer.runtime),
      this.refreshCells(),
    ]);
    if (runtime.status === 'fulfilled') this.applyRuntimeAnswer(runtime.value, seen);
    if (cells.status === 'rejected' && !this.isClosed) {
      this.#projection.markStale();
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
    this.#readinessWaiters.wake();
  }

  /** Sends a request and reads its answer with the answer's schema; only {@link CoreError}s are thrown. */
  private async request<R extends WireNotebookRequest>(message: R): Promise<WireNotebookAnswer<R['type']>> {
    this.assertOpen();
    try {
      return await this.#connection.requestNotebook(message);
    } catch (error) {
      if (this.#closedReason !== undefined || this.#connection.isClosed) throw this.closedError(error);
      throw requestFailure(message.type, error);
    }
  }

  private finish(reason: NotebookHandleCloseReason, detail: string): void {
    if (this.#closedReason !== undefined) return;
    this.#closedReason = reason;
    for (const subscription of this.#subscriptions.splice(0)) subscription.dispose();
    if (reason !== 'closed') {
      this.#logger.info('notebook connection closed', { notebookId: this.notebookId, reason, detail });
    }
    this.#executions.close(this.closedError());
    this.#readinessWaiters.wake();
    this.#changeListeners.clear();
    this.#controls.clear();
    this.#closeListeners.tellOnce(reason);
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
