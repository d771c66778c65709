import { writeFileSync } from 'node:fs';
import { isAbsolute } from 'node:path';
import {
  type CellType,
  CoreError,
  type ExecuteOptions,
  type ExecutionResult,
  type ExecutionState,
  type InsertCellRequest,
  type KernelInterruptOutcome,
  type MutationOptions,
  type NotebookCell,
  type NotebookCellChange,
  type NotebookHandle,
  type NotebookHandleCloseReason,
  type NotebookReadiness,
  type SavedNotebook,
  type Subscription,
  type UpdatedCell,
} from '@nteract-mcp/core';
import type { MemoryNotebook } from './memory-notebook.js';

/** What a memory notebook's readiness always is: loaded at once, and no kernel to run its code. */
const readiness: NotebookReadiness = {
  document: 'ready',
  runtime: 'unavailable',
  reason: 'memory: notebooks have no kernel; their cells are edited, not run',
};

/**
 * One peer connection to a {@link MemoryNotebook}: the kind's own implementation of core's
 * {@link NotebookHandle} port. Every edit goes to the shared notebook under the notebook's
 * idempotency ledger; every change any peer makes is told to `onDidChangeCells` once the notebook
 * shows it. It has no kernel: readiness says the runtime is `unavailable`, running a cell answers
 * `unsupportedOperation`. `save(path)` writes the notebook as an `.ipynb` file and binds the path.
 * After `close()`, or when the notebook drops its peers (the store restarted: `disconnected`), every
 * call rejects `handleClosed`, and `onDidClose` has fired once.
 */
export class MemoryNotebookHandle implements NotebookHandle {
  public readonly daemonIncarnation = undefined;
  #notebookPath: string | undefined;
  #closedReason: NotebookHandleCloseReason | undefined;
  readonly #closeListeners = new Set<(reason: NotebookHandleCloseReason) => void>();
  /** This peer's subscriptions to the notebook's changes, ended when it closes. */
  readonly #subscriptions = new Set<Subscription>();

  public constructor(
    private readonly notebook: MemoryNotebook,
    /** The label this peer's edits are made under. */
    public readonly peerLabel: string,
  ) {
    this.#subscriptions.add(notebook.onDidDropPeers(() => this.end('disconnected')));
  }

  public get notebookId(): string {
    return this.notebook.notebookId;
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

  public readiness(): NotebookReadiness {
    return readiness;
  }

  public async waitUntilReady(): Promise<NotebookReadiness> {
    this.assertOpen();
    return readiness;
  }

  public async listCells(): Promise<readonly NotebookCell[]> {
    this.assertOpen();
    return this.notebook.cells();
  }

  public async getCell(cellId: string): Promise<NotebookCell> {
    this.assertOpen();
    return this.notebook.cell(cellId);
  }

  public async insertCell(request: InsertCellRequest, options?: MutationOptions): Promise<NotebookCell> {
    this.assertOpen();
    return this.notebook.once(options?.idempotencyKey, () => this.notebook.insert(request, this.peerLabel));
  }

  public async updateCell(
    cellId: string,
    patch: { readonly source?: string; readonly cellType?: CellType },
    options?: MutationOptions,
  ): Promise<UpdatedCell> {
    this.assertOpen();
    return this.notebook.once(options?.idempotencyKey, () => this.notebook.update(cellId, patch, this.peerLabel));
  }

  public async deleteCell(cellId: string, options?: MutationOptions): Promise<void> {
    this.assertOpen();
    this.notebook.once(options?.idempotencyKey, () => this.notebook.delete(cellId));
  }

  public async moveCell(cellId: string, afterCellId: string | undefined, options?: MutationOptions): Promise<void> {
    this.assertOpen();
    this.notebook.once(options?.idempotencyKey, () => this.notebook.move(cellId, afterCellId));
  }

  public async clearOutputs(cellId: string, options?: MutationOptions): Promise<void> {
    this.assertOpen();
    this.notebook.once(options?.idempotencyKey, () => this.notebook.clearOutputs(cellId));
  }

  public async executeCell(cellId: string, _options?: ExecuteOptions): Promise<ExecutionResult> {
    this.assertOpen();
    this.notebook.cell(cellId);
    throw new CoreError('unsupportedOperation', `memory:${this.notebook.name} has no kernel: its cells cannot run`);
  }

  /** No execution is ever started here, so every id is unknown. */
  public async getExecution(executionId: string): Promise<ExecutionState> {
    this.assertOpen();
    throw new CoreError('invalidRequest', `Unknown execution ${executionId} in memory:${this.notebook.name}`);
  }

  public async interruptKernel(): Promise<KernelInterruptOutcome> {
    this.assertOpen();
    return 'nothing_running';
  }

  public async restartKernel(): Promise<void> {
    this.assertOpen();
    throw new CoreError('unsupportedOperation', `memory:${this.notebook.name} has no kernel to restart`);
  }

  /** Writes the notebook to `path` (absolute) as nbformat 4, and binds it; without one, to the bound path. */
  public async save(path?: string): Promise<SavedNotebook> {
    this.assertOpen();
    const target = path ?? this.#notebookPath;
    if (target === undefined || !isAbsolute(target)) {
      throw new CoreError('invalidRequest', `memory:${this.notebook.name} is saved to an absolute .ipynb path`, {
        code: 'no_path',
      });
    }
    const cells = this.notebook.cells().map((cell) => ({
      id: cell.id,
      cell_type: cell.cellType,
      metadata: {},
      source: cell.source,
      ...(cell.cellType === 'code' ? { outputs: [], execution_count: null } : {}),
    }));
    writeFileSync(target, `${JSON.stringify({ cells, metadata: {}, nbformat: 4, nbformat_minor: 5 }, null, 1)}\n`);
    this.#notebookPath = target;
    return { notebookId: this.notebookId, path: target };
  }

  /** Every change any peer makes to the notebook, told once the notebook shows it. */
  public onDidChangeCells(listener: (change: NotebookCellChange) => void): Subscription {
    const subscription = this.notebook.onDidChange(listener);
    this.#subscriptions.add(subscription);
    return {
      dispose: () => {
        subscription.dispose();
        this.#subscriptions.delete(subscription);
      },
    };
  }

  /** Releases this peer; the notebook and its other peers are untouched. Idempotent. */
  public async close(): Promise<void> {
    this.end('closed');
  }

  public onDidClose(listener: (reason: NotebookHandleCloseReason) => void): Subscription {
    this.#closeListeners.add(listener);
    return { dispose: () => this.#closeListeners.delete(listener) };
  }

  /** Ends this peer once, for `reason`, and tells the close listeners. */
  private end(reason: NotebookHandleCloseReason): void {
    if (this.#closedReason !== undefined) return;
    this.#closedReason = reason;
    for (const subscription of this.#subscriptions) subscription.dispose();
    this.#subscriptions.clear();
    for (const listener of [...this.#closeListeners]) listener(reason);
    this.#closeListeners.clear();
  }

  private assertOpen(): void {
    if (this.#closedReason !== undefined) {
      throw new CoreError('handleClosed', `The connection to memory:${this.notebook.name} is closed`);
    }
  }
}
