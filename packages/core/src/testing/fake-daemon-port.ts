import { randomUUID } from 'node:crypto';
import { dirname } from 'node:path';
import { CoreError } from '../errors/core-error.js';
import { DaemonIncarnation } from '../notebook-target/daemon-incarnation.js';
import type {
  CreateNotebookOptions,
  DaemonEvent,
  DaemonInfo,
  DaemonObservation,
  DaemonPort,
  LivePage,
  PeerOptions,
} from '../ports/daemon-port.js';
import type { KernelInfo } from '../ports/kernel-info.js';
import type { ListedNotebook } from '../ports/listed-notebook.js';
import type { NotebookHandle, NotebookReadiness, Subscription } from '../ports/notebook-handle.js';
import { FakeNotebookHandle, type FakeNotebookHandleOptions } from './fake-notebook-handle.js';
import { NotModelledError } from './not-modelled-error.js';

export interface FakeDaemonPortOptions {
  readonly version?: string;
  readonly pid?: number;
  /** Start with no daemon running (identity queries answer `absent`). */
  readonly stopped?: boolean;
  /** Readiness of handles it opens from now on (default: ready). */
  readonly readiness?: NotebookReadiness;
  readonly executor?: FakeNotebookHandleOptions['executor'];
  /** What `listKernels` answers (default: one available `python3`); `createNotebook` refuses other names. */
  readonly kernels?: readonly KernelInfo[];
  /** The program its rooms' kernels run with (`ListedNotebook.kernelInterpreter`); default none reported. */
  readonly interpreter?: string;
  /** Handles model the other peers (versions, change log): see {@link FakeNotebookHandleOptions.peers}. */
  readonly peers?: boolean;
}

const defaultFakeKernels: readonly KernelInfo[] = [
  { name: 'python3', displayName: 'Python 3 (ipykernel)', language: 'python', location: undefined, available: true },
];

interface FakeRoom {
  readonly notebookId: string;
  path: string | undefined;
  readonly ephemeral: boolean;
  readonly workingDir?: string;
}

const protocolVersion = 1;

/**
 * The local daemon as a fake: incarnations (pid + start time) and versions the test controls,
 * restarts that close every handle and change the incarnation, rooms by path and UUID with
 * attach-only admission (unknown or {@link FakeDaemonPort.markUnavailable}d ids are refused with
 * `notebookUnavailable`), ephemeral rooms that vanish on restart, dropped and lagged events, and
 * failing identity queries, saves that bind a path to a room (refused with code
 * `path_already_open` when another room owns it). Every call is recorded in `calls`, every peer
 * label in `peerLabels`.
 */
export class FakeDaemonPort implements DaemonPort {
  public readonly calls: string[] = [];
  /** The peer label of every open/attach/create call, in order. */
  public readonly peerLabels: string[] = [];
  /** Every handle opened, in order. */
  public readonly handles: FakeNotebookHandle[] = [];
  /**
   * What {@link FakeDaemonPort.page} answers while live (default: no page); for a notebook, its
   * `launchUrl` is given that notebook's path (`notebooks/<id>`) before the fragment.
   */
  public livePage: LivePage | undefined;
  #info: DaemonInfo | undefined;
  #pid: number;
  #starts = 0;
  #queryFailures = 0;
  #connectFailures = 0;
  #droppedEvents = 0;
  #readiness: NotebookReadiness;
  readonly #executor: FakeNotebookHandleOptions['executor'];
  readonly #interpreter: string | undefined;
  readonly #peers: boolean;
  readonly #kernels: readonly KernelInfo[];
  readonly #rooms = new Map<string, FakeRoom>();
  readonly #unavailable = new Set<string>();
  readonly #listeners = new Set<(event: DaemonEvent) => void>();

  public constructor(options: FakeDaemonPortOptions = {}) {
    this.#pid = options.pid ?? 4242;
    this.#readiness = options.readiness ?? { document: 'ready', runtime: 'ready' };
    this.#executor = options.executor;
    this.#kernels = options.kernels ?? defaultFakeKernels;
    this.#interpreter = options.interpreter;
    this.#peers = options.peers === true;
    if (!options.stopped) this.#info = this.nextInfo(options.version ?? '1.0.0');
  }

  /** The live incarnation, or `undefined` while stopped. */
  public get incarnation(): DaemonIncarnation | undefined {
    return this.#info?.incarnation;
  }

