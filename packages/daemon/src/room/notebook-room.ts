import { randomUUID } from 'node:crypto';
import { type FSWatcher, readdirSync, readFileSync, statSync, watch } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import type { Clock, Logger, Timer } from '@nteract-mcp/foundation';
import type {
  WireCell,
  WireExecutionState,
  WireNotebookAnswer,
  WireNotebookRequest,
  WireRoomCondition,
  WireRoomConditionKind,
  WireRoomEvent,
  WireRoomInfo,
  WireRuntimeState,
} from '@nteract-mcp/runtimed-protocol';
import { DaemonError } from '../daemon-error.js';
import { type DocumentChange, NotebookDocument, type NotebookOutput } from '../document/notebook-document.js';
import {
  type NotebookFileState,
  notebookFileState,
  readNotebookFileIfChanged,
} from '../persistence/notebook-file-state.js';
import {
  type JournalBase,
  type JournalSettings,
  type LedgerRecord,
  RoomJournal,
  sha256,
} from '../persistence/room-journal.js';
import type { UntitledStore } from '../persistence/untitled-store.js';
import { writeFileAtomic } from '../persistence/write-file-atomic.js';
import { IdempotencyLedger } from './idempotency-ledger.js';
import type { KernelClient, KernelLauncher, RoomKernel } from './kernel-launcher.js';
import { RoomConditions } from './room-conditions.js';

/** The first retry of a failed save, and the longest wait between retries. */
const firstSaveRetryMs = 1_000;
const maxSaveRetryMs = 30_000;

/** Timings and bounds of a room; all configurable so tests run in milliseconds. */
export interface RoomSettings {
  /** How long the kernel outlives the last peer when it left cleanly (sent `leave`). */
  readonly keepAliveMs: number;
  /**
   * How long the kernel outlives a last peer whose connection dropped without `leave` (a crashed
   * child): longer than the proxy's restart back-off, so the restarted child finds its kernel.
   */
  readonly vanishedPeerKeepAliveMs: number;
  readonly autosaveDebounceMs: number;
  /** A busy notebook is still written at least this often. */
  readonly autosaveMaxDelayMs: number;
  readonly ledgerCapacity: number;
  /** Finished executions kept for `get_execution`. */
  readonly executionHistory: number;
}

/** Why a room closed under its peers: the daemon stops (rejoin later), or the notebook was shut down. */
export type RoomCloseCause = 'daemon_shutdown' | 'notebook_shutdown';

/** How a peer went: with a `leave` request, or its connection just ended. */
export type PeerDeparture = 'left' | 'vanished';

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
  | { readonly kind: 'peer_joined'; readonly peer: RoomPeer; readonly activePeers: number }
  | {
      readonly kind: 'peer_left';
      readonly peer: RoomPeer;
      readonly activePeers: number;
      readonly departure: PeerDeparture;
    }
  | { readonly kind: 'runtime'; readonly runtime: WireRuntimeState };

interface ExecutionRecord {
  readonly executionId: string;
  readonly cellId: string;
  status: 'queued' | 'running' | 'ok' | 'error' | 'aborted';
  outputs: readonly NotebookOutput[];
  executionCount: number | null;
  /** Said to the agent with this execution: it runs in a new kernel, and why the old one is gone. */
  kernelNotice?: string;
}

/** The end of the sentence that tells an agent its execution ran in a new kernel (after "this" or "it"). */
const newKernelConsequence =
  'runs in a new kernel, so variables and imports from earlier runs are not defined until their cells run again.';

export interface RoomInit {
  readonly notebookId: string;
  readonly document: NotebookDocument;
  readonly path: string | undefined;
  readonly ephemeral: boolean;
  readonly workingDir: string;
  /** `workingDir` is a default (an untitled notebook reopened without a client): the first client's cwd replaces it. */
  readonly workingDirIsDefault?: boolean;
  /** The client whose environment the room's kernels get (see {@link NotebookRoom.adoptClient}). */
  readonly client?: KernelClient;
  readonly settings: RoomSettings;
  readonly launcher: KernelLauncher;
  readonly untitled: UntitledStore;
  /** Where journals go; `undefined` turns journaling off. */
  readonly journalSettings: JournalSettings | undefined;
  /** The room's journal when it already has one (replayed by the catalog). */
  readonly journal: RoomJournal | undefined;
  /** Ledger entries replayed from the journal. */
  readonly ledger: readonly LedgerRecord[];
  /** What was read from `path` (for noticing changes by other programs). */
  readonly fileState: NotebookFileState | undefined;
  /** Journaled edits the file lacks were replayed: save soon. */
  readonly replayed: boolean;
  /** A journal that could not be replayed was kept aside here; the agent is told on its first edit. */
  readonly unmatchedJournal?: string;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly notify: (notice: RoomNotice) => void;
  /**
   * Binds the room to another file (a save to a new path): refuses a path another room has before
   * anything is written, runs `write`, and binds (index, registry) only once it succeeded; when it
   * fails nothing is bound and its error is thrown.
   */
  readonly bindPath: (room: NotebookRoom, path: string, write: () => Promise<void>) => Promise<void>;
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
  /** Created ephemeral (discarded when its room closes while it has no file). */
  readonly #ephemeral: boolean;
  public readonly createdAt: number;
  readonly #document: NotebookDocument;
  readonly #init: RoomInit;
  readonly #peers = new Map<string, RoomPeer>();
  readonly #ledger: IdempotencyLedger;
  readonly #executions = new Map<string, ExecutionRecord>();
  #path: string | undefined;
  #workingDir: string;
  #workingDirIsDefault: boolean;
  #client: KernelClient | undefined;
  #interpreter: string | undefined;
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
  /** The delay of the last save retry (0: the last write succeeded). */
  #saveRetryMs = 0;
  #disposed = false;
  #dirtySince: number | undefined;
  #saving: Promise<void> = Promise.resolve();
  #closed = false;
  #journal: RoomJournal | undefined;
  #fileState: NotebookFileState | undefined;
  /** sha256 of a save of ours under way (its rename is not a change by someone else). */
  #writingSha: string | undefined;
  /** That save itself: a request waits for it, so it judges the file against what was written. */
  #writing: Promise<unknown> | undefined;
  /** A change by someone else seen while a save of ours was under way: judged once it is done. */
  #recheckAfterWrite = false;
  #conflict: { readonly copy: string; readonly message: string; readonly mode: number } | undefined;
  /** Said once to the next edit: a journal of this room could not be replayed. */
  #notice: string | undefined;
  #watcher: FSWatcher | undefined;
  #watchTimer: Timer | undefined;
  /**
   * Why the kernel that ran this notebook's code is gone (it exited, was shut down, or ran before
   * the room was opened), until the next execution starts a new one and says so.
   */
  #kernelGone: string | undefined;
  /** The room's last write of its document: when, and where. */
  #lastSaved: { readonly at: number; readonly path: string } | undefined;
  /** What the peers must know while it lasts; broadcast on every change (see {@link NotebookRoom.setCondition}). */
  readonly #conditions: RoomConditions;

