import { randomUUID } from 'node:crypto';
import { chmod, readFile, rm } from 'node:fs/promises';
import { createServer, type Server, type Socket } from 'node:net';
import { isAbsolute, join } from 'node:path';
import type { Clock, Logger } from '@nteract-mcp/foundation';
import {
  type ClientRequestCheck,
  checkClientRequest,
  checkWire,
  type DecodedFrame,
  defaultMaxFrameBytes,
  defaultMaxMessageBytes,
  describeWireValue,
  encodeRuntimedFrame,
  maxHandshakeFrameBytes,
  type RuntimedErrorCode,
  RuntimedFrameDecoder,
  RuntimedProtocolError,
  runtimedMagic,
  runtimedProtocolVersion,
  type WireClientContext,
  type WireControlAnswer,
  type WireControlHello,
  type WireControlRequestType,
  type WireDaemonEvent,
  type WireDaemonInfo,
  type WireNotebookConnected,
  type WireNotebookMode,
  wireControlHandshakeSchema,
  wireNotebookHandshakeSchemas,
} from '@nteract-mcp/runtimed-protocol';
import { DaemonError, type DaemonErrorKind } from '../daemon-error.js';
import { KernelRecords } from '../kernel/kernel-records.js';
import { NotebookRegistry } from '../persistence/notebook-registry.js';
import type { JournalSettings } from '../persistence/room-journal.js';
import { UntitledStore } from '../persistence/untitled-store.js';
import { writeFileAtomic } from '../persistence/write-file-atomic.js';
import type { DaemonLayout } from '../resolve-daemon-layout.js';
import type { KernelClient, KernelLauncher } from '../room/kernel-launcher.js';
import type { PeerDeparture, RoomPeer, RoomSettings } from '../room/notebook-room.js';
import { type Admission, type ReaperSettings, RoomCatalog } from '../room/room-catalog.js';
import { acquireDaemonSingleton, type DaemonSingleton } from './daemon-singleton.js';
import { type SocketPathWatch, watchSocketPath } from './watch-socket-path.js';

export interface RuntimedServerOptions {
  readonly layout: DaemonLayout;
  readonly version: string;
  readonly settings: RoomSettings & ReaperSettings;
  /** Journal tuning; the journal lives in `<dataDir>/journal`. Defaults: no fdatasync, 64 MiB cap. */
  readonly journal?: { readonly fsync?: boolean; readonly maxBytes?: number };
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
}

const defaultSocketCheckMs = 1000;

const errorCodes: Readonly<Record<DaemonErrorKind, RuntimedErrorCode>> = {
  invalidOption: 'bad_request',
  alreadyRunning: 'internal',
  unsafeSocketDir: 'internal',
  notebookLoadFailed: 'load_failed',
  notebookUnavailable: 'notebook_unavailable',
  cellNotFound: 'cell_not_found',
  badRequest: 'bad_request',
  pathAlreadyOpen: 'path_already_open',
  noPath: 'no_path',
  runtimeUnavailable: 'runtime_unavailable',
  idempotencyConflict: 'idempotency_conflict',
  kernelUnavailable: 'runtime_unavailable',
  kernelStartFailed: 'runtime_unavailable',
  kernelDied: 'runtime_unavailable',
  kernelShutdown: 'runtime_unavailable',
  fileConflict: 'file_conflict',
  saveFailed: 'save_failed',
  fileReadOnly: 'save_failed',
  notDurable: 'internal',
};

/** How long a connection that broke the protocol may take to read what it was sent (the error included). */
const failedConnectionGraceMs = 10_000;

/** A client context from the wire as the launcher takes it (a relative `cwd` is not one). */
function kernelClientOf(client: WireClientContext | undefined): KernelClient | undefined {
  if (client === undefined) return undefined;
  return {
    ...(client.env === undefined ? {} : { env: client.env }),
    ...(client.cwd !== undefined && isAbsolute(client.cwd) ? { cwd: client.cwd } : {}),
  };
}

