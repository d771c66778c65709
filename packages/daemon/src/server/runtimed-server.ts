import { readFileSync } from 'node:fs';
import { chmod, readFile, rm } from 'node:fs/promises';
import { createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import type { Clock, Logger } from '@nteract-mcp/foundation';
import {
  checkClientRequest,
  defaultMaxFrameBytes,
  defaultMaxMessageBytes,
  runtimedProtocolVersion,
  type WireControlAnswer,
  type WireControlRequestType,
  type WireDaemonEvent,
  type WireDaemonInfo,
} from '@nteract-mcp/runtimed-protocol';
import { KernelRecords } from '../kernel/kernel-records.js';
import { PageServer } from '../page/page-server.js';
import { NotebookRegistry } from '../persistence/notebook-registry.js';
import { defaultBlobThresholdChars, OutputBlobStore } from '../persistence/output-blob-store.js';
import { type JournalSettings, RoomJournal } from '../persistence/room-journal.js';
import { UntitledStore } from '../persistence/untitled-store.js';
import { writeFileAtomic } from '../persistence/write-file-atomic.js';
import type { DaemonLayout } from '../resolve-daemon-layout.js';
import type { KernelLauncher } from '../room/kernel-launcher.js';
import { type ReaperSettings, RoomCatalog } from '../room/room-catalog.js';
import type { RoomSettings } from '../room/room-settings.js';
import { admitNotebook, kernelClientOf } from './admit-notebook.js';
import { DaemonConnection, type DaemonConnectionHost } from './daemon-connection.js';
import { parseDaemonLockRecord } from './daemon-lock-record.js';
import { acquireDaemonSingleton, type DaemonSingleton } from './daemon-singleton.js';
import { errorFrame } from './error-frame.js';
import { type SocketPathWatch, watchSocketPath } from './watch-socket-path.js';

export interface RuntimedServerOptions {
  readonly layout: DaemonLayout;
  readonly version: string;
  readonly settings: RoomSettings & ReaperSettings;
  /**
   * Journal tuning; the journal lives in `<dataDir>/journal`, the blobs its lines reference in
   * `<dataDir>/blobs`. Defaults: no fdatasync, 64 MiB cap, strings over 1 MiB characters as blobs.
   */
  readonly journal?: { readonly fsync?: boolean; readonly maxBytes?: number; readonly blobThresholdChars?: number };
  readonly launcher: KernelLauncher;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Largest frame accepted (default 1 MiB, the chunk size); a bigger one closes the connection. */
  readonly maxFrameBytes?: number;
  /** Largest message sent or accepted after the handshake (default 256 MiB). */
  readonly maxMessageBytes?: number;
  readonly handshakeTimeoutMs?: number;
  /**
   * How often the daemon checks that its socket path is still the socket it bound (default 1000
   * ms; 0: never). When it was removed or replaced, no client can reach this daemon any more: it
   * stops in order (saving every room) and exits, so a new daemon can take its place.
   */
  readonly socketCheckMs?: number;
  /**
   * A stall of the daemon's process this long (stopped by SIGSTOP, or its event loop blocked):
   * the requests read right after it waited meanwhile, and their senders have given up on them
   * ("outcome unknown") and may have moved to a successor, so they are refused, nothing applied
   * (default 20 000 ms, beyond a client's heartbeat).
   */
  readonly stallRefusalMs?: number;
  /**
   * The web page (see `PageServer`) on 127.0.0.1: its port (default 0, a free one), or `false` for
   * none. Its address and token go to `page.json` (0600) beside the socket; `get_page` answers its
   * address and a one-time launch address (never the token).
   */
  readonly page?: false | { readonly port?: number };
}

const defaultSocketCheckMs = 1000;
/** How often, at most, a request makes the daemon check that its socket and lock are still its own. */
const ownershipCheckMs = 200;
/** How often the stall ticker runs (see {@link RuntimedServerOptions.stallRefusalMs}). */
const stallTickMs = 1000;
const defaultStallRefusalMs = 20_000;
/** After a stall ends, how long requests read are still taken as having waited through it. */
const stallAftermathMs = 1000;

/**
 * The daemon's socket server: holds the singleton locks, the room catalog and the connections
 * (each a {@link DaemonConnection}, from its preamble to its end), and answers control requests.
 */
export class RuntimedServer {
  public readonly info: WireDaemonInfo;
  readonly #options: RuntimedServerOptions;
  readonly #catalog: RoomCatalog;
  readonly #singleton: DaemonSingleton;
  readonly #server: Server;
  readonly #connections = new Set<DaemonConnection>();
  readonly #subscribers = new Set<DaemonConnection>();
  readonly #connectionHost: DaemonConnectionHost;
  #stopping: Promise<void> | undefined;
  #socketWatch: SocketPathWatch | undefined;
  /** When {@link refusal} last checked that the socket and lock are still ours (performance.now()). */
  #ownershipCheckedAt = Number.NEGATIVE_INFINITY;
  /** When the stall ticker last ran (performance.now()): a late tick is a stall of the process. */
  #lastTick = performance.now();
  /** The last stall the ticker saw: when it ended and how long it was. */
  #stall = { endedAt: Number.NEGATIVE_INFINITY, ms: 0 };
  readonly #ticker = setInterval(() => {
    const now = performance.now();
    const gap = now - this.#lastTick - stallTickMs;
    if (gap >= (this.#options.stallRefusalMs ?? defaultStallRefusalMs)) this.#stall = { endedAt: now, ms: gap };
    this.#lastTick = now;
  }, stallTickMs).unref();
  #page: PageServer | undefined;
  #stopped = false;
  #markStarted: () => void = () => undefined;
  readonly #started = new Promise<void>((resolve) => {
    this.#markStarted = resolve;
  });
  readonly #stoppedListeners = new Set<() => void>();

  private constructor(options: RuntimedServerOptions, catalog: RoomCatalog, singleton: DaemonSingleton) {
    this.#options = options;
    this.#catalog = catalog;
    this.#singleton = singleton;
    this.info = {
      pid: process.pid,
      started_at: new Date(options.clock.now()).toISOString(),
      version: options.version,
      protocol_version: runtimedProtocolVersion,
    };
    this.#connectionHost = {
      info: this.info,
      logger: options.logger,
      maxFrameBytes: options.maxFrameBytes ?? defaultMaxFrameBytes,
      maxMessageBytes: options.maxMessageBytes ?? defaultMaxMessageBytes,
      handshakeTimeoutMs: options.handshakeTimeoutMs ?? 10_000,
      ...(catalog.blobDir === undefined ? {} : { blobDir: catalog.blobDir }),
      admitNotebook: (frame) => admitNotebook(this.#catalog, frame),
      control: (connection, request) => this.control(connection, request),
      refusal: () => this.refusal(),
      closed: (connection) => {
        this.#connections.delete(connection);
        this.#subscribers.delete(connection);
      },
    };
    // Half-open: a client that ends its side right after its requests still gets their answers.
    this.#server = createServer({ allowHalfOpen: true }, (socket) => this.accept(socket));
  }

  /**
   * Takes the locks, stops the kernels a dead predecessor left behind, loads the registry, listens
   * (socket 0600), writes `daemon.json`, starts the reaper and the socket-path watch.
   */
  public static async start(options: RuntimedServerOptions): Promise<RuntimedServer> {
    const { layout, logger } = options;
    const singleton = await acquireDaemonSingleton(layout, logger);
    let started: RuntimedServer | undefined;
    try {
      await new KernelRecords(layout.kernelsDir, logger.child('kernels'), layout.connectionsDir).reapOrphans();
      const registry = await NotebookRegistry.load(layout.registryPath, logger.child('registry'));
      let server: RuntimedServer | undefined;
      const fsync = options.journal?.fsync ?? false;
      const journal: JournalSettings = {
        dir: join(layout.dataDir, 'journal'),
        fsync,
        maxBytes: options.journal?.maxBytes ?? 64 * 1024 * 1024,
        // Large outputs go to content-addressed blobs that the journal's lines reference.
        blobs: new OutputBlobStore({
          dir: join(layout.dataDir, 'blobs'),
          thresholdChars: options.journal?.blobThresholdChars ?? defaultBlobThresholdChars,
          fsync,
        }),
      };
      // What a crash left: blobs written for a journal line never written, or whose journal was
      // rotated or removed before their removal.
      RoomJournal.sweepBlobs(journal);
      const catalog = new RoomCatalog({
        settings: options.settings,
        launcher: options.launcher,
        registry,
        untitled: new UntitledStore(layout.untitledDir),
        journal,
        clock: options.clock,
        logger: logger.child('rooms'),
        emit: (event) => server?.publish(event),
      });
      server = new RuntimedServer(options, catalog, singleton);
      // Before anyone can connect: edits acknowledged before a crash go into their files now.
      await catalog.recoverJournals();
      started = server;
      // daemon.json first: whoever reaches the socket finds it written (it names this process).
      await writeFileAtomic(
        layout.infoPath,
        `${JSON.stringify({ ...server.info, socket: layout.socketPath }, null, 2)}\n`,
        0o600,
      );
      await server.listen();
      await server.servePage();
      await singleton.markServing();
      catalog.startReaper();
      logger.info('runtimed listening', { socket: layout.socketPath, pid: process.pid, version: options.version });
      server.#markStarted();
      return server;
    } catch (error) {
      if (started !== undefined) {
        started.#socketWatch?.dispose();
        started.#server.close();
        await started.#page?.stop();
        await started.removeInfoIfOurs().catch(() => undefined);
      }
      await singleton.release();
      throw error;
    }
  }

  public get catalog(): RoomCatalog {
    return this.#catalog;
  }

  /**
   * Why this daemon must not act now, or `undefined`. It stops; or it was superseded: its socket
   * path or its lock file is another daemon's now (a daemon stopped by SIGSTOP and taken over,
   * then resumed, must apply nothing it reads; it stops at once). Checked at most every
   * {@link ownershipCheckMs} (a stat and a small read), and at the first request after that.
   */
  private refusal(): string | undefined {
    if (this.#stopping) return 'it is stopping';
    const now = performance.now();
    // Right after a stall, the requests that waited in the socket are read either before the late
    // tick (the stall is still being measured) or just after it (the stall just ended).
    const ongoing = now - this.#lastTick - stallTickMs;
    const threshold = this.#options.stallRefusalMs ?? defaultStallRefusalMs;
    const stallMs = ongoing >= threshold ? ongoing : now - this.#stall.endedAt < stallAftermathMs ? this.#stall.ms : 0;
    if (stallMs > 0) {
      return `its process was stopped or stalled for ${Math.round(stallMs / 1000)} s, and the request waited in its socket meanwhile; send it again`;
    }
    if (now - this.#ownershipCheckedAt < ownershipCheckMs) return undefined;
    this.#ownershipCheckedAt = now;
    const lost = this.superseded();
    if (lost === undefined) return undefined;
    this.#options.logger.warn('another daemon took over; this one stops without acting', { why: lost });
    void this.stop(lost);
    return lost;
  }

  /** Whether another daemon holds our socket path or our lock now (synchronous: asked before a request). */
  private superseded(): string | undefined {
    const { layout } = this.#options;
    if (this.#socketWatch !== undefined && !this.#socketWatch.isOursNow()) {
      return `its socket ${layout.socketPath} is another daemon's now`;
    }
    let nonce: string | undefined;
    try {
      nonce = parseDaemonLockRecord(readFileSync(layout.lockPath, 'utf8'))?.nonce;
    } catch {
      return `its lock ${layout.lockPath} is gone`;
    }
    if (nonce !== this.#singleton.record.nonce) return `its lock ${layout.lockPath} is another daemon's now`;
    return undefined;
  }

  /** Calls `listener` once the daemon has stopped (at once if it already has). */
  public onStopped(listener: () => void): void {
    if (this.#stopped) listener();
    else this.#stoppedListeners.add(listener);
  }

  /** Stops accepting, tells subscribers, closes rooms (saving them), removes socket, info and locks. Idempotent. */
  public stop(reason: string): Promise<void> {
    this.#stopping ??= this.stopOnce(reason);
    return this.#stopping;
  }

  private async stopOnce(reason: string): Promise<void> {
    const { layout, logger } = this.#options;
    logger.info('runtimed stopping', { reason });
    const watch = this.#socketWatch;
    watch?.dispose();
    // Closing a unix-socket server unlinks its path, whatever file is there now: when the path is
    // no longer our socket (removed, or taken by another file), stop listening without closing.
    const socketIsOurs = watch === undefined || (await watch.isOurs());
    this.publish({ event: 'daemon_shutting_down' });
    if (socketIsOurs) this.#server.close();
    else this.#server.unref();
    await this.#page?.stop();
    await this.#catalog.closeAll('the daemon is shutting down');
    for (const connection of this.#connections) connection.end();
    await new Promise((resolve) => setTimeout(resolve, 20));
    for (const connection of this.#connections) connection.destroy();
    // Remove only what is still ours: a replaced socket or daemon.json may belong to a successor.
    await Promise.all([socketIsOurs ? rm(layout.socketPath, { force: true }) : undefined, this.removeInfoIfOurs()]);
    await this.#singleton.release();
    clearInterval(this.#ticker);
    this.#stopped = true;
    for (const listener of this.#stoppedListeners) listener();
  }

  private async removeInfoIfOurs(): Promise<void> {
    const { infoPath } = this.#options.layout;
    const text = await readFile(infoPath, 'utf8').catch(() => undefined);
    if (text === undefined) return;
    try {
      const info = JSON.parse(text) as Partial<WireDaemonInfo>;
      if (info.pid !== this.info.pid || info.started_at !== this.info.started_at) return;
    } catch {
      // Unreadable: nobody's, remove it.
    }
    await rm(infoPath, { force: true });
  }

  private async listen(): Promise<void> {
    const { socketPath } = this.#options.layout;
    const previous = process.umask(0o177);
    try {
      await new Promise<void>((resolve, reject) => {
        this.#server.once('error', reject);
        this.#server.listen(socketPath, () => {
          this.#server.off('error', reject);
          resolve();
        });
      });
    } finally {
      process.umask(previous);
    }
    // At once: a client may already talk to us, and remove or replace the file, before start ends.
    const { logger, socketCheckMs } = this.#options;
    this.#socketWatch = await watchSocketPath(socketPath, socketCheckMs ?? defaultSocketCheckMs, (why) => {
      logger.warn('clients can no longer reach this daemon; stopping', { why });
      void this.#started.then(() => this.stop(why));
    });
    await chmod(socketPath, 0o600);
  }

  private publish(event: WireDaemonEvent): void {
    for (const connection of this.#subscribers) connection.send({ type: 'event', ...event });
  }

  private accept(socket: Socket): void {
    if (this.#stopping) {
      socket.destroy();
      return;
    }
    this.#connections.add(new DaemonConnection(socket, this.#connectionHost));
  }

  /**
   * Starts the web page (unless turned off) and writes where it is, with its token, to `page.json`
   * (0600; kept when the daemon stops). A restarted daemon takes the address and token of its
   * predecessor when it can (no port asked for, the old one free), so an open page reconnects by
   * itself and its session still works.
   */
  private async servePage(): Promise<void> {
    const { page, layout } = this.#options;
    if (page === false) return;
    const previous = await readPreviousPage(layout.pagePath);
    const logger = this.#options.logger.child('page');
    const catalog = this.#catalog;
    const refusal = () => this.refusal();
    const wanted = page?.port ?? 0;
    const token = previous?.token;
    this.#page =
      wanted === 0 && previous !== undefined
        ? await PageServer.start({ catalog, logger, refusal, port: previous.port, token }).catch(() =>
            PageServer.start({ catalog, logger, refusal, token }),
          )
        : await PageServer.start({ catalog, logger, refusal, port: wanted, ...(token === undefined ? {} : { token }) });
    await this.writePageRecord(this.#page);
    this.#options.logger.info('web page served', { url: this.#page.baseUrl });
  }

  /** `page.json` (0600): where the page is and the token its sessions are signed with, for the next daemon. */
  private async writePageRecord(page: PageServer): Promise<void> {
    await writeFileAtomic(
      this.#options.layout.pagePath,
      `${JSON.stringify({ url: page.baseUrl, token: page.token, pid: process.pid }, null, 2)}\n`,
      0o600,
    );
  }

  private control(connection: DaemonConnection, request: Record<string, unknown>): void {
    const accepted = connection.acceptRequest(checkClientRequest('control', request), 'control');
    if (accepted === undefined) return;
    const { id, request: checked } = accepted;
    // Typed by the answer schemas: what the daemon sends is what clients read.
    const answer = <T extends WireControlRequestType>(_type: T, fields: WireControlAnswer<T>): void =>
      connection.send({ ...fields, type: 'ok', id });
    switch (checked.type) {
      case 'ping':
        answer('ping', { pong: true, version: this.info.version, protocol_version: this.info.protocol_version });
        return;
      case 'get_daemon_info':
        answer('get_daemon_info', { ...this.info });
        return;
      case 'list_rooms':
        answer('list_rooms', { rooms: this.#catalog.list() });
        return;
      case 'list_kernels': {
        const launcher = this.#options.launcher;
        const listing = launcher.listKernels
          ? launcher.listKernels(kernelClientOf(checked.client))
          : Promise.resolve([]);
        void listing.then(
          (kernels) => answer('list_kernels', { kernels: [...kernels] }),
          (error: unknown) => connection.send(errorFrame(error, id)),
        );
        return;
      }
      case 'subscribe':
        this.#subscribers.add(connection);
        answer('subscribe', { subscribed: true });
        return;
      case 'shutdown_notebook': {
        void this.#catalog.shutdownRoom(checked.notebook_id).then(
          (found) => answer('shutdown_notebook', { found }),
          (error: unknown) => connection.send(errorFrame(error, id)),
        );
        return;
      }
      case 'shutdown_daemon':
        answer('shutdown_daemon', { stopping: true });
        void this.stop('requested by a client');
        return;
      case 'get_page': {
        const page = this.#page;
        answer(
          'get_page',
          page
            ? { url: page.baseUrl, launch_url: page.launchUrl(checked.notebook_id) }
            : { url: null, launch_url: null },
        );
        return;
      }
      case 'rotate_page_token': {
        const page = this.#page;
        if (!page) {
          answer('rotate_page_token', { rotated: false });
          return;
        }
        page.rotate();
        void this.writePageRecord(page).then(
          () => {
            this.#options.logger.info('page token rotated: every page session so far is refused');
            answer('rotate_page_token', { rotated: true });
          },
          (error: unknown) => connection.send(errorFrame(error, id)),
        );
        return;
      }
    }
  }
}

/** The address and token a previous daemon served its page at (`page.json`), when readable. */
async function readPreviousPage(path: string): Promise<{ readonly port: number; readonly token: string } | undefined> {
  try {
    const record = JSON.parse(await readFile(path, 'utf8')) as { url?: unknown; token?: unknown };
    if (typeof record.url !== 'string' || typeof record.token !== 'string' || !/^[0-9a-f]{64}$/.test(record.token)) {
      return undefined;
    }
    const port = Number(new URL(record.url).port);
    return Number.isInteger(port) && port > 0 ? { port, token: record.token } : undefined;
  } catch {
    return undefined;
  }
}