  /** Discarded when its room closes: created ephemeral and not saved to a file since. */
  public get ephemeral(): boolean {
    return this.#ephemeral && this.#path === undefined;
  }

  public constructor(init: RoomInit) {
    this.#init = init;
    this.notebookId = init.notebookId;
    this.#ephemeral = init.ephemeral;
    this.#document = init.document;
    this.#path = init.path;
    this.#workingDir = init.workingDir;
    this.#workingDirIsDefault = init.workingDirIsDefault === true;
    this.#client = init.client;
    this.createdAt = init.clock.now();
    this.#peerlessSince = this.createdAt;
    this.#ledger = new IdempotencyLedger(init.settings.ledgerCapacity);
    this.#conditions = new RoomConditions(() => init.clock.now());
    this.#ledger.restore(init.ledger.map((record) => this.restoredLedgerRecord(record)));
    this.#journal = init.journal;
    this.#fileState = init.fileState;
    if (init.unmatchedJournal !== undefined) {
      this.#notice = `Edits journaled for this notebook before the daemon stopped could not be applied, because ${init.path ?? 'its file'} was changed by another program meanwhile; they were kept in ${init.unmatchedJournal}.`;
    }
    this.watchFile();
    if (init.replayed) this.markDirty();
    if (init.document.cells().some((cell) => cell.cell_type === 'code' && cell.execution_count !== null)) {
      this.#kernelGone =
        'Cells of this notebook ran in an earlier kernel (the notebook was opened from its file, or the daemon restarted)';
    }
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

  /** The kernel the notebook asks for (`metadata.kernelspec.name`, else `python3`). */
  public get kernelName(): string {
    return this.#document.kernelRequest().name;
  }

  public get documentVersion(): number {
    return this.#document.version;
  }

  public cells(): WireCell[] {
    return this.#document.cells();
  }

  /** What the room's peers must know now (the greeting carries it; changes are broadcast). */
  public conditions(): WireRoomCondition[] {
    return this.#conditions.list();
  }

  public info(): WireRoomInfo {
    return {
      notebook_id: this.notebookId,
      active_peers: this.#peers.size,
      has_kernel: this.#kernel !== undefined,
      kernel_status: this.#runtime.kernel_status,
      ephemeral: this.ephemeral,
      notebook_path: this.#path ?? null,
      ...(this.#conflict ? { file_conflict: this.#conflict.message } : {}),
      conditions: this.#conditions.list(),
      peer_labels: [...this.#peers.values()].map((peer) => peer.label),
      runtime: this.#runtime,
      kernel_name: this.kernelName,
      ...(this.#kernel ? { kernel_pid: this.#kernel.pid } : {}),
      last_saved: this.#lastSaved
        ? { at: new Date(this.#lastSaved.at).toISOString(), path: this.#lastSaved.path }
        : null,
      working_dir: this.#workingDir,
      ...(this.#interpreter === undefined ? {} : { kernel_interpreter: this.#interpreter }),
    };
  }

  /**
   * Offers the context of a client that opens this room. The room keeps the first environment it
   * gets for its life: its kernels (and their restarts) run with the environment of the client that
   * created the room, not of whoever joins later. A room created without one (at daemon start, or by
   * an older client) adopts the first offered; its default working directory (an untitled notebook)
   * becomes that client's cwd too.
   */
  public adoptClient(client: KernelClient | undefined): void {
    if (client === undefined) return;
    if (this.#client?.env === undefined && client.env !== undefined) this.#client = client;
    if (this.#workingDirIsDefault && this.#path === undefined && client.cwd !== undefined) {
      this.#workingDir = client.cwd;
      this.#workingDirIsDefault = false;
    }
  }

  /** The conflict message while the room's file was changed by another program under unsaved edits. */
  public get fileConflict(): string | undefined {
    return this.#conflict?.message;
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
    this.#init.logger.info('peer joined', { peer: peer.label, peers: this.#peers.size });
    void this.ensureKernel().catch((error: unknown) => this.#init.logger.warn('kernel start failed', { error }));
  }

  /**
   * A peer is gone. When it was the last, the kernel is kept `keepAliveMs` after a clean `leave`,
   * `vanishedPeerKeepAliveMs` after a dropped connection.
   */
  public removePeer(peerId: string, departure: PeerDeparture): void {
    const peer = this.#peers.get(peerId);
    if (!peer) return;
    this.#peers.delete(peerId);
    this.broadcast({ event: 'peer_left', peer_id: peer.id, peer_label: peer.label, active_peers: this.#peers.size });
    this.#init.notify({ kind: 'peer_left', peer, activePeers: this.#peers.size, departure });
    const what = departure === 'left' ? 'peer left' : 'peer vanished (its connection ended without leave)';
    if (this.#peers.size > 0 || this.#closed) {
      this.#init.logger.info(what, { peer: peer.label, peers: this.#peers.size });
      return;
    }
    this.#peerlessSince = this.#init.clock.now();
    const { keepAliveMs, vanishedPeerKeepAliveMs } = this.#init.settings;
    const keepAlive = departure === 'left' ? keepAliveMs : vanishedPeerKeepAliveMs;
    this.#init.logger.info(what, {
      peer: peer.label,
      peers: 0,
      ...(this.hasKernel ? { kernelKeptMs: keepAlive } : {}),
    });
    this.scheduleTeardown(keepAlive);
  }

  /**
   * A peer opens this room by its path: a file changed by another program is loaded now, also
   * over a conflict (the room's version is safe in the conflict copy), so reconnecting loads the file.
   */
  public async reopenFromDisk(): Promise<void> {
    if (!this.#conflict) {
      this.checkDisk();
      return;
    }
    // The conflict copy is written first: after the reload the room's version lives only there.
    await this.#saving;
    if (this.#conflict) this.reloadFromDisk('reopened after a file conflict');
  }

  /**
   * Answers one request of a peer, already checked against its schema (`wireNotebookRequestSchemas`;
   * the server answers a request that fails it with `bad_request`). Throws {@link DaemonError} for refusals.
   */
  public async handle(peer: RoomPeer, request: WireNotebookRequest): Promise<Record<string, unknown>> {
    const key = 'idempotency_key' in request ? (request.idempotency_key ?? undefined) : undefined;
    switch (request.type) {
      case 'get_cells':
        return {
          document_version: this.#document.version,
          cells: this.#document.cells(),
        } satisfies WireNotebookAnswer<'get_cells'>;
      case 'get_cell':
        return { cell: this.#document.cell(request.cell_id) } satisfies WireNotebookAnswer<'get_cell'>;
      case 'get_runtime':
        return { runtime: this.#runtime } satisfies WireNotebookAnswer<'get_runtime'>;
      case 'insert_cell':
        return this.mutate(
          key,
          'insert_cell',
          () => {
            const { cell, index } = this.#document.insert({
              source: request.source ?? '',
              cellType: request.cell_type ?? 'code',
              index: request.index ?? undefined,
            });
            return {
              result: {
                cell,
                index,
                document_version: this.#document.version,
              } satisfies WireNotebookAnswer<'insert_cell'>,
              change: { op: 'insert', index, cell },
              event: { event: 'cell_inserted', document_version: this.#document.version, index, cell },
            };
          },
          peer.id,
        );
      case 'update_cell':
        return this.mutate(
          key,
          'update_cell',
          () => {
            const cell = this.#document.update(request.cell_id, {
              source: request.source ?? undefined,
              cellType: request.cell_type,
            });
            return {
              result: { cell, document_version: this.#document.version } satisfies WireNotebookAnswer<'update_cell'>,
              change: { op: 'set', cell },
              event: { event: 'cell_updated', document_version: this.#document.version, cell },
            };
          },
          peer.id,
        );
      case 'delete_cell':
        return this.mutate(
          key,
          'delete_cell',
          () => {
            const cellId = request.cell_id;
            this.#document.delete(cellId);
            return {
              result: { document_version: this.#document.version } satisfies WireNotebookAnswer<'delete_cell'>,
              change: { op: 'delete', cell_id: cellId },
              event: { event: 'cell_deleted', document_version: this.#document.version, cell_id: cellId },
            };
          },
          peer.id,
        );
      case 'move_cell':
        return this.mutate(
          key,
          'move_cell',
          () => {
            const cellId = request.cell_id;
            const index = this.#document.move(cellId, request.after_cell_id ?? null);
            return {
              result: { index, document_version: this.#document.version } satisfies WireNotebookAnswer<'move_cell'>,
              change: { op: 'move', cell_id: cellId, index },
              event: { event: 'cell_moved', document_version: this.#document.version, cell_id: cellId, index },
            };
          },
          peer.id,
        );
      case 'clear_outputs':
        return this.mutate(
          key,
          'clear_outputs',
          () => {
            const cell = this.#document.clearOutputs(request.cell_id);
            return {
              result: { cell, document_version: this.#document.version } satisfies WireNotebookAnswer<'update_cell'>,
              change: { op: 'set', cell },
              event: { event: 'cell_updated', document_version: this.#document.version, cell },
            };
          },
          peer.id,
        );
      case 'execute_cell':
        return this.mutate(key, 'execute_cell', () => ({
          result: this.startExecution(request.cell_id),
        }));
      case 'get_execution':
        return this.execution(request.execution_id);
      case 'run_code':
        return this.runScratch(request.source);
      case 'cancel_execution':
        return this.cancelExecution(request.execution_id);
      case 'interrupt': {
        const kernel = this.requireKernelForControl();
        const outcome = await kernel.interrupt();
        this.#init.logger.info('kernel interrupted', { pid: kernel.pid, outcome });
        return { interrupted: outcome === 'interrupted', outcome } satisfies WireNotebookAnswer<'interrupt'>;
      }
      case 'restart_kernel': {
        const kernel = await this.ensureKernel();
        if (!kernel) throw new DaemonError('runtimeUnavailable', this.#runtime.reason ?? 'No kernel is available');
        await kernel.restart();
        this.#kernelGone = undefined;
        this.#init.logger.info('kernel restarted', { pid: kernel.pid, kernelspec: this.kernelName });
        return { restarted: true, runtime: this.#runtime } satisfies WireNotebookAnswer<'restart_kernel'>;
      }
      case 'save':
        return this.save(request.path ?? undefined);
      default:
        // `leave` is the server's (it ends the connection); nothing else reaches here.
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

  /**
   * Shuts the kernel and tells the peers the room is gone. Used by `shutdown_notebook` and daemon
   * shutdown. The journal stays after a daemon shutdown (its ledger still dedupes a request retried
   * after the restart); a shut-down notebook's journal is deleted once the document is saved.
   */
  public async close(reason: string, cause: RoomCloseCause): Promise<void> {
    this.#closed = true;
    this.#teardownTimer?.cancel();
    this.#init.logger.info('room closed', {
      notebookId: this.notebookId,
      path: this.#path,
      why: reason,
      peers: this.#peers.size,
    });
    for (const peer of this.#peers.values()) peer.disconnect(reason, cause);
    this.#peers.clear();
    await this.stopKernel('the room closed');
    let saved = true;
    await this.flush().catch((error: unknown) => {
      saved = false;
      this.#init.logger.error('final save failed', { error });
    });
    this.dispose(cause === 'notebook_shutdown' && saved);
  }

  /**
   * Stops watching the file and closes the journal; with `discardJournal` (the document is saved
   * and the room goes away: reaped or shut down) the journal file is deleted.
   */
  public dispose(discardJournal: boolean): void {
    this.#disposed = true;
    this.#watchTimer?.cancel();
    this.#saveTimer?.cancel();
    this.#saveTimer = undefined;
    this.#watcher?.close();
    this.#watcher = undefined;
    try {
      if (discardJournal && !this.#dirty) this.#journal?.discard();
      else this.#journal?.close();
    } catch (error) {
      this.#init.logger.warn('could not close the journal', { notebookId: this.notebookId, error });
    }
    this.#journal = undefined;
  }

  /**
   * Applies one mutating request: refused while the file is in conflict; otherwise the change is
   * journaled (with its idempotency entry) before the answer goes out, so an acknowledged edit
   * survives a daemon crash. A journal that cannot be written makes the room save at once instead,
   * and the request fails when that fails too.
   */
  private mutate(
    key: string | undefined,
    operation: string,
    apply: () => { result: Record<string, unknown>; change?: DocumentChange; event?: WireRoomEvent },
    exceptPeerId?: string,
  ): Promise<Record<string, unknown>> {
    return this.#ledger.run(key, operation, async () => {
      await this.ownWriteSettled();
      this.assertWritable();
      const { result, change, event } = apply();
      const notice = this.#notice;
      this.#notice = undefined;
      const durable = this.journalAppend(change, key === undefined ? undefined : { key, operation, result });
      if (event) this.changed(event, exceptPeerId);
      if (!durable && (change !== undefined || key !== undefined)) {
        await this.flush().catch((error: unknown) => {
          throw new DaemonError(
            'notDurable',
            `The change was applied but could not be made durable (journal and save both failed: ${(error as Error).message}).`,
          );
        });
      }
      if (this.#journal?.overCap) void this.flush().catch(() => undefined);
      return notice === undefined ? result : { ...result, warning: notice };
    });
  }

  /** Writes to the journal; `false` when it could not (logged). */
  private journalAppend(change: DocumentChange | undefined, ledger: LedgerRecord | undefined): boolean {
    if (!this.#journal) return this.#init.journalSettings === undefined || !this.isPersistent();
    try {
      this.#journal.append(change, ledger);
      return true;
    } catch (error) {
      this.#init.logger.error('could not append to the journal; saving at once', {
        notebookId: this.notebookId,
        error,
      });
      return false;
    }
  }

  /** Whether the document is kept anywhere (a file, or the untitled store). */
  private isPersistent(): boolean {
    return this.#path !== undefined || !this.ephemeral;
  }

  /** Resolves once no save of ours to the file is under way. */
  private async ownWriteSettled(): Promise<void> {
    while (this.#writing) await this.#writing;
  }

  /** Throws the conflict message while the file is in conflict; first picks up a change on disk. */
  private assertWritable(): void {
    if (!this.#conflict) this.checkDisk();
    if (this.#conflict) throw new DaemonError('fileConflict', this.#conflict.message);
  }

  /**
   * Compares the file with what the room last read or wrote. Changed by someone else: without
   * unsaved edits the room loads it; with unsaved edits the room enters a conflict (the file is left
   * as it is, the room's version is written beside it). Synchronous, so a request sees its result.
   */
  private checkDisk(): void {
    const known = this.#fileState;
    if (this.#path === undefined || this.#conflict || !known || known.path !== this.#path) return;
    const seen = readNotebookFileIfChanged(known, this.#writingSha);
    if (seen === 'missing') {
      // (Our own atomic rename may be under way: judged once it settled.)
      if (!this.#writing) this.fileWentMissing(known);
      return;
    }
    if (!seen) return;
    if (this.#conditions.has('file_missing')) {
      this.setCondition('file_missing', undefined);
      this.notice(`${known.path} is back on disk.`);
    }
    if (!seen.changed) {
      if (seen.state.sha256 === known.sha256) this.#fileState = seen.state;
      return;
    }
    if (this.#writing) {
      // Before our rename or after it? Only the finished save can tell: judge it then.
      this.#recheckAfterWrite = true;
      return;
    }
    if (!this.#dirty) {
      let loaded: NotebookDocument;
      try {
        loaded = NotebookDocument.fromIpynb(seen.text, this.#path);
      } catch (error) {
        // Perhaps still being written: the next change of the file brings us back here.
        this.#init.logger.warn('the notebook file changed on disk but cannot be read yet', {
          notebookId: this.notebookId,
          error,
        });
        return;
      }
      this.applyReload(loaded, seen.state, 'changed on disk by another program');
      const count = loaded.cells().length;
      this.notice(
        `${known.path} was replaced on disk by another program; the notebook was reloaded from it (${count} cell${count === 1 ? '' : 's'} now). Read the cells again before editing.`,
      );
      return;
    }
    this.enterConflict(seen.state);
  }

  /**
   * The file is gone (deleted, or moved away: a file of the same inode in its directory names where
   * to). The room keeps the notebook and tells its peers; the next save writes the file back.
   */
  private fileWentMissing(known: NotebookFileState): void {
    if (this.#conditions.has('file_missing')) return;
    const movedTo = sameInodeIn(dirname(known.path), known.ino);
    const what = movedTo === undefined ? 'was deleted or moved away' : `was renamed to ${movedTo}`;
    this.setCondition(
      'file_missing',
      `${known.path} ${what} by another program. The daemon keeps this notebook, and the next edit or save_notebook writes it to ${known.path} again${movedTo === undefined ? '' : ` (connect_notebook(path='${movedTo}') to follow the renamed file instead)`}.`,
    );
  }

  private reloadFromDisk(why: string): void {
    const path = this.#path;
    if (path === undefined) return;
    let text: string;
    let loaded: NotebookDocument;
    try {
      text = readFileSync(path, 'utf8');
      loaded = NotebookDocument.fromIpynb(text, path);
    } catch (error) {
      this.#init.logger.warn('could not reload the notebook file', { notebookId: this.notebookId, error });
      return;
    }
    this.applyReload(loaded, notebookFileState(path, text), why);
  }

  private applyReload(loaded: NotebookDocument, state: NotebookFileState, why: string): void {
    const before = this.#document.version;
    const changes = this.#document.replaceWith(loaded);
    this.#conflict = undefined;
    this.#fileState = state;
    this.#saveTimer?.cancel();
    this.#saveTimer = undefined;
    this.#dirty = false;
    this.#dirtySince = undefined;
    changes.forEach((change, offset) => {
      const documentVersion = before + offset + 1;
      if (change.op === 'delete')
        this.broadcast({ event: 'cell_deleted', document_version: documentVersion, cell_id: change.cell_id });
      else if (change.op === 'insert')
        this.broadcast({
          event: 'cell_inserted',
          document_version: documentVersion,
          index: change.index,
          cell: change.cell,
        });
    });
    this.rotateJournal(state, Number.POSITIVE_INFINITY);
    this.#init.logger.info('reloaded the notebook from its file', {
      notebookId: this.notebookId,
      path: state.path,
      why,
    });
  }

  private enterConflict(state: NotebookFileState): void {
    const path = state.path;
    const copy = conflictCopyPath(path, this.#init.clock.now());
    this.#conflict = {
      copy,
      mode: state.mode,
      message: `${path} was changed on disk by another program while this notebook had unsaved edits; the file was left as it is and your version was saved as ${copy}. Reconnect (connect_notebook with the path) to load the file, or save_notebook to overwrite it with your version.`,
    };
    this.#fileState = state;
    this.#init.logger.warn('notebook file conflict', { notebookId: this.notebookId, path, copy });
    this.#saveTimer?.cancel();
    this.#saveTimer = undefined;
    this.#dirty = true;
    this.#saving = this.#saving.then(() => this.writeNow()).catch(() => undefined);
  }

  private watchFile(): void {
    this.#watcher?.close();
    this.#watcher = undefined;
    const path = this.#path;
    if (path === undefined) return;
    const name = basename(path);
    try {
      this.#watcher = watch(dirname(path), { persistent: false }, (_event, changed) => {
        if (changed !== null && changed !== name) return;
        this.#watchTimer?.cancel();
        this.#watchTimer = this.#init.clock.setTimer(50, () => {
          this.#watchTimer = undefined;
          if (this.#closed) return;
          try {
            this.checkDisk();
          } catch (error) {
            this.#init.logger.warn('checking the notebook file failed', { notebookId: this.notebookId, error });
          }
        });
      });
      this.#watcher.on('error', (error) => {
        this.#init.logger.warn('stopped watching the notebook file; changes are still checked before edits and saves', {
          notebookId: this.notebookId,
          error,
        });
        this.#watcher?.close();
        this.#watcher = undefined;
      });
    } catch (error) {
      this.#init.logger.warn('cannot watch the notebook file; changes are still checked before edits and saves', {
        notebookId: this.notebookId,
        error,
      });
    }
  }

  /** After a save (or reload) of `state`: the journal restarts from it, keeping edits after `savedSeq`. */
  private rotateJournal(state: NotebookFileState, savedSeq: number): void {
    const settings = this.#init.journalSettings;
    if (!settings || !this.isPersistent()) return;
    const base: JournalBase = { path: state.path, size: state.size, mtime_ms: state.mtimeMs, sha256: state.sha256 };
    try {
      if (this.#journal) this.#journal.rotate(base, this.#ledger.snapshot(), savedSeq);
      else this.#journal = RoomJournal.begin(settings, this.notebookId, base, this.#ledger.snapshot());
    } catch (error) {
      this.#init.logger.error('could not rotate the journal', { notebookId: this.notebookId, error });
    }
  }

  /**
   * An execution journaled before the daemon stopped never finished in this daemon life: its
   * ledger entry (a retried `execute_cell`) and `get_execution` answer `aborted`, saying why.
   */
  private restoredLedgerRecord(record: LedgerRecord): LedgerRecord {
    const result = record.result as Record<string, unknown> | null;
    if (record.operation !== 'execute_cell' || typeof result?.execution_id !== 'string') return record;
    if (result.status !== 'queued' && result.status !== 'running') return record;
    const aborted: ExecutionRecord = {
      executionId: result.execution_id,
      cellId: String(result.cell_id),
      status: 'aborted',
      outputs: [
        {
          output_type: 'error',
          ename: 'DaemonRestarted',
          evalue: 'The daemon stopped before this execution finished; run the cell again.',
          traceback: [],
        },
      ],
      executionCount: null,
    };
    this.remember(aborted);
    return { ...record, result: this.describe(aborted) };
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
    if (this.#kernelGone !== undefined) {
      record.kernelNotice = `${this.#kernelGone}: this ${newKernelConsequence}`;
      this.#kernelGone = undefined;
    }
    this.remember(record);
    const source = cell.source;
    this.#executionQueue = this.#executionQueue.catch(() => undefined).then(() => this.runExecution(record, source));
    return this.describe(record);
  }

  /**
   * A scratch run: `source` in the kernel after what is queued, with no cell, no broadcast, no
   * history and no execution count; its outputs are answered and kept nowhere.
   */
  private async runScratch(source: string): Promise<WireNotebookAnswer<'run_code'>> {
    if (this.#runtime.state === 'unavailable') {
      throw new DaemonError(
        'runtimeUnavailable',
        `Cannot run code: the runtime is unavailable (${this.#runtime.reason ?? 'no kernel'})`,
      );
    }
    const run = this.#executionQueue
      .catch(() => undefined)
      .then(async () => {
        const kernel = await this.ensureKernel().catch(() => undefined);
        if (!kernel) throw new DaemonError('runtimeUnavailable', this.#runtime.reason ?? 'No kernel is available');
        // Said here as with a cell: the agent's next run of any kind is where it learns its state is gone.
        const kernelGone = this.#kernelGone;
        this.#kernelGone = undefined;
        const result = await kernel.execute(source, { storeHistory: false });
        return { result, kernelGone };
      });
    this.#executionQueue = run.then(
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
   * Stops one execution: a queued one never runs (it ends `aborted` now), the running one is
   * interrupted (it ends as the kernel reports it), a finished one is left alone. Other executions
   * are not touched: a running execution is interrupted only when it is the one named.
   */
  private async cancelExecution(executionId: string): Promise<WireNotebookAnswer<'cancel_execution'>> {
    const record = this.#executions.get(executionId);
    if (!record) throw new DaemonError('badRequest', `Execution not found: ${executionId}`);
    if (record.status === 'queued') {
      record.status = 'aborted';
      record.outputs = [
        { output_type: 'error', ename: 'ExecutionCancelled', evalue: 'Cancelled before it started.', traceback: [] },
      ];
      this.finishExecution(record);
      return { execution_id: executionId, cancelled: 'dequeued' };
    }
    if (record.status !== 'running' || !this.#kernel) return { execution_id: executionId, cancelled: 'none' };
    await this.#kernel.interrupt();
    this.#init.logger.info('kernel interrupted to cancel an execution', { pid: this.#kernel?.pid, executionId });
    return { execution_id: executionId, cancelled: 'interrupted' };
  }

  private async runExecution(record: ExecutionRecord, source: string): Promise<void> {
    // Cancelled while queued: it already ended.
    if (record.status !== 'queued') return;
    const kernel = await this.ensureKernel().catch(() => undefined);
    // Cancelled while its kernel was starting: it already ended.
    if (record.status !== 'queued') return;
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
    this.updateCellOutputs(record, [], null, true);
    try {
      const result = await kernel.execute(source, {
        onOutput: (output, outputsSoFar) => {
          record.outputs = outputsSoFar;
          this.updateCellOutputs(record, outputsSoFar, null, false);
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
      if (result.status === 'aborted' && this.#kernel !== kernel && this.#kernelGone !== undefined) {
        // The kernel died under this run (its exit was handled before this continuation).
        record.kernelNotice = `${this.#kernelGone} while this cell ran, so it was aborted. Run it again: it ${newKernelConsequence}`;
        this.#kernelGone = undefined;
      }
    } catch (error) {
      record.status = 'aborted';
      this.#init.logger.warn('execution failed', { notebookId: this.notebookId, error });
    }
    this.updateCellOutputs(record, record.outputs, record.executionCount, true);
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

  /** `durable`: journal it too (start and end of an execution; the outputs in between are not replayed). */
  private updateCellOutputs(
    record: ExecutionRecord,
    outputs: readonly NotebookOutput[],
    count: number | null,
    durable: boolean,
  ): void {
    try {
      const cell = this.#document.setExecutionState(record.cellId, outputs, count);
      if (durable) this.journalAppend({ op: 'set', cell }, undefined);
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

  private describe(record: ExecutionRecord): WireExecutionState {
    return {
      execution_id: record.executionId,
      cell_id: record.cellId,
      status: record.status,
      outputs: [...record.outputs],
      execution_count: record.executionCount,
      ...(record.kernelNotice === undefined ? {} : { kernel_notice: record.kernelNotice }),
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
    // An explicit save overwrites the file; a change on disk not seen yet is seen first (a clean
    // room loads it, a room with unsaved edits enters the conflict, and the agent is told).
    if (this.#conflict === undefined && target === previous) {
      await this.ownWriteSettled();
      this.assertWritable();
    }
    if (target !== previous) {
      // Transactional: the room moves to the new file only once the file is written; a failed
      // write leaves the path, the registry, the watcher and autosave as they were.
      const text = this.#document.toIpynb();
      let written: NotebookFileState | undefined;
      try {
        await this.#init.bindPath(this, target, async () => {
          written = notebookFileState(target, text, await writeFileAtomic(target, text, 0o644));
        });
      } catch (error) {
        if (DaemonError.is(error)) throw error;
        const kept = previous === undefined ? 'it stays untitled' : `it is still saved to ${previous}`;
        throw new DaemonError(
          'saveFailed',
          `Cannot save to ${target}: ${describeWriteFailure(error)}. Nothing changed: ${kept}.`,
          { cause: error },
        );
      }
      this.#path = target;
      this.#workingDir = dirname(target);
      this.#fileState = written;
      this.watchFile();
    }
    // An explicit save writes the room's version over a conflict.
    this.#conflict = undefined;
    this.#dirty = true;
    try {
      await this.flush();
    } catch (error) {
      if (DaemonError.is(error)) throw error;
      throw new DaemonError(
        'saveFailed',
        `Cannot save to ${target}: ${describeWriteFailure(error)}. The daemon keeps every edit and tries again; session_status shows when saving works again.`,
        { cause: error },
      );
    }
    if (previous === undefined && !this.#ephemeral) await this.#init.untitled.remove(this.notebookId);
    this.broadcast({ event: 'saved', notebook_path: target });
    return { notebook_id: this.notebookId, notebook_path: target } satisfies WireNotebookAnswer<'save'>;
  }

  private changed(event: WireRoomEvent, exceptPeerId?: string): void {
    this.broadcast(event, exceptPeerId);
    this.markDirty();
  }

  /**
   * Sets (a message) or clears (`undefined`) the room's condition of `kind`, broadcasting the whole
   * list to every peer when it changed. Logged at warn when set, info when cleared.
   */
  private setCondition(kind: WireRoomConditionKind, message: string | undefined): void {
    const changed = message === undefined ? this.#conditions.clear(kind) : this.#conditions.set(kind, message);
    if (!changed) return;
    if (message === undefined) this.#init.logger.info('room condition cleared', { notebookId: this.notebookId, kind });
    else this.#init.logger.warn('room condition', { notebookId: this.notebookId, kind, message });
    this.broadcast({ event: 'conditions', conditions: this.#conditions.list() });
  }

  /** Tells every peer once (their agents hear it with their next answer). */
  private notice(message: string): void {
    this.#init.logger.info('room notice', { notebookId: this.notebookId, message });
    this.broadcast({ event: 'notice', message });
  }

  private broadcast(event: WireRoomEvent, exceptPeerId?: string): void {
    for (const peer of this.#peers.values()) {
      if (peer.id !== exceptPeerId) peer.send({ type: 'broadcast', ...event });
    }
  }

  /**
   * After a failed write: the next try in 1 s, then twice as long each time up to 30 s, until one
   * succeeds (a change tries sooner). Returns the delay; none once the room is closed.
   */
  private scheduleSaveRetry(): number | undefined {
    if (this.#disposed) return undefined;
    this.#saveRetryMs = Math.min(this.#saveRetryMs === 0 ? firstSaveRetryMs : this.#saveRetryMs * 2, maxSaveRetryMs);
    if (this.#saveTimer) return this.#saveRetryMs;
    this.#saveTimer = this.#init.clock.setTimer(this.#saveRetryMs, () => {
      this.#saveTimer = undefined;
      this.#saving = this.#saving.then(() => this.writeNow()).catch(() => undefined);
    });
    return this.#saveRetryMs;
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

  /**
   * Writes the document where it belongs: the file (checked first: changed by someone else, it is
   * not written over), the conflict copy while in conflict, the untitled store for persisted
   * untitled rooms. Then the journal restarts from what was written.
   */
  private async writeNow(): Promise<void> {
    if (!this.#dirty) return;
    if (this.#conflict === undefined && this.#path !== undefined) {
      this.checkDisk();
      if (!this.#dirty) return;
    }
    const target =
      this.#conflict?.copy ?? this.#path ?? (this.ephemeral ? undefined : this.#init.untitled.pathOf(this.notebookId));
    this.#dirty = false;
    this.#dirtySince = undefined;
    if (target === undefined) return;
    const text = this.#document.toIpynb();
    const hash = sha256(text);
    let mark = Number.POSITIVE_INFINITY;
    try {
      if (this.#journal) mark = this.#journal.markSaving(hash);
    } catch (error) {
      this.#init.logger.warn('could not mark the save in the journal', { notebookId: this.notebookId, error });
    }
    const toFile = target === this.#path;
    // A new file: the conflict copy takes the notebook's mode; untitled store files are private.
    const write = writeFileAtomic(target, text, this.#conflict?.mode ?? (this.#path === undefined ? 0o600 : 0o644));
    if (toFile) {
      this.#writingSha = hash;
      this.#writing = write.catch(() => undefined);
    }
    let state: NotebookFileState | undefined;
    let failure: unknown;
    try {
      state = notebookFileState(target, text, await write);
    } catch (error) {
      failure = error;
    }
    // Unsaved again when it failed, before a deferred change is judged (a conflict, not a reload).
    if (state === undefined) this.#dirty = true;
    if (toFile) {
      this.#writingSha = undefined;
      this.#writing = undefined;
      if (state) this.#fileState = state;
      if (this.#recheckAfterWrite) {
        this.#recheckAfterWrite = false;
        this.checkDisk();
      }
    }
    if (state === undefined) {
      const retryMs = this.scheduleSaveRetry();
      this.#init.logger.error('autosave failed; retrying', {
        notebookId: this.notebookId,
        path: target,
        retryInMs: retryMs,
        error: failure,
      });
      if (DaemonError.is(failure, 'fileReadOnly')) this.setCondition('file_read_only', failure.message);
      else {
        this.setCondition(
          'autosave_failing',
          `Saving ${target} failed (${describeWriteFailure(failure)}); the edits are kept by the daemon but are not in the file yet. It tries again every ${Math.round(maxSaveRetryMs / 1000)} s at most.`,
        );
      }
      throw failure;
    }
    this.#saveRetryMs = 0;
    const failing = this.#conditions.has('autosave_failing') || this.#conditions.has('file_read_only');
    this.setCondition('autosave_failing', undefined);
    this.setCondition('file_read_only', undefined);
    if (failing) this.notice(`Saving works again: ${target} has every edit.`);
    if (toFile && this.#conditions.has('file_missing')) {
      this.setCondition('file_missing', undefined);
      this.notice(`${target} was written again with every edit.`);
    }
    this.#lastSaved = { at: this.#init.clock.now(), path: target };
    this.#init.logger.debug('saved', { path: target, bytes: state.size });
    this.rotateJournal(state, mark);
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
    const request = this.#document.kernelRequest();
    this.#init.logger.info('kernel starting', { kernelspec: request.name, cwd: this.#workingDir });
    let launch: Awaited<ReturnType<KernelLauncher['launch']>>;
    try {
      launch = await this.#init.launcher.launch(this.#workingDir, request, this.#client);
    } catch (error) {
      const why = (error as Error).message;
      this.#init.logger.warn('kernel failed to start', { kernelspec: request.name, error: why });
      // `failed`, not a plain `stopped`: a client must not call this room's runtime ready. The next
      // execution (or restart_kernel) tries again.
      this.setRuntime({ state: 'stopped', kernel_status: 'failed', reason: `kernel failed to start: ${why}` });
      this.setCondition(
        'kernel_failed',
        `The kernel '${request.name}' did not start, so nothing runs; the next run or restart_kernel tries again. ${why}`,
      );
      return undefined;
    }
    if (launch.kind === 'unavailable') {
      this.#init.logger.info('no kernel can run this notebook', { kernelspec: request.name, reason: launch.reason });
      this.setRuntime({ state: 'unavailable', kernel_status: null, reason: launch.reason });
      return undefined;
    }
    const kernel = launch.kernel;
    this.#interpreter = launch.interpreter;
    if (this.#closed) {
      await kernel.shutdown();
      return undefined;
    }
    this.#kernel = kernel;
    this.#init.logger.info('kernel started', { kernelspec: request.name, pid: kernel.pid });
    this.setCondition('kernel_failed', undefined);
    kernel.onStatus((status) => {
      if (this.#kernel === kernel) this.setRuntime({ state: 'ready', kernel_status: status });
    });
    kernel.onExit((info) => {
      if (this.#kernel !== kernel) return;
      this.#kernel = undefined;
      this.#init.logger.warn('kernel exited unexpectedly', { pid: kernel.pid, code: info.code, signal: info.signal });
      this.#kernelGone = `The kernel exited unexpectedly (${info.signal ?? `exit code ${info.code}`})`;
      this.setRuntime({
        state: 'stopped',
        kernel_status: 'dead',
        reason: `kernel exited (${info.signal ?? info.code})`,
      });
    });
    this.setRuntime({ state: 'ready', kernel_status: kernel.status });
    return kernel;
  }

  private scheduleTeardown(keepAliveMs: number): void {
    this.#teardownTimer?.cancel();
    const generation = this.#connectionGeneration;
    this.#teardownTimer = this.#init.clock.setTimer(keepAliveMs, () => {
      this.#teardownTimer = undefined;
      // Revalidate: a peer may have joined (and even left again) since this was scheduled.
      if (this.#peers.size > 0 || this.#connectionGeneration !== generation || this.#teardown) return;
      this.#teardown = this.stopKernel(`no peer for ${keepAliveMs} ms (keep-alive)`).finally(() => {
        this.#teardown = undefined;
      });
      void this.flush().catch(() => undefined);
    });
  }

  /** Shuts the kernel down; `why` is logged. */
  private async stopKernel(why: string): Promise<void> {
    const starting = this.#starting;
    if (starting) await starting.catch(() => undefined);
    const kernel = this.#kernel;
    if (!kernel) return;
    this.#kernel = undefined;
    this.#init.logger.info('kernel shut down', { pid: kernel.pid, why });
    this.#kernelGone = 'The kernel was shut down after no client had this notebook open for a while';
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

/** `<dir>/<name>.nteract-conflict-<UTC stamp>.ipynb` beside the notebook. */
function conflictCopyPath(path: string, now: number): string {
  const stamp = new Date(now)
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');
  return join(dirname(path), `${basename(path, '.ipynb')}.nteract-conflict-${stamp}.ipynb`);
}

function badRequest(message: string): DaemonError {
  return new DaemonError('badRequest', message);
}

/** A failed write in a few words: the error code and message (`ENOSPC: no space left on device, …`). */
function describeWriteFailure(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** The notebook file in `dir` whose inode is `ino` (where a renamed file went), if any. */
function sameInodeIn(dir: string, ino: number): string | undefined {
  try {
    for (const name of readdirSync(dir)) {
      if (!name.endsWith('.ipynb')) continue;
      const path = join(dir, name);
      try {
        if (statSync(path).ino === ino) return path;
      } catch {
        // gone meanwhile
      }
    }
  } catch {
    // the directory itself is gone or unreadable
  }
  return undefined;
}