/** The error frame for anything thrown while serving a request. */
function errorFrame(error: unknown, id?: number): Record<string, unknown> {
  if (error instanceof RangeError) {
    // A client value nested thousands of levels deep overflowed the stack: the input's fault.
    return {
      type: 'error',
      ...(id === undefined ? {} : { id }),
      code: 'bad_request',
      message: 'The request is nested too deeply to handle.',
    };
  }
  if (DaemonError.is(error))
    return { type: 'error', ...(id === undefined ? {} : { id }), code: errorCodes[error.kind], message: error.message };
  return {
    type: 'error',
    ...(id === undefined ? {} : { id }),
    code: 'internal',
    message: (error as Error)?.message ?? String(error),
  };
}

/**
 * The daemon's socket server: holds the singleton locks, the room catalog and the connections.
 * A connection that breaks the protocol (bad preamble, malformed, oversized or unknown frame) gets
 * an error frame and is closed; nothing else is affected.
 */
export class RuntimedServer {
  public readonly info: WireDaemonInfo;
  readonly #options: RuntimedServerOptions;
  readonly #catalog: RoomCatalog;
  readonly #singleton: DaemonSingleton;
  readonly #server: Server;
  readonly #sockets = new Set<Socket>();
  readonly #subscribers = new Set<Socket>();
  #stopping: Promise<void> | undefined;
  #socketWatch: SocketPathWatch | undefined;
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
      const journal: JournalSettings = {
        dir: join(layout.dataDir, 'journal'),
        fsync: options.journal?.fsync ?? false,
        maxBytes: options.journal?.maxBytes ?? 64 * 1024 * 1024,
      };
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
      await singleton.markServing();
      catalog.startReaper();
      logger.info('runtimed listening', { socket: layout.socketPath, pid: process.pid, version: options.version });
      server.#markStarted();
      return server;
    } catch (error) {
      if (started !== undefined) {
        started.#socketWatch?.dispose();
        started.#server.close();
        await started.removeInfoIfOurs().catch(() => undefined);
      }
      await singleton.release();
      throw error;
    }
  }

  public get catalog(): RoomCatalog {
    return this.#catalog;
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
    await this.#catalog.closeAll('the daemon is shutting down');
    for (const socket of this.#sockets) socket.end();
    await new Promise((resolve) => setTimeout(resolve, 20));
    for (const socket of this.#sockets) socket.destroy();
    // Remove only what is still ours: a replaced socket or daemon.json may belong to a successor.
    await Promise.all([socketIsOurs ? rm(layout.socketPath, { force: true }) : undefined, this.removeInfoIfOurs()]);
    await this.#singleton.release();
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
    for (const socket of this.#subscribers) this.send(socket, { type: 'event', ...event });
  }

  /** Writes one message; one over the message cap is answered `oversized_message` (or, unanswerable, dropped and logged). */
  private send(socket: Socket, frame: Readonly<Record<string, unknown>>): void {
    sendFrame(socket, frame, this.#options.maxMessageBytes ?? defaultMaxMessageBytes, this.#options.logger);
  }

  private accept(socket: Socket): void {
    if (this.#stopping) {
      socket.destroy();
      return;
    }
    this.#sockets.add(socket);
    socket.on('error', () => undefined);
    const decoder = new RuntimedFrameDecoder({
      maxFrameBytes: this.#options.maxFrameBytes ?? defaultMaxFrameBytes,
      maxMessageBytes: this.#options.maxMessageBytes ?? defaultMaxMessageBytes,
      maxFirstMessageBytes: maxHandshakeFrameBytes,
    });
    let preamble: Buffer | undefined = Buffer.alloc(0);
    let handler: ((frame: Record<string, unknown>) => void) | undefined;
    let cleanup: (() => void) | undefined;
    /** A notebook handshake is being admitted: what arrives meanwhile waits in `queued`. */
    let admitting = false;
    /** The client ended its side of the connection. */
    let clientEnded = false;
    const queued: DecodedFrame[] = [];
    const handshakeTimer = setTimeout(
      () => fail('bad_request', 'no handshake within the time allowed'),
      this.#options.handshakeTimeoutMs ?? 10_000,
    );
    handshakeTimer.unref();

    const fail = (code: RuntimedErrorCode, message: string): void => {
      this.send(socket, { type: 'error', code, message });
      socket.end();
      // Cut off only once what was sent has left (a slow reader still gets every answer and the
      // error), giving the peer a moment to close first; a peer that never reads, after a while.
      const cut = (): void => {
        socket.destroy();
      };
      socket.once('finish', () => setTimeout(cut, 100).unref());
      setTimeout(cut, failedConnectionGraceMs).unref();
    };

    socket.on('data', (chunk: Buffer) => {
      if (socket.destroyed || socket.writableEnded) return;
      let data = chunk;
      if (preamble !== undefined) {
        preamble = Buffer.concat([preamble, data]);
        if (preamble.length < runtimedMagic.length + 1) {
          if (!runtimedMagic.slice(0, preamble.length).every((byte, index) => preamble?.[index] === byte)) {
            fail('bad_preamble', 'Not a runtimed client: the connection must start with the runtimed preamble');
          }
          return;
        }
        if (!runtimedMagic.every((byte, index) => preamble?.[index] === byte)) {
          fail('bad_preamble', 'Not a runtimed client: the connection must start with the runtimed preamble');
          return;
        }
        const version = preamble[runtimedMagic.length];
        if (version !== runtimedProtocolVersion) {
          fail(
            'unsupported_protocol',
            `Protocol version ${version} is not supported; this daemon (${this.info.version}) speaks ${runtimedProtocolVersion}. Stop it (runtimed stop) so a matching one can start.`,
          );
          return;
        }
        data = preamble.subarray(runtimedMagic.length + 1);
        preamble = undefined;
      }
      try {
        for (const decoded of decoder.push(data)) {
          if (admitting) {
            // In order: nothing sent after the handshake is acted on before the handshake is answered.
            queued.push(decoded);
            continue;
          }
          if (!handleDecoded(decoded)) return;
        }
      } catch (error) {
        // One connection's bad input never takes the daemon down.
        this.#options.logger.warn('a connection sent input the daemon could not handle; closing it', {
          error: error instanceof Error ? error.message : String(error),
        });
        fail('bad_frame', 'the daemon could not handle this input');
      }
    });

    /** Acts on one decoded message; `false` when the connection is done. */
    const handleDecoded = (decoded: DecodedFrame): boolean => {
      if (decoded.kind === 'frame-too-large') {
        fail('oversized_frame', `Frame of ${decoded.bytes} bytes is over the limit of ${decoded.limit}`);
        return false;
      }
      if (decoded.kind === 'oversized') {
        const message = `Message of ${decoded.bytes} bytes is over the limit of ${decoded.limit}`;
        // A request we can name is answered and the connection goes on; anything else ends it.
        if (handler && decoded.id !== undefined) {
          this.send(socket, { type: 'error', id: decoded.id, code: 'oversized_message', message });
          return true;
        }
        fail(handler ? 'oversized_message' : 'oversized_frame', message);
        return false;
      }
      if (
        decoded.kind === 'malformed' ||
        typeof decoded.value !== 'object' ||
        decoded.value === null ||
        Array.isArray(decoded.value)
      ) {
        fail('bad_frame', decoded.kind === 'malformed' ? decoded.reason : 'frame is not a JSON object');
        return false;
      }
      const frame = decoded.value as Record<string, unknown>;
      if (handler) {
        handler(frame);
        return true;
      }
      clearTimeout(handshakeTimer);
      if (frame.channel === 'control' && checkWire(wireControlHandshakeSchema, frame).ok) {
        handler = (request) => this.control(socket, request, fail);
        this.send(socket, { type: 'hello', ...this.info } satisfies WireControlHello);
      } else if (frame.channel === 'notebook') {
        admitting = true;
        void this.admitNotebook(frame).then(
          ({ admission, peer }) => {
            const { room } = admission;
            this.send(socket, {
              type: 'connected',
              notebook_id: room.notebookId,
              notebook_path: room.path ?? null,
              ephemeral: room.ephemeral,
              document_version: room.documentVersion,
              cells: room.cells(),
              runtime: room.runtime,
              conditions: room.conditions(),
              kernel_name: room.kernelName,
              peer_id: peer.id,
              daemon_pid: this.info.pid,
              daemon_started_at: this.info.started_at,
            } satisfies WireNotebookConnected);
            const attached: RoomPeer = {
              ...peer,
              send: (message) => this.send(socket, message),
              disconnect: (why, cause) => {
                this.send(socket, { type: 'room_closed', reason: why, code: cause });
                socket.end();
              },
            };
            room.addPeer(attached);
            admission.release();
            // Without a `leave` first, the end of the connection means the peer vanished.
            let departure: PeerDeparture = 'vanished';
            cleanup = () => room.removePeer(peer.id, departure);
            handler = (request) => {
              if (request.type === 'leave' && typeof request.id === 'number') {
                departure = 'left';
                room.removePeer(peer.id, 'left');
                send(socket, { type: 'ok', id: request.id, left: true });
                handler = () => undefined;
                socket.end();
                return;
              }
              this.notebookRequest(socket, admission, attached, request, fail);
            };
            admitting = false;
            for (const next of queued.splice(0)) if (!handleDecoded(next)) return;
            if (clientEnded && !socket.writableEnded) socket.end();
          },
          (error: unknown) => {
            admitting = false;
            queued.length = 0;
            const frameOut = errorFrame(error);
            fail(frameOut.code as RuntimedErrorCode, String(frameOut.message));
          },
        );
      } else {
        fail('unknown_channel', `Unknown channel ${describeWireValue(frame.channel)}: use 'control' or 'notebook'`);
        return false;
      }
      return true;
    };
    socket.on('end', () => {
      clientEnded = true;
      // Answers still to come (a notebook handshake being admitted, and what was queued behind it)
      // end the connection when they are written; otherwise it ends now (unless our side already
      // ended it, e.g. after a leave: ending it twice makes Node build and drop an error).
      if (!admitting && !socket.writableEnded) socket.end();
    });
    socket.on('close', () => {
      clearTimeout(handshakeTimer);
      this.#sockets.delete(socket);
      this.#subscribers.delete(socket);
      cleanup?.();
    });
  }

  /** Checks a notebook handshake against the schema of its `mode` (`bad_request` naming the field) and admits it. */
  private async admitNotebook(
    frame: Record<string, unknown>,
  ): Promise<{ admission: Admission; peer: { id: string; label: string } }> {
    const mode = frame.mode;
    if (typeof mode !== 'string' || !Object.hasOwn(wireNotebookHandshakeSchemas, mode)) {
      throw new DaemonError(
        'badRequest',
        `Unknown notebook mode ${describeWireValue(mode)}: use 'open', 'attach' or 'create'`,
      );
    }
    const checked = checkWire(wireNotebookHandshakeSchemas[mode as WireNotebookMode], frame);
    if (!checked.ok) throw new DaemonError('badRequest', checked.message);
    const handshake = checked.value;
    const peer = { id: randomUUID(), label: handshake.peer_label };
    switch (handshake.mode) {
      case 'open':
        return { admission: await this.#catalog.open(handshake.path, kernelClientOf(handshake.client)), peer };
      case 'attach':
        return { admission: await this.#catalog.attach(handshake.notebook_id, kernelClientOf(handshake.client)), peer };
      case 'create':
        return {
          admission: await this.#catalog.create({
            ...(handshake.runtime === undefined ? {} : { runtime: handshake.runtime }),
            ...(handshake.kernel === undefined ? {} : { kernel: handshake.kernel }),
            workingDir: handshake.working_dir ?? '',
            ephemeral: handshake.ephemeral !== false,
            ...(handshake.client === undefined ? {} : { client: kernelClientOf(handshake.client) }),
          }),
          peer,
        };
    }
  }

  private notebookRequest(
    socket: Socket,
    admission: Admission,
    peer: RoomPeer,
    request: Record<string, unknown>,
    fail: (code: RuntimedErrorCode, message: string) => void,
  ): void {
    const accepted = acceptRequest(socket, checkClientRequest('notebook', request), 'notebook', fail);
    if (accepted === undefined) return;
    const { id } = accepted;
    admission.room.handle(peer, accepted.request).then(
      (result) => this.send(socket, { ...result, type: 'ok', id }),
      (error: unknown) => this.send(socket, errorFrame(error, id)),
    );
  }

  private control(
    socket: Socket,
    request: Record<string, unknown>,
    fail: (code: RuntimedErrorCode, message: string) => void,
  ): void {
    const accepted = acceptRequest(socket, checkClientRequest('control', request), 'control', fail);
    if (accepted === undefined) return;
    const { id, request: checked } = accepted;
    // Typed by the answer schemas: what the daemon sends is what clients read.
    const answer = <T extends WireControlRequestType>(_type: T, fields: WireControlAnswer<T>): void =>
      this.send(socket, { ...fields, type: 'ok', id });
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
          (error: unknown) => this.send(socket, errorFrame(error, id)),
        );
        return;
      }
      case 'subscribe':
        this.#subscribers.add(socket);
        answer('subscribe', { subscribed: true });
        return;
      case 'shutdown_notebook': {
        void this.#catalog.shutdownRoom(checked.notebook_id).then(
          (found) => answer('shutdown_notebook', { found }),
          (error: unknown) => this.send(socket, errorFrame(error, id)),
        );
        return;
      }
      case 'shutdown_daemon':
        answer('shutdown_daemon', { stopping: true });
        void this.stop('requested by a client');
        return;
    }
  }
}

