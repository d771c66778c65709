import { randomUUID } from 'node:crypto';
import { dirname } from 'node:path';
import type { Clock, Logger, Timer } from '@nteract-mcp/core';
import type { WireCell, WireRoomEvent, WireRoomInfo, WireRuntimeState } from '@nteract-mcp/core/runtimed-wire';
import { DaemonError } from '../daemon-error.js';
import type { CellKind, NotebookDocument, NotebookOutput } from '../document/notebook-document.js';
import type { UntitledStore } from '../persistence/untitled-store.js';
import { writeFileAtomic } from '../persistence/write-file-atomic.js';
import { IdempotencyLedger } from './idempotency-ledger.js';
import type { KernelLauncher, RoomKernel } from './kernel-launcher.js';

/** Timings and bounds of a room; all configurable so tests run in milliseconds. */
export interface RoomSettings {
  /** How long the kernel outlives the last peer. */
  readonly keepAliveMs: number;
  readonly autosaveDebounceMs: number;
  /** A busy notebook is still written at least this often. */
  readonly autosaveMaxDelayMs: number;
  readonly ledgerCapacity: number;
  /** Finished executions kept for `get_execution`. */
  readonly executionHistory: number;
}

/** Why a room closed under its peers: the daemon stops (rejoin later), or the notebook was shut down. */
export type RoomCloseCause = 'daemon_shutdown' | 'notebook_shutdown';

/** A connection taking part in a room. */
export interface RoomPeer {
  readonly id: string;
  readonly label: string;
  send(frame: Readonly<Record<string, unknown>>): void;
  /** Ends the peer's connection because the room is gone; `cause` says whether the whole daemon stops. */
  disconnect(reason: string, cause: RoomCloseCause): void;
}

/** What the room tells the daemon (for `subscribe` streams). */
export type RoomNotice =
  | { readonly kind: 'peer_joined' | 'peer_left'; readonly peer: RoomPeer; readonly activePeers: number }
  | { readonly kind: 'runtime'; readonly runtime: WireRuntimeState };

interface ExecutionRecord {
  readonly executionId: string;
  readonly cellId: string;
  status: 'queued' | 'running' | 'ok' | 'error' | 'aborted';
  outputs: readonly NotebookOutput[];
  executionCount: number | null;
}

export interface RoomInit {
  readonly notebookId: string;
  readonly document: NotebookDocument;
  readonly path: string | undefined;
  readonly ephemeral: boolean;
  readonly workingDir: string;
  readonly settings: RoomSettings;
  readonly launcher: KernelLauncher;
  readonly untitled: UntitledStore;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly notify: (notice: RoomNotice) => void;
  /** Called when a save binds the room to a file. */
  readonly onPathBound: (room: NotebookRoom, path: string) => Promise<void>;
}

/**
 * One notebook in the daemon: its document, its peers, its kernel, its saves.
 *
 * Lifetime rules: only the last peer leaving schedules kernel teardown after `keepAliveMs`; the
 * teardown rechecks the peer count and the connection generation before it destroys anything, and
 * while it runs the destructive latch (`#teardown`) makes a joining peer wait for a fresh kernel
 * instead of reusing the doomed one. The room itself (document, autosave) stays resident; removing
 * it is the reaper's decision, after {@link NotebookRoom.flush}.
 */
export class NotebookRoom {
  public readonly notebookId: string;
  public readonly ephemeral: boolean;
  public readonly createdAt: number;
  readonly #document: NotebookDocument;
  readonly #init: RoomInit;
  readonly #peers = new Map<string, RoomPeer>();
  readonly #ledger: IdempotencyLedger;
  readonly #executions = new Map<string, ExecutionRecord>();
  #path: string | undefined;
  #workingDir: string;
  #peerlessSince: number | undefined;
  #reservations = 0;
  #connectionGeneration = 0;
  #runtime: WireRuntimeState = { state: 'not_started', kernel_status: null };
  #kernel: RoomKernel | undefined;
  #starting: Promise<RoomKernel | undefined> | undefined;
  #teardown: Promise<void> | undefined;
  #teardownTimer: Timer | undefined;
  #executionQueue: Promise<unknown> = Promise.resolve();
  #dirty = false;
  #saveTimer: Timer | undefined;
  #dirtySince: number | undefined;
  #saving: Promise<void> = Promise.resolve();
  #closed = false;

