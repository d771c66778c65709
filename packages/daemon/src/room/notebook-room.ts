import { dirname } from 'node:path';
import type { Clock, Logger } from '@nteract-mcp/foundation';
import type {
  WireCell,
  WireCellSource,
  WireExecutionState,
  WireNotebookAnswer,
  WireNotebookRequest,
  WireRoomCondition,
  WireRoomInfo,
  WireRuntimeState,
} from '@nteract-mcp/runtimed-protocol';
import { DaemonError } from '../daemon-error.js';
import type { NotebookDocument, NotebookOutput } from '../document/notebook-document.js';
import type { NotebookFileState } from '../persistence/notebook-file-state.js';
import { type JournalSettings, type LedgerRecord, RoomJournal } from '../persistence/room-journal.js';
import type { UntitledStore } from '../persistence/untitled-store.js';
import { applyDocumentEdit, type DocumentEdit } from './document-edit.js';
import { IdempotencyLedger } from './idempotency-ledger.js';
import type { KernelClient, KernelLauncher } from './kernel-launcher.js';
import type { RoomActivity } from './room-activity.js';
import { RoomComments } from './room-comments.js';
import { RoomEditHistory } from './room-edit-history.js';
import { RoomExecutions } from './room-executions.js';
import { RoomFileKeeper } from './room-file-keeper.js';
import { RoomInputs } from './room-inputs.js';
import { RoomJournalWriter } from './room-journal-writer.js';
import { RoomKernelKeeper } from './room-kernel-keeper.js';
import { type PeerDeparture, type RoomCloseCause, type RoomEvent, type RoomPeer, RoomPeers } from './room-peers.js';
import type { RoomSettings } from './room-settings.js';

export type { PeerActivity, RoomActivity } from './room-activity.js';
export type { PeerDeparture, RoomCloseCause, RoomPeer } from './room-peers.js';
export type { RoomSettings } from './room-settings.js';

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
  /** Executions replayed from the journal (finished ones answer `get_execution` as they ended). */
  readonly executions?: readonly WireExecutionState[];
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
 * One notebook in the daemon: its document, its peers, its kernel, its saves. The room answers
 * its peers' requests and applies (and journals) their edits; its other jobs are its
 * collaborators: {@link RoomPeers} (who is here, what they are told), {@link RoomKernelKeeper}
 * (the kernel and its keep-alive teardown), {@link RoomExecutions} (the execution queue and
 * history), {@link RoomFileKeeper} (the file, autosave, conflicts, save-as) and
 * {@link RoomJournalWriter}.
 *
 * Lifetime rules: only the last peer leaving schedules kernel teardown after `keepAliveMs` (see
 * {@link RoomKernelKeeper}). The room itself (document, autosave) stays resident; removing it is
 * the reaper's decision, after {@link NotebookRoom.flush}.
 */
export class NotebookRoom {
  public readonly notebookId: string;
  public readonly createdAt: number;
  readonly #document: NotebookDocument;
  readonly #init: RoomInit;
  readonly #peers: RoomPeers;
  readonly #ledger: IdempotencyLedger;
  readonly #journal: RoomJournalWriter;
  readonly #file: RoomFileKeeper;
  readonly #kernel: RoomKernelKeeper;
  readonly #executions: RoomExecutions;
  readonly #history: RoomEditHistory;
  readonly #inputs: RoomInputs;
  readonly #comments: RoomComments;
  #peerlessSince: number | undefined;
  #reservations = 0;
  #closed = false;
  /** Lets the blob store sweep what this room references (set while the room is open). */
  #releaseBlobs: (() => void) | undefined;
  /** Said once to the next edit: a journal of this room could not be replayed. */
  #notice: string | undefined;