/**
 * The request of a frame, checked against its type's schema (`checkClientRequest`). A frame
 * without a numeric id and a string type fails the connection (`bad_frame`); an unknown type is
 * answered `unknown_request` and the connection closed; a request that fails its schema is
 * answered `bad_request` naming the field, and the connection goes on. `undefined` in those cases.
 */
function acceptRequest<R>(
  socket: Socket,
  checked: ClientRequestCheck<R>,
  channel: 'control' | 'notebook',
  fail: (code: RuntimedErrorCode, message: string) => void,
): { readonly id: number; readonly request: R } | undefined {
  switch (checked.kind) {
    case 'malformed':
      fail('bad_frame', "a request needs a numeric 'id' and a string 'type'");
      return undefined;
    case 'unknown':
      send(socket, {
        type: 'error',
        id: checked.id,
        code: 'unknown_request',
        message: `Unknown ${channel} request '${checked.type}'`,
      });
      socket.end();
      return undefined;
    case 'invalid':
      send(socket, { type: 'error', id: checked.id, code: 'bad_request', message: checked.message });
      return undefined;
    case 'ok':
      return checked;
  }
}

function send(socket: Socket, frame: Readonly<Record<string, unknown>>): void {
  sendFrame(socket, frame, defaultMaxMessageBytes);
}

