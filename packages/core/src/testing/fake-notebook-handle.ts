import { randomUUID } from 'node:crypto';
import { OutputsDocument } from '@nteract-mcp/output-shaping';
import { CoreError } from '../errors/core-error.js';
import type { DaemonIncarnation } from '../notebook-target/daemon-incarnation.js';
import type {
  CellActivity,
  CellActivityPage,
  CellOutput,
  CellType,
  ExecuteOptions,
  ExecutionPage,
  ExecutionResult,
  ExecutionState,
  InsertCellRequest,
  KernelInterruptOutcome,
  MutationOptions,
  NotebookCell,
  NotebookCellChange,
  NotebookCondition,
  NotebookHandle,
  NotebookHandleCloseReason,
  NotebookReadiness,
  OutputsPageRequest,
  SavedNotebook,
  ScratchRun,
  Subscription,
  UpdatedCell,
} from '../ports/notebook-handle.js';
import { NotModelledError } from './not-modelled-error.js';

/**
 * What the fake kernel does with a cell: the outputs and the status of one execution. `running`
 * means it is still running when the wait ends: `executeCell` resolves `timeout` with these
 * outputs, and the execution stays `running` until {@link FakeNotebookHandle.completeExecution}.
 * `held`: it runs (with these outputs so far) and `executeCell` waits until
 * {@link FakeNotebookHandle.completeExecution} ends it, or its `signal` cancels it (as an interrupt
 * does: status `error`, a `KeyboardInterrupt` output, recorded in `cancelledExecutions`).
 */
export type FakeExecutor = (cell: NotebookCell) => {
  readonly status: 'ok' | 'error' | 'running' | 'held';
  readonly outputs: readonly CellOutput[];
};

export interface FakeNotebookHandleOptions {
  readonly notebookId?: string;
  readonly notebookPath?: string;
  readonly daemonIncarnation?: DaemonIncarnation;
  readonly readiness?: NotebookReadiness;
  readonly cells?: readonly Pick<NotebookCell, 'source' | 'cellType'>[];
  /** Without one, executing a cell throws a `NotModelledError`. */
  readonly executor?: FakeExecutor;
  /** The peer label the handle was opened with (recorded only; the fake has no other peers). */
  readonly peerLabel?: string;
  /** The kernelspec name the handle reports (default none: taken as Python). */
  readonly kernelName?: string;
  /**
   * Called before a save binds `path` (the daemon's check that no other room owns the path);
   * throwing refuses the save. {@link FakeDaemonPort} passes one.
   */
  readonly beforeSave?: (notebookId: string, path: string) => void;
  /**
   * Model the other peers of a notebook as a daemon does: cells carry a `version` and `editedBy`,
   * mutations check `expectedVersion` (`staleCell`) and an update says what it `replaced`, and a
   * change log answers `getChanges` ({@link FakeNotebookHandle.editAsPeer} plays another peer).
   * Without it the handle has no versions and no `getChanges`.
   */
  readonly peers?: boolean;
}

/**
 * An in-memory notebook behind the {@link NotebookHandle} port: cells, an idempotency ledger
 * (a repeated key returns the first result without applying again), readiness that tests move,
 * and closing. It records every call in `calls`. Every change to its cells is told to
 * {@link FakeNotebookHandle.onDidChangeCells} listeners, including another peer's a test plays
 * with {@link FakeNotebookHandle.editAsPeer}, {@link FakeNotebookHandle.insertAsPeer} or
 * {@link FakeNotebookHandle.deleteAsPeer}.
 */
