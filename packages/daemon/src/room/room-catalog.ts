import { randomUUID } from 'node:crypto';
import { realpathSync, statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join } from 'node:path';
import type { Clock, Logger, Timer } from '@nteract-mcp/foundation';
import {
  describeWireValue,
  type WireDaemonEvent,
  type WireExecutionState,
  type WireRoomInfo,
  wireNotebookIdPattern,
} from '@nteract-mcp/runtimed-protocol';
import { DaemonError } from '../daemon-error.js';
import { NotebookDocument } from '../document/notebook-document.js';
import { type NotebookFileState, notebookFileState } from '../persistence/notebook-file-state.js';
import type { NotebookRegistry } from '../persistence/notebook-registry.js';
import { type JournalSettings, type LedgerRecord, RoomJournal } from '../persistence/room-journal.js';
import type { UntitledStore } from '../persistence/untitled-store.js';
import { writeFileAtomic } from '../persistence/write-file-atomic.js';
import { chooseCreateKernel } from './choose-create-kernel.js';
import type { KernelClient, KernelLauncher } from './kernel-launcher.js';
import { NotebookRoom, type RoomSettings } from './notebook-room.js';

/** A loaded document with what its journal adds: the room's starting state. */
interface PreparedDocument {
  readonly document: NotebookDocument;
  readonly journal: RoomJournal | undefined;
  readonly ledger: readonly LedgerRecord[];
  /** Executions journaled before the daemon stopped (see `RoomExecutions.restore`). */
  readonly executions?: readonly WireExecutionState[];
  readonly fileState: NotebookFileState | undefined;
  readonly replayed: boolean;
  readonly unmatchedJournal?: string;
}

/** When the ghost-room reaper runs and what it removes. */
export interface ReaperSettings {
  readonly reaperIntervalMs: number;
  /** A peerless, kernel-less room older than this (since its last peer left) is removed. */
  readonly roomTtlMs: number;
  /** Above this many resident rooms, the oldest reapable ones are removed. */
  readonly roomSoftCap: number;
}

export interface RoomCatalogInit {
  readonly settings: RoomSettings & ReaperSettings;
  readonly launcher: KernelLauncher;
  readonly registry: NotebookRegistry;
  readonly untitled: UntitledStore;
  /** Where rooms journal their edits; without it edits are durable only once autosaved. */
  readonly journal?: JournalSettings;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly emit: (event: WireDaemonEvent) => void;
}

/** A room handed to an admitted connection, held against reaping until `release` (after the peer joined). */
export interface Admission {
  readonly room: NotebookRoom;
  readonly release: () => void;
}

/**
 * Every resident room, by notebook UUID and by file path, and the rules for letting a connection
 * in: open by path (one room per file), attach by UUID (attach-only: a resident room, a registry
 * binding whose file exists, or a persisted untitled document; anything else is refused with
 * `notebookUnavailable` and nothing is created), create. Also the ghost-room reaper.
 */
export class RoomCatalog {
  readonly #rooms = new Map<string, NotebookRoom>();
  readonly #byPath = new Map<string, string>();
  readonly #loading = new Map<string, Promise<NotebookRoom>>();
  #reaperTimer: Timer | undefined;
  #sweeping: Promise<readonly string[]> | undefined;

  public constructor(private readonly init: RoomCatalogInit) {}