  public constructor(init: RoomInit) {
    this.#init = init;
    this.notebookId = init.notebookId;
    this.ephemeral = init.ephemeral;
    this.#document = init.document;
    this.#path = init.path;
    this.#workingDir = init.workingDir;
    this.createdAt = init.clock.now();
    this.#peerlessSince = this.createdAt;
    this.#ledger = new IdempotencyLedger(init.settings.ledgerCapacity);
  }

  public get path(): string | undefined {
    return this.#path;
  }

  public get peerCount(): number {
    return this.#peers.size;
  }

  /** When the room last became peerless (`undefined` while it has peers). */
  public get peerlessSince(): number | undefined {
    return this.#peerlessSince;
  }

  public get hasKernel(): boolean {
    return this.#kernel !== undefined || this.#starting !== undefined || this.#teardown !== undefined;
  }

  public get runtime(): WireRuntimeState {
    return this.#runtime;
  }

  public get documentVersion(): number {
    return this.#document.version;
  }

  public cells(): WireCell[] {
    return this.#document.cells();
  }

  public info(): WireRoomInfo {
    return {
      notebook_id: this.notebookId,
      active_peers: this.#peers.size,
      has_kernel: this.#kernel !== undefined,
      kernel_status: this.#runtime.kernel_status,
      ephemeral: this.ephemeral,
      notebook_path: this.#path ?? null,
    };
  }