export class FakeNotebookHandle implements NotebookHandle {
  public readonly notebookId: string;
  public readonly daemonIncarnation: DaemonIncarnation | undefined;
  /** The peer label given when the handle was opened, if any. */
  public readonly peerLabel: string | undefined;
  /** The kernelspec name reported; tests may set it to play a notebook in another kernel. */
  public kernelName: string | undefined;
  public readonly calls: string[] = [];
  public interruptCount = 0;
  /** What the next `interruptKernel` answers (a kernel that ignores the interrupt: `still_running`). */
  public interruptOutcome: KernelInterruptOutcome = 'interrupted';
  /** The executions a call's `signal` cancelled, in order. */
  public readonly cancelledExecutions: string[] = [];
  public kernelRestartCount = 0;
  /** Given to the next execution as its `kernelNotice` (as a daemon does after its kernel died), then cleared. */
  public nextKernelNotice: string | undefined;
  /** The idempotency key of every mutation, in order (`undefined` for one without). */
  public readonly mutationKeys: (string | undefined)[] = [];
  /** Mutations whose next call loses its answer, and whether it is applied first (see {@link FakeNotebookHandle.loseAnswerOf}). */
  readonly #losing = new Map<string, boolean>();
  /** What the owner reports now (tests set it, as a daemon's `conditions` broadcast would). */
  public conditions: readonly NotebookCondition[] = [];
  /** One-off notices not yet taken (tests push them, as a daemon's `notice` broadcast would). */
  public readonly notices: string[] = [];
  #notebookPath: string | undefined;
  #readiness: NotebookReadiness;
  #cells: NotebookCell[] = [];
  #nextCell = 1;
  #executionCount = 0;
  #closedReason: NotebookHandleCloseReason | undefined;
  readonly #executor: FakeExecutor | undefined;
  readonly #beforeSave: FakeNotebookHandleOptions['beforeSave'];
  readonly #ledger = new Map<string, unknown>();
  readonly #executions = new Map<string, ExecutionState>();
  /** Waiters of `held` executions, by id. */
  readonly #held = new Map<string, (state: ExecutionState) => void>();
  readonly #closeListeners = new Set<(reason: NotebookHandleCloseReason) => void>();
  readonly #readinessWaiters = new Set<() => void>();
  readonly #changeListeners = new Set<(change: NotebookCellChange) => void>();
  readonly #peers: boolean;
  readonly #activities: CellActivity[] = [];
  #documentVersion = 0;
  #othersChangeCount = 0;
  #nextVersion = 1;
  /** Present with the `peers` option: the change log since `since` (`fake.<document version>`). */
  public readonly getChanges?: (since?: string) => Promise<CellActivityPage>;

  public constructor(options: FakeNotebookHandleOptions = {}) {
    this.notebookId = options.notebookId ?? randomUUID();
    this.#notebookPath = options.notebookPath;
    this.daemonIncarnation = options.daemonIncarnation;
    this.#readiness = options.readiness ?? { document: 'ready', runtime: 'ready' };
    this.#executor = options.executor;
    this.peerLabel = options.peerLabel;
    this.kernelName = options.kernelName;
    this.#beforeSave = options.beforeSave;
    this.#peers = options.peers === true;
    for (const cell of options.cells ?? []) this.#cells.push(this.newCell(cell.source, cell.cellType));
    if (this.#peers) {
      this.getChanges = async (since) => {
        this.use('getChanges');
        const after = since === undefined ? 0 : Number(since.slice('fake.'.length));
        return {
          cursor: `fake.${this.#documentVersion}`,
          activities: this.#activities.filter((activity) => activity.documentVersion > after),
          complete: true,
        };
      };
    }
  }

  /** With the `peers` option: the document version, which every change raises. */
  public get documentVersion(): number | undefined {
    return this.#peers ? this.#documentVersion : undefined;
  }

  /** With the `peers` option: how many changes another peer (the `…AsPeer` methods) made. */
  public get othersChangeCount(): number | undefined {
    return this.#peers ? this.#othersChangeCount : undefined;
  }

  /** Another peer (`by`) replaces the cell's source, as a person in the live page would. */
  public editAsPeer(by: string, cellId: string, source: string): NotebookCell {
    const index = this.indexOf(cellId);
    const cell = { ...this.cellAt(index), source, ...this.stamp(by) };
    this.#cells[index] = cell;
    this.changed('updated', cellId);
    this.logActivity(by, 'edited', cellId);
    return cell;
  }