  public list(): WireRoomInfo[] {
    return [...this.#rooms.values()].map((room) => room.info());
  }

  public get(notebookId: string): NotebookRoom | undefined {
    return this.#rooms.get(notebookId);
  }

  /** Where the rooms' large output values are kept (see `OutputBlobStore`), when they are. */
  public get blobDir(): string | undefined {
    return this.init.journal?.blobs?.dir;
  }

  public get size(): number {
    return this.#rooms.size;
  }

  /**
   * The room for a notebook file; a missing file is created as an empty notebook. `client` is the
   * opening client's context (see {@link NotebookRoom.adoptClient}), here and in attach/create.
   */
  public async open(rawPath: string, offered?: KernelClient): Promise<Admission> {
    const client = usableClient(offered);
    const path = canonicalNotebookPath(rawPath);
    const room = await this.once(`path:${path}`, async () => {
      const residentId = this.#byPath.get(path);
      const resident = residentId === undefined ? undefined : this.#rooms.get(residentId);
      if (resident) {
        await resident.reopenFromDisk();
        return resident;
      }
      const text = await loadOrCreate(path);
      const boundId = this.init.registry.idOf(path);
      const notebookId = boundId !== undefined && !this.#rooms.has(boundId) ? boundId : randomUUID();
      const created = this.add(
        notebookId,
        this.prepare(notebookId, path, text),
        path,
        false,
        dirname(path),
        'path',
        client,
      );
      if (boundId !== notebookId) await this.init.registry.bind(notebookId, path);
      return created;
    });
    return this.admit(room, client);
  }

  /** Attach-only: never creates a room for an id the daemon cannot vouch for. */
  public async attach(notebookId: string, offered?: KernelClient): Promise<Admission> {
    // Every id the daemon hands out is a UUID; any other text never becomes part of a file path.
    if (!wireNotebookIdPattern.test(notebookId)) {
      throw new DaemonError('badRequest', `A notebook id is a UUID, got ${describeWireValue(notebookId)}`);
    }
    const client = usableClient(offered);
    const room = await this.once(`id:${notebookId}`, async () => {
      const resident = this.#rooms.get(notebookId);
      if (resident) return resident;
      const boundPath = this.init.registry.pathOf(notebookId);
      if (boundPath !== undefined && isFile(boundPath) && !this.#byPath.has(boundPath)) {
        const text = await readFile(boundPath, 'utf8');
        const prepared = this.prepare(notebookId, boundPath, text);
        return this.add(notebookId, prepared, boundPath, false, dirname(boundPath), 'id', client);
      }
      const untitledPath = this.init.untitled.pathOf(notebookId);
      const untitled = await readFile(untitledPath, 'utf8').catch((error: NodeJS.ErrnoException) => {
        if (error.code === 'ENOENT') return undefined;
        throw error;
      });
      if (untitled !== undefined) {
        const prepared = this.prepare(notebookId, untitledPath, untitled);
        // The client's cwd when it gave one; else a default that the first client's cwd replaces.
        const workingDir = client?.cwd ?? process.env.HOME ?? '/';
        return this.add(
          notebookId,
          prepared,
          undefined,
          false,
          workingDir,
          'untitled',
          client,
          client?.cwd === undefined,
        );
      }
      throw new DaemonError(
        'notebookUnavailable',
        `Notebook ${notebookId} is not available: no open room, no saved file bound to it, and no persisted untitled notebook.`,
      );
    });
    return this.admit(room, client);
  }

  /** A new untitled notebook. Non-ephemeral ones are persisted in the data dir at once. */
  public async create(options: {
    /** The language of the kernel (`python`, `r`, ...), when `kernel` is not given; see {@link chooseCreateKernel}. */
    readonly runtime?: string;
    /** The kernelspec name (`python3`, `ir`, ...). */
    readonly kernel?: string;
    readonly workingDir: string;
    readonly ephemeral: boolean;
    readonly client?: KernelClient;
  }): Promise<Admission> {
    if (!isAbsolute(options.workingDir) || !isDirectory(options.workingDir)) {
      throw new DaemonError(
        'badRequest',
        `Working directory '${options.workingDir}' is not an existing absolute directory.`,
      );
    }
    const kernel = await chooseCreateKernel(options, this.init.launcher);
    const document = NotebookDocument.forKernel(kernel);
    const notebookId = randomUUID();
    let prepared: PreparedDocument = {
      document,
      journal: undefined,
      ledger: [],
      fileState: undefined,
      replayed: false,
    };
    if (!options.ephemeral) {
      await this.init.untitled.write(notebookId, document);
      prepared = this.prepare(notebookId, this.init.untitled.pathOf(notebookId), document.toIpynb());
    }
    const client = usableClient(options.client);
    return this.admit(
      this.add(notebookId, prepared, undefined, options.ephemeral, options.workingDir, 'created', client),
    );
  }

  /**
   * Replays, at daemon start, every journal that holds edits its file lacks (a crash came before
   * the autosave): each such notebook is loaded (which replays it) and saved, so the file has every
   * acknowledged edit even if nobody opens it again. A journal that does not fit its file is set aside.
   */
  public async recoverJournals(): Promise<void> {
    const settings = this.init.journal;
    if (!settings) return;
    for (const notebookId of RoomJournal.list(settings.dir)) {
      if (this.#rooms.has(notebookId)) continue;
      const contents = RoomJournal.read(settings.dir, notebookId, settings.blobs);
      if (typeof contents !== 'object' || !RoomJournal.hasEdits(contents)) continue;
      try {
        const admission = await this.attach(notebookId);
        admission.release();
        await admission.room.flush();
        this.init.logger.info('replayed a journal at start-up', { notebookId, path: admission.room.path });
      } catch (error) {
        this.init.logger.warn('could not replay a journal at start-up; it is kept', { notebookId, error });
      }
    }
  }

  /** Closes a room (its peers are told, its kernel stopped, its document saved). */
  public async shutdownRoom(notebookId: string): Promise<boolean> {
    const room = this.#rooms.get(notebookId);
    if (!room) return false;
    this.remove(room);
    await room.close('the notebook was shut down', 'notebook_shutdown');
    return true;
  }

  /** Runs {@link RoomCatalog.sweep} every `reaperIntervalMs`. */
  public startReaper(): void {
    this.#reaperTimer?.cancel();
    this.#reaperTimer = this.init.clock.setTimer(this.init.settings.reaperIntervalMs, () => {
      void this.sweep()
        .catch((error: unknown) => this.init.logger.error('ghost-room sweep failed', { error }))
        .finally(() => this.startReaper());
    });
  }