  /** Holds the room against reaping while an admission or reconnect is under way. */
  public reserve(): () => void {
    this.#reservations += 1;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#reservations -= 1;
    };
  }

  /** Whether the reaper may remove the room now: no peers, no kernel, no reservation. */
  public isReapable(): boolean {
    return !this.#closed && this.#peers.size === 0 && this.#reservations === 0 && !this.hasKernel;
  }

  public addPeer(peer: RoomPeer): void {
    this.#peers.set(peer.id, peer);
    this.#connectionGeneration += 1;
    this.#peerlessSince = undefined;
    this.#teardownTimer?.cancel();
    this.#teardownTimer = undefined;
    this.broadcast(
      { event: 'peer_joined', peer_id: peer.id, peer_label: peer.label, active_peers: this.#peers.size },
      peer.id,
    );
    this.#init.notify({ kind: 'peer_joined', peer, activePeers: this.#peers.size });
    void this.ensureKernel().catch((error: unknown) => this.#init.logger.warn('kernel start failed', { error }));
  }

  public removePeer(peerId: string): void {
    const peer = this.#peers.get(peerId);
    if (!peer) return;
    this.#peers.delete(peerId);
    this.broadcast({ event: 'peer_left', peer_id: peer.id, peer_label: peer.label, active_peers: this.#peers.size });
    this.#init.notify({ kind: 'peer_left', peer, activePeers: this.#peers.size });
    if (this.#peers.size > 0 || this.#closed) return;
    this.#peerlessSince = this.#init.clock.now();
    this.scheduleTeardown();
  }

  /** Answers one request of a peer. Throws {@link DaemonError} for refusals. */
  public async handle(peer: RoomPeer, request: Readonly<Record<string, unknown>>): Promise<Record<string, unknown>> {
    const key = optionalString(request, 'idempotency_key');
    switch (request.type) {
      case 'get_cells':
        return { document_version: this.#document.version, cells: this.#document.cells() };
      case 'get_cell':
        return { cell: this.#document.cell(requiredString(request, 'cell_id')) };
      case 'get_runtime':
        return { runtime: this.#runtime };
      case 'insert_cell':
        return this.#ledger.run(key, 'insert_cell', () => {
          const { cell, index } = this.#document.insert({
            source: optionalString(request, 'source') ?? '',
            cellType: cellKind(request.cell_type ?? 'code'),
            index: optionalIndex(request),
          });
          this.changed({ event: 'cell_inserted', document_version: this.#document.version, index, cell }, peer.id);
          return { cell, index, document_version: this.#document.version };
        });
      case 'update_cell':
        return this.#ledger.run(key, 'update_cell', () => {
          const cell = this.#document.update(requiredString(request, 'cell_id'), {
            source: optionalString(request, 'source'),
            cellType: request.cell_type === undefined ? undefined : cellKind(request.cell_type),
          });
          this.changed({ event: 'cell_updated', document_version: this.#document.version, cell }, peer.id);
          return { cell, document_version: this.#document.version };
        });
      case 'delete_cell':
        return this.#ledger.run(key, 'delete_cell', () => {
          const cellId = requiredString(request, 'cell_id');
          this.#document.delete(cellId);
          this.changed({ event: 'cell_deleted', document_version: this.#document.version, cell_id: cellId }, peer.id);
          return { document_version: this.#document.version };
        });
      case 'move_cell':
        return this.#ledger.run(key, 'move_cell', () => {
          const cellId = requiredString(request, 'cell_id');
          const after = request.after_cell_id;
          if (after !== null && after !== undefined && typeof after !== 'string')
            throw badRequest('after_cell_id must be a string or null');
          const index = this.#document.move(cellId, after ?? null);
          this.changed(
            { event: 'cell_moved', document_version: this.#document.version, cell_id: cellId, index },
            peer.id,
          );
          return { index, document_version: this.#document.version };
        });
      case 'clear_outputs':
        return this.#ledger.run(key, 'clear_outputs', () => {
          const cell = this.#document.clearOutputs(requiredString(request, 'cell_id'));
          this.changed({ event: 'cell_updated', document_version: this.#document.version, cell }, peer.id);
          return { cell, document_version: this.#document.version };
        });
      case 'execute_cell':
        return this.#ledger.run(key, 'execute_cell', () => this.startExecution(requiredString(request, 'cell_id')));
      case 'get_execution':
        return this.execution(requiredString(request, 'execution_id'));
      case 'interrupt': {
        const kernel = this.requireKernelForControl();
        await kernel.interrupt();
        return { interrupted: true };
      }
      case 'restart_kernel': {
        const kernel = await this.ensureKernel();
        if (!kernel) throw new DaemonError('runtimeUnavailable', this.#runtime.reason ?? 'No kernel is available');
        await kernel.restart();
        return { restarted: true, runtime: this.#runtime };
      }
      case 'save':
        return this.save(optionalString(request, 'path'));
      default:
        throw new DaemonError('badRequest', `Unknown notebook request type ${JSON.stringify(request.type)}`);
    }
  }

  /**
   * Makes the document durable where it belongs: the file for file-backed rooms, the data dir for
   * persisted untitled ones; nothing for ephemeral ones. Resolves when written.
   */
  public async flush(): Promise<void> {
    this.#saveTimer?.cancel();
    this.#saveTimer = undefined;
    await this.#saving;
    if (!this.#dirty) return;
    const write = this.writeNow();
    this.#saving = write.catch(() => undefined);
    await write;
  }

  /** Shuts the kernel and tells the peers the room is gone. Used by `shutdown_notebook` and daemon shutdown. */
  public async close(reason: string, cause: RoomCloseCause): Promise<void> {
    this.#closed = true;
    this.#teardownTimer?.cancel();
    for (const peer of this.#peers.values()) peer.disconnect(reason, cause);
    this.#peers.clear();
    await this.stopKernel();
    await this.flush().catch((error: unknown) => this.#init.logger.error('final save failed', { error }));
  }

  private startExecution(cellId: string): Record<string, unknown> {
    const cell = this.#document.cell(cellId);
    const record: ExecutionRecord = {
      executionId: randomUUID(),
      cellId,
      status: 'queued',
      outputs: [],
      executionCount: null,
    };
    if (cell.cell_type !== 'code') {
      record.status = 'ok';
      this.remember(record);
      return this.describe(record);
    }
    if (this.#runtime.state === 'unavailable') {
      throw new DaemonError(
        'runtimeUnavailable',
        `Cannot execute: the runtime is unavailable (${this.#runtime.reason ?? 'no kernel'})`,
      );
    }
    this.remember(record);
    const source = cell.source;
    this.#executionQueue = this.#executionQueue.catch(() => undefined).then(() => this.runExecution(record, source));
    return this.describe(record);
  }

  private async runExecution(record: ExecutionRecord, source: string): Promise<void> {
    const kernel = await this.ensureKernel().catch(() => undefined);
    if (!kernel) {
      record.status = 'aborted';
      record.outputs = [
        {
          output_type: 'error',
          ename: 'RuntimeUnavailable',
          evalue: this.#runtime.reason ?? 'no kernel',
          traceback: [],
        },
      ];
      this.finishExecution(record);
      return;
    }
    record.status = 'running';
    this.updateCellOutputs(record, [], null);
    try {
      const result = await kernel.execute(source, {
        onOutput: (output, outputsSoFar) => {
          record.outputs = outputsSoFar;
          this.updateCellOutputs(record, outputsSoFar, null);
          this.broadcast({
            event: 'execution_output',
            execution_id: record.executionId,
            cell_id: record.cellId,
            output,
          });
        },
      });
      record.status = result.status;
      record.outputs = result.outputs;
      record.executionCount = result.executionCount;
    } catch (error) {
      record.status = 'aborted';
      this.#init.logger.warn('execution failed', { notebookId: this.notebookId, error });
    }
    this.updateCellOutputs(record, record.outputs, record.executionCount);
    this.finishExecution(record);
  }

  private finishExecution(record: ExecutionRecord): void {
    this.broadcast({
      event: 'execution_done',
      execution_id: record.executionId,
      cell_id: record.cellId,
      status: record.status === 'queued' || record.status === 'running' ? 'aborted' : record.status,
      execution_count: record.executionCount,
    });
  }

  private updateCellOutputs(record: ExecutionRecord, outputs: readonly NotebookOutput[], count: number | null): void {
    try {
      const cell = this.#document.setExecutionState(record.cellId, outputs, count);
      this.changed({ event: 'cell_updated', document_version: this.#document.version, cell });
    } catch (error) {
      if (!DaemonError.is(error, 'cellNotFound')) throw error;
    }
  }

  private execution(executionId: string): Record<string, unknown> {
    const record = this.#executions.get(executionId);
    if (!record) throw new DaemonError('badRequest', `Execution not found: ${executionId}`);
    return this.describe(record);
  }

  private describe(record: ExecutionRecord): Record<string, unknown> {
    return {
      execution_id: record.executionId,
      cell_id: record.cellId,
      status: record.status,
      outputs: record.outputs,
      execution_count: record.executionCount,
    };
  }

  private remember(record: ExecutionRecord): void {
    this.#executions.set(record.executionId, record);
    for (const [id, old] of this.#executions) {
      if (this.#executions.size <= this.#init.settings.executionHistory) break;
      if (old.status !== 'queued' && old.status !== 'running') this.#executions.delete(id);
    }
  }

  private requireKernelForControl(): RoomKernel {
    if (!this.#kernel) {
      if (this.#runtime.state === 'unavailable')
        throw new DaemonError('runtimeUnavailable', this.#runtime.reason ?? 'No kernel');
      throw new DaemonError('runtimeUnavailable', 'No kernel is running in this notebook yet');
    }
    return this.#kernel;
  }

  private async save(requestedPath: string | undefined): Promise<Record<string, unknown>> {
    const target = requestedPath ?? this.#path;
    if (target === undefined) {
      throw new DaemonError(
        'noPath',
        "No path specified. This notebook is untitled: give a path, e.g. save_notebook(path='/path/to/file.ipynb').",
      );
    }
    if (!target.startsWith('/')) throw badRequest(`The save path must be absolute, got '${target}'`);
    if (!target.endsWith('.ipynb')) throw badRequest(`The save path must end in .ipynb, got '${target}'`);
    const previous = this.#path;
    if (target !== previous) await this.#init.onPathBound(this, target);
    this.#path = target;
    this.#workingDir = dirname(target);
    this.#dirty = true;
    await this.flush();
    if (previous === undefined && !this.ephemeral) await this.#init.untitled.remove(this.notebookId);
    this.broadcast({ event: 'saved', notebook_path: target });
    return { notebook_id: this.notebookId, notebook_path: target };
  }

  private changed(event: WireRoomEvent, exceptPeerId?: string): void {
    this.broadcast(event, exceptPeerId);
    this.markDirty();
  }

  private broadcast(event: WireRoomEvent, exceptPeerId?: string): void {
    for (const peer of this.#peers.values()) {
      if (peer.id !== exceptPeerId) peer.send({ type: 'broadcast', ...event });
    }
  }

  private markDirty(): void {
    if (this.ephemeral && this.#path === undefined) return;
    this.#dirty = true;
    const now = this.#init.clock.now();
    this.#dirtySince ??= now;
    const { autosaveDebounceMs, autosaveMaxDelayMs } = this.#init.settings;
    const delay = Math.max(0, Math.min(autosaveDebounceMs, this.#dirtySince + autosaveMaxDelayMs - now));
    this.#saveTimer?.cancel();
    this.#saveTimer = this.#init.clock.setTimer(delay, () => {
      this.#saveTimer = undefined;
      this.#saving = this.#saving.then(() => this.writeNow()).catch(() => undefined);
    });
  }

  private async writeNow(): Promise<void> {
    if (!this.#dirty) return;
    this.#dirty = false;
    this.#dirtySince = undefined;
    try {
      if (this.#path !== undefined) await writeFileAtomic(this.#path, this.#document.toIpynb());
      else if (!this.ephemeral) await this.#init.untitled.write(this.notebookId, this.#document);
    } catch (error) {
      this.#dirty = true;
      this.#init.logger.error('autosave failed; will retry on the next change', { notebookId: this.notebookId, error });
      throw error;
    }
  }

  private async ensureKernel(): Promise<RoomKernel | undefined> {
    if (this.#teardown) await this.#teardown;
    if (this.#kernel) return this.#kernel;
    if (this.#runtime.state === 'unavailable') return undefined;
    if (!this.#starting) {
      this.#starting = this.launchKernel().finally(() => {
        this.#starting = undefined;
      });
    }
    return this.#starting;
  }

  private async launchKernel(): Promise<RoomKernel | undefined> {
    this.setRuntime({ state: 'starting', kernel_status: 'starting' });
    let launch: Awaited<ReturnType<KernelLauncher['launch']>>;
    try {
      launch = await this.#init.launcher.launch(this.#workingDir);
    } catch (error) {
      this.setRuntime({
        state: 'stopped',
        kernel_status: null,
        reason: `kernel failed to start: ${(error as Error).message}`,
      });
      return undefined;
    }
    if (launch.kind === 'unavailable') {
      this.setRuntime({ state: 'unavailable', kernel_status: null, reason: launch.reason });
      return undefined;
    }
    const kernel = launch.kernel;
    if (this.#closed) {
      await kernel.shutdown();
      return undefined;
    }
    this.#kernel = kernel;
    kernel.onStatus((status) => {
      if (this.#kernel === kernel) this.setRuntime({ state: 'ready', kernel_status: status });
    });
    kernel.onExit((info) => {
      if (this.#kernel !== kernel) return;
      this.#kernel = undefined;
      this.setRuntime({
        state: 'stopped',
        kernel_status: 'dead',
        reason: `kernel exited (${info.signal ?? info.code})`,
      });
    });
    this.setRuntime({ state: 'ready', kernel_status: kernel.status });
    return kernel;
  }

  private scheduleTeardown(): void {
    this.#teardownTimer?.cancel();
    const generation = this.#connectionGeneration;
    this.#teardownTimer = this.#init.clock.setTimer(this.#init.settings.keepAliveMs, () => {
      this.#teardownTimer = undefined;
      // Revalidate: a peer may have joined (and even left again) since this was scheduled.
      if (this.#peers.size > 0 || this.#connectionGeneration !== generation || this.#teardown) return;
      this.#teardown = this.stopKernel().finally(() => {
        this.#teardown = undefined;
      });
      void this.flush().catch(() => undefined);
    });
  }

  private async stopKernel(): Promise<void> {
    const starting = this.#starting;
    if (starting) await starting.catch(() => undefined);
    const kernel = this.#kernel;
    if (!kernel) return;
    this.#kernel = undefined;
    this.setRuntime({ state: 'stopped', kernel_status: null, reason: 'kernel shut down after the last peer left' });
    await kernel.shutdown().catch((error: unknown) => this.#init.logger.warn('kernel shutdown failed', { error }));
  }

  private setRuntime(runtime: WireRuntimeState): void {
    const before = this.#runtime;
    this.#runtime = runtime;
    if (before.state === runtime.state && before.kernel_status === runtime.kernel_status) return;
    this.broadcast({ event: 'runtime', runtime });
    this.#init.notify({ kind: 'runtime', runtime });
  }
}

function badRequest(message: string): DaemonError {
  return new DaemonError('badRequest', message);
}

function requiredString(request: Readonly<Record<string, unknown>>, field: string): string {
  const value = request[field];
  if (typeof value !== 'string' || value.length === 0) throw badRequest(`Missing required string field '${field}'`);
  return value;
}

function optionalString(request: Readonly<Record<string, unknown>>, field: string): string | undefined {
  const value = request[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw badRequest(`Field '${field}' must be a string`);
  return value;
}

function optionalIndex(request: Readonly<Record<string, unknown>>): number | undefined {
  const value = request.index;
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0)
    throw badRequest("Field 'index' must be a non-negative integer");
  return value;
}

function cellKind(value: unknown): CellKind {
  if (value === 'code' || value === 'markdown' || value === 'raw') return value;
  throw badRequest(`cell_type must be 'code', 'markdown' or 'raw', got ${JSON.stringify(value)}`);
}