  public get version(): string | undefined {
    return this.#info?.version;
  }

  public async queryInfo(): Promise<DaemonObservation> {
    this.calls.push('queryInfo');
    if (this.#queryFailures > 0) {
      this.#queryFailures -= 1;
      throw new CoreError('daemonQueryFailed', 'FakeDaemonPort: identity query failed (injected)');
    }
    return this.#info ? { kind: 'live', info: this.#info } : { kind: 'absent', reason: 'daemon is not running' };
  }

  public subscribe(listener: (event: DaemonEvent) => void): Subscription {
    this.#listeners.add(listener);
    return { dispose: () => this.#listeners.delete(listener) };
  }

  public async listRooms(): Promise<readonly ListedNotebook[]> {
    this.calls.push('listRooms');
    this.requireRunning();
    return [...this.#rooms.values()].map((room) => ({
      notebookId: room.notebookId,
      activePeers: this.handles.filter((handle) => handle.notebookId === room.notebookId && !handle.isClosed).length,
      hasKernel: false,
      kernelStatus: undefined,
      ephemeral: room.ephemeral,
      notebookPath: room.path,
      ...(room.path !== undefined
        ? { workingDir: dirname(room.path) }
        : room.workingDir === undefined
          ? {}
          : { workingDir: room.workingDir }),
      ...(this.#interpreter === undefined ? {} : { kernelInterpreter: this.#interpreter }),
    }));
  }