  /**
   * Removes ghost rooms: reapable (no peers, no kernel, no reservation) and either idle longer than
   * the TTL or the oldest beyond the soft cap. Each is first made durable, then checked again, and
   * kept if anything changed meanwhile. Returns the removed ids.
   */
  public sweep(): Promise<readonly string[]> {
    this.#sweeping ??= this.sweepOnce().finally(() => {
      this.#sweeping = undefined;
    });
    return this.#sweeping;
  }

  /** Saves and closes every room (daemon shutdown). */
  public async closeAll(reason: string): Promise<void> {
    this.#reaperTimer?.cancel();
    const rooms = [...this.#rooms.values()];
    for (const room of rooms) this.remove(room);
    await Promise.all(rooms.map((room) => room.close(reason, 'daemon_shutdown')));
  }

  private async sweepOnce(): Promise<readonly string[]> {
    const now = this.init.clock.now();
    const { roomTtlMs, roomSoftCap } = this.init.settings;
    const candidates = [...this.#rooms.values()]
      .filter((room) => room.isReapable())
      .sort((a, b) => (a.peerlessSince ?? now) - (b.peerlessSince ?? now));
    const excess = Math.max(0, this.#rooms.size - roomSoftCap);
    const chosen = candidates.filter((room, index) => index < excess || now - (room.peerlessSince ?? now) >= roomTtlMs);
    const removed: string[] = [];
    for (const room of chosen) {
      const hold = room.reserve();
      try {
        await room.flush();
      } catch (error) {
        this.init.logger.warn('kept a ghost room whose document could not be saved', {
          notebookId: room.notebookId,
          error,
        });
        continue;
      } finally {
        hold();
      }
      if (!room.isReapable() || this.#rooms.get(room.notebookId) !== room) continue;
      this.remove(room);
      room.dispose(true);
      removed.push(room.notebookId);
      this.init.logger.info('reaped ghost room', {
        notebookId: room.notebookId,
        path: room.path,
        idleMs: now - (room.peerlessSince ?? now),
        rooms: this.#rooms.size,
      });
    }
    return removed;
  }

  private admit(room: NotebookRoom, client?: KernelClient): Admission {
    room.adoptClient(client);
    return { room, release: room.reserve() };
  }

  private async once(key: string, load: () => Promise<NotebookRoom>): Promise<NotebookRoom> {
    const inFlight = this.#loading.get(key);
    if (inFlight) return inFlight;
    const loading = load().finally(() => this.#loading.delete(key));
    this.#loading.set(key, loading);
    return loading;
  }

  /**
   * The document in `text` (read from `basePath`: the notebook file, or the untitled store file)
   * with the edits of the room's journal that it lacks. A journal whose base is not this file (it
   * was changed by someone else since) or whose edits do not fit is set aside, never applied.
   */
  private prepare(notebookId: string, basePath: string, text: string): PreparedDocument {
    const document = NotebookDocument.fromIpynb(text, basePath);
    const fileState = notebookFileState(basePath, text);
    const settings = this.init.journal;
    if (!settings) return { document, journal: undefined, ledger: [], fileState, replayed: false };
    const logger = this.init.logger;
    let unmatchedJournal: string | undefined;
    const setAside = (why: string): void => {
      unmatchedJournal = RoomJournal.setAside(settings.dir, notebookId, this.init.clock.now());
      logger.warn(`set a journal aside: ${why}`, { notebookId, path: basePath, kept: unmatchedJournal });
    };
    try {
      return this.replay(settings, notebookId, basePath, text, document, fileState, setAside, () => unmatchedJournal);
    } catch (error) {
      // Edits are then made durable by saving each at once (see NotebookRoom).
      logger.error('cannot use the journal directory; edits are saved at once instead', { notebookId, error });
      return { document, journal: undefined, ledger: [], fileState, replayed: false, unmatchedJournal };
    }
  }

  private replay(
    settings: JournalSettings,
    notebookId: string,
    basePath: string,
    text: string,
    document: NotebookDocument,
    fileState: NotebookFileState,
    setAside: (why: string) => void,
    unmatched: () => string | undefined,
  ): PreparedDocument {
    const logger = this.init.logger;
    const base = { path: basePath, size: fileState.size, mtime_ms: fileState.mtimeMs, sha256: fileState.sha256 };
    const contents = RoomJournal.read(settings.dir, notebookId, settings.blobs);
    if (contents === 'corrupt') setAside('its header is unreadable');
    else if (contents !== undefined) {
      const plan = RoomJournal.planReplay(contents, basePath, fileState.sha256);
      if (plan) {
        const replayed = NotebookDocument.fromIpynb(text, basePath);
        try {
          for (const change of plan.changes) replayed.apply(change);
          const journal = RoomJournal.resume(settings, contents);
          if (plan.changes.length > 0)
            logger.info('replayed journaled edits', { notebookId, path: basePath, edits: plan.changes.length });
          return {
            document: replayed,
            journal,
            ledger: plan.ledger,
            executions: plan.executions,
            fileState,
            replayed: plan.changes.length > 0,
          };
        } catch (error) {
          setAside(`its edits do not fit the file (${(error as Error).message})`);
        }
      } else if (RoomJournal.hasEdits(contents)) setAside('the file was changed by another program since');
    }
    const journal = RoomJournal.begin(settings, notebookId, base, []);
    return { document, journal, ledger: [], fileState, replayed: false, unmatchedJournal: unmatched() };
  }

  private add(
    notebookId: string,
    prepared: PreparedDocument,
    path: string | undefined,
    ephemeral: boolean,
    workingDir: string,
    /** How it came to be opened, for the log: by its file path, by its UUID, a persisted untitled notebook, or created. */
    via: 'path' | 'id' | 'untitled' | 'created',
    client?: KernelClient,
    workingDirIsDefault = false,
  ): NotebookRoom {
    const room: NotebookRoom = new NotebookRoom({
      notebookId,
      document: prepared.document,
      path,
      ephemeral,
      workingDir,
      workingDirIsDefault,
      ...(client === undefined ? {} : { client }),
      settings: this.init.settings,
      launcher: this.init.launcher,
      untitled: this.init.untitled,
      journalSettings: this.init.journal,
      journal: prepared.journal,
      ledger: prepared.ledger,
      executions: prepared.executions ?? [],
      fileState: path === undefined ? undefined : prepared.fileState,
      replayed: prepared.replayed,
      unmatchedJournal: prepared.unmatchedJournal,
      clock: this.init.clock,
      logger: this.init.logger.child(`room:${notebookId.slice(0, 8)}`),
      notify: (notice) => {
        if (notice.kind === 'runtime')
          this.init.emit({ event: 'kernel_status', notebook_id: notebookId, runtime: notice.runtime });
        else
          this.init.emit({
            event: notice.kind,
            notebook_id: notebookId,
            peer_label: notice.peer.label,
            active_peers: notice.activePeers,
            ...(notice.kind === 'peer_left' ? { departure: notice.departure } : {}),
          });
      },
      bindPath: (bound, newPath, write) => this.bindPath(bound, newPath, write),
    });
    this.#rooms.set(notebookId, room);
    if (path !== undefined) this.#byPath.set(path, notebookId);
    this.init.emit({ event: 'room_opened', notebook_id: notebookId });
    this.init.logger.info('room opened', {
      notebookId,
      via,
      ...(path === undefined ? { ephemeral } : { path }),
      kernelspec: room.kernelName,
      rooms: this.#rooms.size,
    });
    return room;
  }

  private remove(room: NotebookRoom): void {
    if (this.#rooms.get(room.notebookId) !== room) return;
    this.#rooms.delete(room.notebookId);
    if (room.path !== undefined && this.#byPath.get(room.path) === room.notebookId) this.#byPath.delete(room.path);
    this.init.emit({ event: 'room_closed', notebook_id: room.notebookId });
  }

  private async bindPath(room: NotebookRoom, rawPath: string, write: () => Promise<void>): Promise<void> {
    const path = canonicalNotebookPath(rawPath);
    const owner = this.#byPath.get(path);
    if (owner !== undefined && owner !== room.notebookId) {
      throw new DaemonError(
        'pathAlreadyOpen',
        `Cannot save: ${path} is already open in session ${owner}. Close that session first, then retry.`,
      );
    }
    await write();
    if (room.path !== undefined && this.#byPath.get(room.path) === room.notebookId) this.#byPath.delete(room.path);
    this.#byPath.set(path, room.notebookId);
    await this.init.registry.bind(room.notebookId, path);
  }
}

/** Absolute, `.ipynb`, symlinks resolved (of the file when present, else of its directory). */
export function canonicalNotebookPath(path: string): string {
  if (!isAbsolute(path)) throw new DaemonError('badRequest', `Notebook paths must be absolute, got '${path}'`);
  if (!path.endsWith('.ipynb')) throw new DaemonError('badRequest', `Notebook paths must end in .ipynb, got '${path}'`);
  try {
    return realpathSync.native(path);
  } catch {
    try {
      return join(realpathSync.native(dirname(path)), basename(path));
    } catch {
      throw new DaemonError('badRequest', `The directory of '${path}' does not exist`);
    }
  }
}

/** The file's text; a missing file is created as an empty notebook first. */
async function loadOrCreate(path: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') {
      throw new DaemonError('notebookLoadFailed', `Cannot read ${path}: ${(error as Error).message}`);
    }
    const text = NotebookDocument.empty('python').toIpynb();
    await writeFileAtomic(path, text);
    return text;
  }
}

/** `client` without a `cwd` that is not an existing directory (a kernel could not start there). */
function usableClient(client: KernelClient | undefined): KernelClient | undefined {
  if (client?.cwd === undefined || isDirectory(client.cwd)) return client;
  const { cwd: _cwd, ...rest } = client;
  return rest;
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}