/**
 * Writes `frame` as one wire message (split into continuation frames when large). When it is over
 * `maxMessageBytes`, an answer (a frame with an `id`) is replaced by an `oversized_message` error
 * answer to the same request; a broadcast or event is dropped and logged (the document version
 * gap makes the peer's cache stale, so it reads again); a greeting becomes an error that ends the
 * connection.
 */
function sendFrame(
  socket: Socket,
  frame: Readonly<Record<string, unknown>>,
  maxMessageBytes: number,
  logger?: Logger,
): void {
  if (socket.destroyed || !socket.writable) return;
  let bytes: Buffer;
  try {
    bytes = encodeRuntimedFrame(frame, { maxMessageBytes });
  } catch (error) {
    if (!RuntimedProtocolError.is(error, 'messageTooLarge')) throw error;
    if (typeof frame.id === 'number') {
      bytes = encodeRuntimedFrame({
        type: 'error',
        id: frame.id,
        code: 'oversized_message',
        message: `The answer could not be sent: ${error.message}`,
      });
    } else if (frame.type === 'broadcast' || frame.type === 'event') {
      logger?.warn('dropped a message over the size limit', { type: frame.type, event: frame.event, error });
      return;
    } else {
      // A greeting (e.g. a notebook too large to send): the refusal ends the connection.
      socket.end(encodeRuntimedFrame({ type: 'error', code: 'oversized_message', message: error.message }));
      return;
    }
  }
  socket.write(bytes);
}