  public constructor(init: RoomInit) {
    this.#init = init;
    this.notebookId = init.notebookId;
    this.#document = init.document;
    // Large output values live in the blob store, the room keeping references (held against sweeps).
    const blobs = init.journalSettings?.blobs;
    const spill = blobs ? (outputs: readonly NotebookOutput[]) => blobs.spillOutputs(outputs) : undefined;
    if (spill) init.document.keepLargeOutputs(spill);
    this.#releaseBlobs = blobs?.hold(() => this.blobsHeld());
    this.createdAt = init.clock.now();
    this.#peerlessSince = this.createdAt;
    const { notebookId, clock, logger } = init;
    this.#peers = new RoomPeers(notebookId, () => clock.now(), logger);
    this.#ledger = new IdempotencyLedger(init.settings.ledgerCapacity);
    this.#history = new RoomEditHistory(init.document, () => clock.now());
    this.#journal = new RoomJournalWriter({
      notebookId,
      settings: init.journalSettings,
      journal: init.journal,
      isPersistent: () => this.#file.isPersistent(),
      ledgerSnapshot: () => this.#ledger.snapshot(),
      executionSnapshot: () => this.#executions.snapshot(),
      logger,
    });
    this.#file = new RoomFileKeeper({
      notebookId,
      document: init.document,
      path: init.path,
      ephemeral: init.ephemeral,
      settings: init.settings,
      untitled: init.untitled,
      journal: this.#journal,
      fileState: init.fileState,
      bindPath: (path, write) => init.bindPath(this, path, write),
      onRebound: (path) => this.#kernel.moveWorkingDir(dirname(path)),
      onReloaded: () => this.#history.reloaded(),
      isClosed: () => this.#closed,
      signals: this.#peers,
      clock,
      logger,
    });
    const ranBefore = init.document.cells().some((cell) => cell.cell_type === 'code' && cell.execution_count !== null);
    this.#kernel = new RoomKernelKeeper({
      kernelRequest: () => this.#document.kernelRequest(),
      launcher: init.launcher,
      workingDir: init.workingDir,
      workingDirIsDefault: init.workingDirIsDefault === true,
      client: init.client,
      kernelGone: ranBefore
        ? 'Cells of this notebook ran in an earlier kernel (the notebook was opened from its file, or the daemon restarted)'
        : undefined,
      signals: this.#peers,
      onRuntime: (runtime) => init.notify({ kind: 'runtime', runtime }),
      peerCount: () => this.#peers.size,
      onTeardown: () => void this.#file.flush().catch(() => undefined),
      clock,
      logger,
    });
    this.#inputs = new RoomInputs({
      clock,
      logger,
      findPeer: (peerId, label) => this.#peers.find(peerId, label),
    });
    this.#executions = new RoomExecutions({
      notebookId,
      document: init.document,
      kernel: this.#kernel,
      history: init.settings.executionHistory,
      clock,
      logger,
      broadcast: (event) => this.#peers.broadcast(event),
      changed: (event) => this.changed(event),
      journal: (change) => this.#journal.append(change, undefined),
      journalExecution: (state) => this.#journal.appendExecution(state),
      ...(spill ? { spill } : {}),
      finished: (record) => {
        this.#inputs.executionEnded(record.executionId);
        if (record.peerLabel !== undefined && record.scratch !== true)
          this.#history.ran(record.cellId, record.peerLabel, record.status);
      },
      askInput: (record, prompt, password) =>
        this.#inputs.ask(record, { peerId: record.peerId, peerLabel: record.peerLabel }, prompt, password),
    });
    this.#comments = new RoomComments({
      notebookId,
      journal: init.journalSettings,
      documentPath: () => this.path ?? (this.ephemeral ? undefined : init.untitled.pathOf(notebookId)),
      document: init.document,
      peers: () => this.#peers.presence().map(({ peer }) => peer),
      clock,
      logger,
    });
    this.#executions.restore(init.executions ?? []);
    this.#ledger.restore(init.ledger.map((record) => this.#executions.restoredLedgerRecord(record)));
    if (init.unmatchedJournal !== undefined) {
      this.#notice = `Edits journaled for this notebook before the daemon stopped could not be applied, because ${init.path ?? 'its file'} was changed by another program meanwhile; they were kept in ${init.unmatchedJournal}.`;
    }
    if (init.replayed) this.#file.markDirty();
  }

  /** Discarded when its room closes: created ephemeral and not saved to a file since. */
  public get ephemeral(): boolean {
    return this.#file.ephemeral;
  }

  public get path(): string | undefined {
    return this.#file.path;
  }

  public get peerCount(): number {
    return this.#peers.size;
  }

  /** When the room last became peerless (`undefined` while it has peers). */
  public get peerlessSince(): number | undefined {
    return this.#peerlessSince;
  }

  public get hasKernel(): boolean {
    return this.#kernel.hasKernel;
  }

  public get runtime(): WireRuntimeState {
    return this.#kernel.runtime;
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
    return this.#peers.conditions();
  }

  public info(): WireRoomInfo {
    const kernel = this.#kernel.current;
    const lastSaved = this.#file.lastSaved;
    const conflict = this.#file.conflictMessage;
    const interpreter = this.#kernel.interpreter;
    return {
      notebook_id: this.notebookId,
      active_peers: this.#peers.size,
      has_kernel: kernel !== undefined,
      kernel_status: this.runtime.kernel_status,
      ephemeral: this.ephemeral,
      notebook_path: this.path ?? null,
      ...(conflict ? { file_conflict: conflict } : {}),
      conditions: this.#peers.conditions(),
      peer_labels: this.#peers.labels(),
      peers: this.activity().peers.map(({ label, cell_id, running_cell_id }) => ({ label, cell_id, running_cell_id })),
      runtime: this.runtime,
      kernel_name: this.kernelName,
      ...(kernel ? { kernel_pid: kernel.pid } : {}),
      last_saved: lastSaved ? { at: new Date(lastSaved.at).toISOString(), path: lastSaved.path } : null,
      working_dir: this.#kernel.workingDir,
      ...(interpreter === undefined ? {} : { kernel_interpreter: interpreter }),
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
    this.#kernel.adoptClient(client, this.path !== undefined);
  }

  /** The conflict message while the room's file was changed by another program under unsaved edits. */
  public get fileConflict(): string | undefined {
    return this.#file.conflictMessage;
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
    this.#peers.add(peer);
    this.#kernel.peerJoined();
    this.#peerlessSince = undefined;
    this.#peers.broadcast(
      { event: 'peer_joined', peer_id: peer.id, peer_label: peer.label, active_peers: this.#peers.size },
      peer.id,
    );
    this.#init.notify({ kind: 'peer_joined', peer, activePeers: this.#peers.size });
    this.#inputs.peerJoined(peer);
    this.#init.logger.info('peer joined', { peer: peer.label, peers: this.#peers.size });
    void this.#kernel
      .ensureKernel()
      .catch((error: unknown) => this.#init.logger.warn('kernel start failed', { error }));
  }

  /**
   * A peer is gone. When it was the last, the kernel is kept `keepAliveMs` after a clean `leave`,
   * `vanishedPeerKeepAliveMs` after a dropped connection.
   */
  public removePeer(peerId: string, departure: PeerDeparture): void {
    const peer = this.#peers.remove(peerId);
    if (!peer) return;
    const peers = this.#peers.size;
    this.#peers.broadcast({ event: 'peer_left', peer_id: peer.id, peer_label: peer.label, active_peers: peers });
    this.#init.notify({ kind: 'peer_left', peer, activePeers: peers, departure });
    const what = departure === 'left' ? 'peer left' : 'peer vanished (its connection ended without leave)';
    if (peers > 0 || this.#closed) {
      this.#init.logger.info(what, { peer: peer.label, peers });
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
    this.#kernel.scheduleTeardown(keepAlive);
  }

  /**
   * A peer opens this room by its path: a file changed by another program is loaded now, also
   * over a conflict (the room's version is safe in the conflict copy), so reconnecting loads the file.
   */
  public reopenFromDisk(): Promise<void> {
    return this.#file.reopenFromDisk();
  }

  /**
   * Answers one notebook request of `peer`. The cell it names (or inserts) becomes the cell the
   * peer is on (see {@link NotebookRoom.activity}).
   */
  public async handle(peer: RoomPeer, request: WireNotebookRequest): Promise<Record<string, unknown>> {
    const answer = this.answerFor(peer, await this.dispatch(peer, request));
    const inserted = request.type === 'insert_cell' ? (answer.cell as WireCell | undefined)?.id : undefined;
    const named = 'cell_id' in request ? request.cell_id : inserted;
    if (named !== undefined) this.#peers.setPresence(peer.id, request.type === 'delete_cell' ? null : named, false);
    return answer;
  }

  /**
   * `answer` in the form `peer` reads: a source edit is answered (and kept in the ledger) with the
   * cell's source fields, which a peer that did not declare `source_edits` gets as the whole cell
   * (the rest of it as the cell has it now; a replay of an edit of a cell deleted since, without outputs).
   */
  private answerFor(peer: RoomPeer, answer: Record<string, unknown>): Record<string, unknown> {
    const source = answer.cell_source as WireCellSource | undefined;
    if (source === undefined || peer.readsSourceEdits === true) return answer;
    const { cell_source: _, ...rest } = answer;
    const current = this.#document.has(source.id) ? this.#document.cell(source.id) : undefined;
    const cell: WireCell =
      current?.cell_type === source.cell_type
        ? { ...current, ...source }
        : { ...source, outputs: [], execution_count: null, metadata: current?.metadata ?? {} };
    return { ...rest, cell };
  }

  /** A person's page says which cell they are on (`null`: none); the other peers are told. */
  public setPresence(peer: RoomPeer, cellId: string | null): void {
    if (cellId !== null) this.#document.cell(cellId);
    this.#peers.setPresence(peer.id, cellId, true);
  }

  /**
   * Who is where now: each peer with the cell it is on and the cell its execution runs (or waits)
   * in, and the cells running and queued, in order.
   */
  public activity(): RoomActivity {
    const unfinished = this.#executions.unfinished().filter((record) => record.scratch !== true);
    return {
      peers: this.#peers.presence().map(({ peer, cellId }) => ({
        peer_id: peer.id,
        label: peer.label,
        cell_id: cellId,
        running_cell_id: unfinished.find((record) => record.peerId === peer.id)?.cellId ?? null,
      })),
      executions: {
        running: unfinished.find((record) => record.status === 'running')?.cellId ?? null,
        queued: unfinished.filter((record) => record.status === 'queued').map((record) => record.cellId),
      },
    };
  }

  private async dispatch(peer: RoomPeer, request: WireNotebookRequest): Promise<Record<string, unknown>> {
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
        return { runtime: this.runtime } satisfies WireNotebookAnswer<'get_runtime'>;
      case 'insert_cell':
      case 'update_cell':
      case 'delete_cell':
      case 'move_cell':
      case 'clear_outputs':
        return this.mutate(
          key,
          request.type,
          () =>
            this.#history.apply(request, peer.label, (checked) =>
              applyDocumentEdit(this.#document, checked, peer.label),
            ),
          peer.id,
        );
      case 'undo':
        return this.mutate(key, 'undo', () => this.#history.undo(peer.label, request.count ?? 1));
      case 'get_changes':
        return this.#history.changes(request.since ?? undefined);
      case 'execute_cell':
        return this.mutate(key, 'execute_cell', () => {
          this.#history.checkExpected(request);
          return {
            result: this.#executions.start(request.cell_id, peer, {
              allowInput: request.allow_input === true,
              ...(request.run_after ? { runAfter: request.run_after } : {}),
            }),
          };
        }).then((answer) => this.#executions.current(answer));
      case 'get_execution':
        return this.#executions.get(request.execution_id, request.outputs_page ?? undefined);
      case 'run_code':
        return this.#executions.runScratch(request.source);
      case 'start_code':
        return this.#executions.startScratch(request.source, peer, { allowInput: request.allow_input === true });
      case 'cancel_execution':
        return this.#executions.cancel(request.execution_id);
      case 'input_reply':
        return this.#inputs.answer(request);
      case 'interrupt': {
        const outcome = await this.#kernel.interrupt();
        return { interrupted: outcome === 'interrupted', outcome } satisfies WireNotebookAnswer<'interrupt'>;
      }
      case 'restart_kernel':
        await this.#kernel.restart();
        return { restarted: true, runtime: this.runtime } satisfies WireNotebookAnswer<'restart_kernel'>;
      case 'save':
        return this.#file.save(request.path ?? undefined);
      case 'add_comment':
      case 'reply_comment':
      case 'resolve_comment':
      case 'reopen_comment':
      case 'list_comments':
        return this.#comments.handle(peer, request);
      default:
        // `leave` is the server's (it ends the connection); nothing else reaches here.
        throw new DaemonError('badRequest', `Unknown notebook request type ${JSON.stringify(request.type)}`);
    }
  }

  /**
   * Makes the document durable where it belongs: the file for file-backed rooms, the data dir for
   * persisted untitled ones; nothing for ephemeral ones. Resolves when written.
   */
  public flush(): Promise<void> {
    return Promise.all([this.#file.flush(), this.#comments.flush()]).then(() => undefined);
  }

  /**
   * Shuts the kernel and tells the peers the room is gone. Used by `shutdown_notebook` and daemon
   * shutdown. The journal stays after a daemon shutdown (its ledger still dedupes a request retried
   * after the restart); a shut-down notebook's journal is deleted once the document is saved.
   */
  public async close(reason: string, cause: RoomCloseCause): Promise<void> {
    this.#closed = true;
    this.#kernel.close();
    this.#init.logger.info('room closed', {
      notebookId: this.notebookId,
      path: this.path,
      why: reason,
      peers: this.#peers.size,
    });
    this.#peers.disconnectAll(reason, cause);
    await this.#kernel.stop('the room closed');
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
    const held = this.blobsHeld();
    this.#releaseBlobs?.();
    this.#releaseBlobs = undefined;
    this.#file.dispose(discardJournal);
    this.#comments.dispose();
    // What only this room referenced (a large output of a file it loaded) goes now, not at the next start.
    const settings = this.#init.journalSettings;
    if (settings) RoomJournal.sweepBlobs(settings, held);
  }

  /** The blobs the room's cells and kept executions reference. */
  private blobsHeld(): Set<string> {
    const held = new Set<string>();
    this.#document.blobsHeld(held);
    this.#executions?.blobsHeld(held);
    return held;
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
    apply: () => DocumentEdit,
    exceptPeerId?: string,
  ): Promise<Record<string, unknown>> {
    return this.#ledger.run(key, operation, async () => {
      await this.#file.ownWriteSettled();
      this.#file.assertWritable();
      const { result, changes = [], events = [] } = apply();
      const notice = this.#notice;
      this.#notice = undefined;
      // Every change is journaled; the last one carries the ledger entry (all or none replay).
      let durable = true;
      changes.forEach((change, index) => {
        const last = index === changes.length - 1;
        const ledger = last && key !== undefined ? { key, operation, result } : undefined;
        durable = this.#journal.append(change, ledger) && durable;
      });
      if (changes.length === 0 && key !== undefined)
        durable = this.#journal.append(undefined, { key, operation, result });
      for (const event of events) this.changed(event, exceptPeerId);
      if (!durable && (changes.length > 0 || key !== undefined)) {
        await this.flush().catch((error: unknown) => {
          throw new DaemonError(
            'notDurable',
            `The change was applied but could not be made durable (journal and save both failed: ${(error as Error).message}).`,
          );
        });
      }
      if (this.#journal.overCap) void this.flush().catch(() => undefined);
      return notice === undefined ? result : { ...result, warning: notice };
    });
  }

  /** An edit of the document: every peer (but `exceptPeerId`) is told, and autosave is due. */
  private changed(event: RoomEvent, exceptPeerId?: string): void {
    this.#peers.broadcast(event, exceptPeerId);
    this.#file.markDirty();
  }
}