  public async openNotebook(path: string, options: PeerOptions): Promise<NotebookHandle> {
    this.calls.push(`openNotebook:${path}`);
    this.beforeConnect(options);
    let room = [...this.#rooms.values()].find((candidate) => candidate.path === path);
    if (!room) {
      room = { notebookId: randomUUID(), path, ephemeral: false };
      this.#rooms.set(room.notebookId, room);
    }
    return this.newHandle(room, options.peerLabel);
  }

  public async attachNotebook(notebookId: string, options: PeerOptions): Promise<NotebookHandle> {
    this.calls.push(`attachNotebook:${notebookId}`);
    this.beforeConnect(options);
    const room = this.#rooms.get(notebookId);
    if (!room || this.#unavailable.has(notebookId)) {
      throw new CoreError('notebookUnavailable', `Notebook ${notebookId} is not available in the daemon`);
    }
    return this.newHandle(room, options.peerLabel);
  }

  public async page(notebookId?: string): Promise<LivePage | undefined> {
    this.calls.push(notebookId === undefined ? 'page' : `page:${notebookId}`);
    const page = this.#info ? this.livePage : undefined;
    if (page?.launchUrl === undefined || notebookId === undefined) return page;
    const [base, fragment] = page.launchUrl.split('#');
    return { ...page, launchUrl: `${base}notebooks/${notebookId}${fragment === undefined ? '' : `#${fragment}`}` };
  }

  public async listKernels(): Promise<readonly KernelInfo[]> {
    this.calls.push('listKernels');
    this.requireRunning();
    return this.#kernels;
  }

  public async createNotebook(options: CreateNotebookOptions): Promise<NotebookHandle> {
    this.calls.push(`createNotebook:${options.kernel ?? options.runtime ?? 'python'}`);
    this.beforeConnect(options);
    if (
      options.kernel !== undefined &&
      !this.#kernels.some((kernel) => kernel.available && kernel.name === options.kernel)
    ) {
      throw new CoreError('invalidRequest', `No Jupyter kernel named '${options.kernel}' is installed.`, {
        code: 'bad_request',
      });
    }
    const room: FakeRoom = {
      notebookId: randomUUID(),
      path: undefined,
      ephemeral: options.ephemeral,
      workingDir: options.workingDir,
    };
    this.#rooms.set(room.notebookId, room);
    return this.newHandle(room, options.peerLabel);
  }

  /** A new incarnation (new pid and start time), optionally of a new version. Closes every handle. */
  public restart(options: { readonly version?: string; readonly silent?: boolean } = {}): void {
    const version = options.version ?? this.#info?.version ?? '1.0.0';
    this.stop({ silent: options.silent });
    this.start({ version, silent: options.silent });
  }

  /** The daemon goes away: handles close, ephemeral rooms vanish, a `disconnected` event is sent. */
  public stop(options: { readonly silent?: boolean } = {}): void {
    if (!this.#info) return;
    this.#info = undefined;
    for (const handle of this.handles) handle.simulateClose('disconnected');
    for (const [id, room] of this.#rooms) if (room.ephemeral) this.#rooms.delete(id);
    if (!options.silent) this.emit({ kind: 'disconnected', reason: 'daemon stopped' });
  }

  /** A daemon starts (new incarnation) and a `connected` event is sent. */
  public start(options: { readonly version?: string; readonly silent?: boolean } = {}): void {
    if (this.#info) return;
    this.#info = this.nextInfo(options.version ?? '1.0.0');
    if (!options.silent) this.emit({ kind: 'connected', info: this.#info });
  }

  /** Sends a heartbeat with the current identity. */
  public heartbeat(): void {
    if (this.#info) this.emit({ kind: 'heartbeat', info: this.#info });
  }

  /** Sends a `lagged` event, as if `missed` events had been dropped by a slow consumer. */
  public lag(missed: number): void {
    this.emit({ kind: 'lagged', missed });
  }

  /** The next `count` events are lost without trace. */
  public dropEvents(count: number): void {
    this.#droppedEvents += count;
  }

  /** The next `count` identity queries reject with `daemonQueryFailed`. */
  public failIdentityQueries(count: number): void {
    this.#queryFailures += count;
  }

  /** The next `count` open/attach/create calls reject with `daemonUnavailable` (transient). */
  public failConnects(count: number): void {
    this.#connectFailures += count;
  }

  /** Attach by this id is definitively refused from now on. */
  public markUnavailable(notebookId: string): void {
    this.#unavailable.add(notebookId);
  }

  /** Makes an id attachable, as a persisted notebook from an earlier daemon life would be. */
  public addPersistedNotebook(notebookId: string, path?: string): void {
    this.#rooms.set(notebookId, { notebookId, path, ephemeral: false });
  }

  /** Readiness of handles opened from now on. */
  public setNextReadiness(readiness: NotebookReadiness): void {
    this.#readiness = readiness;
  }

  private emit(event: DaemonEvent): void {
    if (this.#droppedEvents > 0) {
      this.#droppedEvents -= 1;
      return;
    }
    for (const listener of [...this.#listeners]) listener(event);
  }

  private beforeConnect(options: PeerOptions): void {
    if (typeof options?.peerLabel !== 'string') {
      throw new NotModelledError('FakeDaemonPort', 'connections need a peerLabel');
    }
    this.peerLabels.push(options.peerLabel);
    if (this.#connectFailures > 0) {
      this.#connectFailures -= 1;
      throw new CoreError('daemonUnavailable', 'FakeDaemonPort: connection failed (injected)');
    }
    this.requireRunning();
  }

  private requireRunning(): void {
    if (!this.#info) throw new CoreError('daemonUnavailable', 'Daemon is not running');
  }

  private newHandle(room: FakeRoom, peerLabel: string): FakeNotebookHandle {
    const handle = new FakeNotebookHandle({
      notebookId: room.notebookId,
      notebookPath: room.path,
      daemonIncarnation: this.#info?.incarnation,
      readiness: this.#readiness,
      executor: this.#executor,
      peerLabel,
      peers: this.#peers,
      beforeSave: (notebookId, path) => this.bindSavedPath(notebookId, path),
    });
    this.handles.push(handle);
    return handle;
  }

  /** A save binds the path to the room, unless another room owns it (the daemon's `path_already_open`). */
  private bindSavedPath(notebookId: string, path: string): void {
    this.requireRunning();
    const owner = [...this.#rooms.values()].find((room) => room.path === path && room.notebookId !== notebookId);
    if (owner) {
      throw new CoreError(
        'invalidRequest',
        `Cannot save: ${path} is already open in session ${owner.notebookId}. Close that session first, then retry.`,
        { code: 'path_already_open' },
      );
    }
    const room = this.#rooms.get(notebookId);
    if (room) room.path = path;
  }

  private nextInfo(version: string): DaemonInfo {
    this.#starts += 1;
    const pid = this.#starts === 1 ? this.#pid : this.#pid + this.#starts * 17;
    const startedAt = new Date(Date.UTC(2026, 0, 1) + this.#starts * 1000).toISOString();
    return { incarnation: DaemonIncarnation.of(pid, startedAt), version, protocolVersion };
  }
}