  /** Another peer (`by`) appends a code cell; returns it. */
  public insertAsPeer(by: string, source: string): NotebookCell {
    const cell = { ...this.newCell(source, 'code'), ...this.stamp(by) };
    this.#cells.push(cell);
    this.changed('inserted', cell.id);
    this.logActivity(by, 'inserted', cell.id);
    return cell;
  }

  /** Another peer (`by`) deletes the cell. */
  public deleteAsPeer(by: string, cellId: string): void {
    this.#cells.splice(this.indexOf(cellId), 1);
    this.changed('deleted', cellId);
    this.logActivity(by, 'deleted', cellId);
  }

  public get notebookPath(): string | undefined {
    return this.#notebookPath;
  }

  public get isClosed(): boolean {
    return this.#closedReason !== undefined;
  }

  /** Why the handle closed, if it did. */
  public get closedReason(): NotebookHandleCloseReason | undefined {
    return this.#closedReason;
  }

  public readiness(): NotebookReadiness {
    return this.#readiness;
  }

  public takeNotices(): readonly string[] {
    return this.notices.splice(0);
  }

  /** Moves readiness (e.g. from pending to ready) and wakes waiters. */
  public setReadiness(readiness: NotebookReadiness): void {
    this.#readiness = readiness;
    for (const wake of [...this.#readinessWaiters]) wake();
  }

  public waitUntilReady(signal?: AbortSignal): Promise<NotebookReadiness> {
    return new Promise((resolve, reject) => {
      const check = (): boolean => {
        if (this.#closedReason !== undefined) {
          reject(this.closedError());
        } else if (this.#readiness.document === 'failed') {
          reject(
            new CoreError(
              'daemonUnavailable',
              `Notebook ${this.notebookId} failed to load: ${this.#readiness.reason ?? 'unknown reason'}`,
            ),
          );
        } else if (signal?.aborted) {
          reject(signal.reason);
        } else if (this.#readiness.document === 'ready' && this.#readiness.runtime !== 'pending') {
          resolve(this.#readiness);
        } else {
          return false;
        }
        return true;
      };
      if (check()) return;
      const wake = (): void => {
        if (check()) {
          this.#readinessWaiters.delete(wake);
          signal?.removeEventListener('abort', wake);
        }
      };
      this.#readinessWaiters.add(wake);
      signal?.addEventListener('abort', wake, { once: true });
    });
  }

  public async listCells(): Promise<readonly NotebookCell[]> {
    this.use('listCells');
    return [...this.#cells];
  }

  public async getCell(cellId: string): Promise<NotebookCell> {
    this.use(`getCell:${cellId}`);
    return this.cellAt(this.indexOf(cellId));
  }

  public async insertCell(request: InsertCellRequest, options?: MutationOptions): Promise<NotebookCell> {
    return this.once('insertCell', options, () => {
      const cell = this.newCell(request.source, request.cellType);
      const index =
        request.index === undefined ? this.#cells.length : Math.max(0, Math.min(request.index, this.#cells.length));
      this.#cells.splice(index, 0, cell);
      this.changed('inserted', cell.id);
      this.logActivity(this.ownLabel, 'inserted', cell.id);
      return cell;
    });
  }

  public async updateCell(
    cellId: string,
    patch: { readonly source?: string; readonly cellType?: CellType },
    options?: MutationOptions,
  ): Promise<UpdatedCell> {
    return this.once(`updateCell:${cellId}`, options, () => {
      const index = this.checkExpected(cellId, options);
      const before = this.cellAt(index);
      const cell = {
        ...before,
        ...(patch.source !== undefined ? { source: patch.source } : {}),
        ...(patch.cellType ? { cellType: patch.cellType } : {}),
        ...this.stamp(this.ownLabel),
      };
      this.#cells[index] = cell;
      this.changed('updated', cellId);
      this.logActivity(this.ownLabel, 'edited', cellId);
      const seen = options?.seenVersion;
      const replaced =
        seen !== undefined && before.version !== seen && before.editedBy !== this.ownLabel
          ? { by: before.editedBy ?? 'unknown', version: before.version as string }
          : undefined;
      return replaced ? { ...cell, replaced } : cell;
    });
  }

  public async deleteCell(cellId: string, options?: MutationOptions): Promise<void> {
    this.once(`deleteCell:${cellId}`, options, () => {
      this.#cells.splice(this.checkExpected(cellId, options), 1);
      this.changed('deleted', cellId);
      this.logActivity(this.ownLabel, 'deleted', cellId);
    });
  }

  public async moveCell(cellId: string, afterCellId: string | undefined, options?: MutationOptions): Promise<void> {
    this.once(`moveCell:${cellId}`, options, () => {
      const [cell] = this.#cells.splice(this.checkExpected(cellId, options), 1);
      const at = afterCellId === undefined ? 0 : this.indexOf(afterCellId) + 1;
      this.#cells.splice(at, 0, cell as NotebookCell);
      this.changed('moved', cellId);
      this.logActivity(this.ownLabel, 'moved', cellId);
    });
  }

  public async clearOutputs(cellId: string, options?: MutationOptions): Promise<void> {
    this.once(`clearOutputs:${cellId}`, options, () => {
      const index = this.checkExpected(cellId, options);
      this.#cells[index] = { ...this.cellAt(index), outputs: [], executionCount: null };
      this.changed('updated', cellId);
      this.logActivity(this.ownLabel, 'cleared', cellId);
    });
  }

  public async executeCell(cellId: string, options?: ExecuteOptions): Promise<ExecutionResult> {
    return this.once(`executeCell:${cellId}`, options, () => {
      const index = this.checkExpected(cellId, options);
      if (!this.#executor) throw new NotModelledError('FakeNotebookHandle', 'executeCell needs an executor option');
      if (this.#readiness.runtime !== 'ready') {
        throw new CoreError(
          'invalidRequest',
          `Runtime is ${this.#readiness.runtime}: ${this.#readiness.reason ?? 'no kernel'}`,
        );
      }
      const { status, outputs } = this.#executor(this.cellAt(index));
      this.#executionCount += 1;
      const executionId = randomUUID();
      options?.onStarted?.(executionId);
      for (const output of outputs) options?.onOutput?.(output);
      this.#cells[index] = { ...this.cellAt(index), outputs, executionCount: this.#executionCount };
      this.changed('updated', cellId);
      const executionCount = this.#executionCount;
      const notice = this.nextKernelNotice === undefined ? {} : { kernelNotice: this.nextKernelNotice };
      this.nextKernelNotice = undefined;
      const stateStatus = status === 'held' ? 'running' : status;
      this.#executions.set(executionId, {
        executionId,
        cellId,
        status: stateStatus,
        outputs,
        executionCount,
        ...notice,
      });
      const result: ExecutionResult = {
        executionId,
        cellId,
        status: status === 'running' ? 'timeout' : status === 'held' ? 'timeout' : status,
        outputs,
        executionCount,
        ...notice,
      };
      if (status !== 'held') return result;
      return new Promise<ExecutionResult>((resolve) => {
        this.#held.set(executionId, (state) =>
          resolve({
            ...result,
            status: state.status === 'ok' || state.status === 'error' ? state.status : 'aborted',
            outputs: state.outputs,
          }),
        );
        const cancel = (): void => {
          if (!this.#held.has(executionId)) return;
          this.cancelledExecutions.push(executionId);
          this.completeExecution(executionId, {
            status: 'error',
            outputs: [{ output_type: 'error', ename: 'KeyboardInterrupt', evalue: '', traceback: [] }],
          });
        };
        if (options?.signal?.aborted) cancel();
        else options?.signal?.addEventListener('abort', cancel, { once: true });
      });
    });
  }

  /** The sources of the scratch runs so far, in order. */
  public readonly scratchRuns: string[] = [];

  /** Runs `source` with the executor as if it were a cell; nothing of the document changes. */
  public async runScratch(source: string): Promise<ScratchRun> {
    this.use('runScratch');
    if (!this.#executor) throw new NotModelledError('FakeNotebookHandle', 'runScratch needs an executor option');
    if (this.#readiness.runtime !== 'ready') {
      throw new CoreError(
        'invalidRequest',
        `Runtime is ${this.#readiness.runtime}: ${this.#readiness.reason ?? 'no kernel'}`,
      );
    }
    this.scratchRuns.push(source);
    const scratch: NotebookCell = {
      id: 'scratch',
      cellType: 'code',
      source,
      outputs: [],
      executionCount: null,
      metadata: {},
    };
    const { status, outputs } = this.#executor(scratch);
    const notice = this.nextKernelNotice === undefined ? {} : { kernelNotice: this.nextKernelNotice };
    this.nextKernelNotice = undefined;
    return { status: status === 'running' || status === 'held' ? 'timeout' : status, outputs, ...notice };
  }

  public async getExecution(executionId: string): Promise<ExecutionState> {
    this.use(`getExecution:${executionId}`);
    const state = this.#executions.get(executionId);
    if (!state) throw new CoreError('invalidRequest', `Execution not found: ${executionId}`);
    return state;
  }

  /** Whether {@link getExecutionPage} answers pages (`false`: as an older daemon, the outputs). */
  public answersPages = true;

  /** A page of an execution's outputs, made as runtimed makes it (an `OutputsDocument`'s page). */
  public async getExecutionPage(executionId: string, page: OutputsPageRequest): Promise<ExecutionPage | undefined> {
    this.use(`getExecutionPage:${executionId}`);
    const state = this.#executions.get(executionId);
    if (!state) throw new CoreError('invalidRequest', `Execution not found: ${executionId}`);
    if (!this.answersPages) return undefined;
    const document = new OutputsDocument(state.outputs);
    const total = document.text.length;
    return {
      state: { ...state, outputs: [] },
      page: document.page(page.offset, page.length, page.budgetBytes) ?? {
        offset: page.offset,
        length: 0,
        total_chars: total,
        text: '',
      },
    };
  }

  /** Finishes an execution the executor left `running`: its state and its cell's outputs change. */
  public completeExecution(
    executionId: string,
    outcome: { readonly status: 'ok' | 'error'; readonly outputs: readonly CellOutput[] },
  ): void {
    const state = this.#executions.get(executionId);
    if (!state) throw new NotModelledError('FakeNotebookHandle', `no execution ${executionId}`);
    const outputs = [...state.outputs, ...outcome.outputs];
    this.#executions.set(executionId, { ...state, status: outcome.status, outputs });
    const index = this.#cells.findIndex((cell) => cell.id === state.cellId);
    if (index >= 0) {
      this.#cells[index] = { ...this.cellAt(index), outputs };
      this.changed('updated', state.cellId);
    }
    const waiter = this.#held.get(executionId);
    this.#held.delete(executionId);
    waiter?.({ ...state, status: outcome.status, outputs });
  }

  public async interruptKernel(): Promise<KernelInterruptOutcome> {
    this.use('interruptKernel');
    this.interruptCount += 1;
    return this.interruptOutcome;
  }

  public async restartKernel(): Promise<void> {
    this.use('restartKernel');
    this.kernelRestartCount += 1;
  }

  public async save(path?: string): Promise<SavedNotebook> {
    this.use(`save:${path ?? ''}`);
    const target = path ?? this.#notebookPath;
    if (target === undefined) {
      throw new CoreError('invalidRequest', 'No path specified: an untitled notebook needs a path to be saved.', {
        code: 'no_path',
      });
    }
    this.#beforeSave?.(this.notebookId, target);
    this.#notebookPath = target;
    return { notebookId: this.notebookId, path: target };
  }

  public async close(): Promise<void> {
    this.calls.push('close');
    this.simulateClose('closed');
  }

  /** Closes the handle as the daemon would (`disconnected`, `room-removed`); fires listeners once. */
  public simulateClose(reason: NotebookHandleCloseReason): void {
    if (this.#closedReason !== undefined) return;
    this.#closedReason = reason;
    for (const listener of [...this.#closeListeners]) listener(reason);
    this.#closeListeners.clear();
    for (const wake of [...this.#readinessWaiters]) wake();
  }

  public onDidClose(listener: (reason: NotebookHandleCloseReason) => void): Subscription {
    this.#closeListeners.add(listener);
    return { dispose: () => this.#closeListeners.delete(listener) };
  }

  public onDidChangeCells(listener: (change: NotebookCellChange) => void): Subscription {
    this.#changeListeners.add(listener);
    return { dispose: () => this.#changeListeners.delete(listener) };
  }

  /**
   * The next mutation named `operation` (`insertCell`, `updateCell:<id>`, `executeCell:<id>`: those
   * whose result is answered) loses its answer as a stalled daemon's does: it is applied (when
   * `applied`), and its answer waits until the handle closes, then rejects with the closed error.
   */
  public loseAnswerOf(operation: string, applied: boolean): void {
    this.#losing.set(operation, applied);
  }

  private once<T>(operation: string, options: MutationOptions | undefined, apply: () => T): T {
    this.use(operation);
    const key = options?.idempotencyKey;
    this.mutationKeys.push(key);
    const losing = this.#losing.get(operation);
    this.#losing.delete(operation);
    const applied = (): T => {
      if (key !== undefined && this.#ledger.has(key)) return this.#ledger.get(key) as T;
      const result = apply();
      if (key !== undefined) this.#ledger.set(key, result);
      return result;
    };
    if (losing === undefined) return applied();
    if (losing) applied();
    // The answer never comes; the caller (an async method that returns it) rejects once the handle closes.
    return new Promise<never>((_resolve, reject) => {
      this.onDidClose(() => reject(this.closedError()));
    }) as T;
  }

  private changed(kind: NotebookCellChange['kind'], cellId: string): void {
    for (const listener of [...this.#changeListeners]) listener({ kind, cellId });
  }

  private use(call: string): void {
    this.calls.push(call);
    if (this.#closedReason !== undefined) throw this.closedError();
  }

  private closedError(): CoreError {
    return new CoreError('handleClosed', `Notebook ${this.notebookId} connection is closed (${this.#closedReason})`);
  }

  private indexOf(cellId: string): number {
    const index = this.#cells.findIndex((cell) => cell.id === cellId);
    if (index < 0) throw new CoreError('cellNotFound', `Cell not found: ${cellId}`);
    return index;
  }

  private cellAt(index: number): NotebookCell {
    return this.#cells[index] as NotebookCell;
  }

  private newCell(source: string, cellType: CellType): NotebookCell {
    return {
      id: `cell-${this.#nextCell++}`,
      cellType,
      source,
      outputs: [],
      executionCount: null,
      metadata: {},
      ...this.stamp(this.ownLabel),
    };
  }

  /** The label this handle's own changes are made under. */
  private get ownLabel(): string {
    return this.peerLabel ?? 'agent';
  }

  /** With the `peers` option: a new version and the editor, for a cell just changed. */
  private stamp(by: string): Partial<Pick<NotebookCell, 'version' | 'editedBy'>> {
    return this.#peers ? { version: `v${this.#nextVersion++}`, editedBy: by } : {};
  }

  /** The index of the cell, refusing (`staleCell`) a change made against another version of it. */
  private checkExpected(cellId: string, options: MutationOptions | undefined): number {
    const index = this.indexOf(cellId);
    const cell = this.cellAt(index);
    const expected = options?.expectedVersion;
    if (this.#peers && expected !== undefined && cell.version !== expected) {
      throw new CoreError(
        'staleCell',
        `Cell ${cellId} has changed since version ${expected}: ${cell.editedBy} edited it. Its source now:\n${cell.source}`,
      );
    }
    return index;
  }

  private logActivity(by: string, kind: CellActivity['kind'], cellId: string): void {
    if (!this.#peers) return;
    if (by !== this.ownLabel) this.#othersChangeCount += 1;
    this.#documentVersion += 1;
    this.#activities.push({ documentVersion: this.#documentVersion, at: new Date(0).toISOString(), by, kind, cellId });
  }
}
