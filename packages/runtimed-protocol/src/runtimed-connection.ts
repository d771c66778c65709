import { lstat } from 'node:fs/promises';
import { connect, type Socket } from 'node:net';
import { releaseLargeTransient, type Subscription } from '@nteract-mcp/foundation';
import { encodeRuntimedFrame, RuntimedFrameDecoder } from './runtimed-frame-decoder.js';
import { RuntimedProtocolError, type RuntimedProtocolErrorKind } from './runtimed-protocol-error.js';
import { defaultMaxFrameBytes, defaultMaxMessageBytes, runtimedPreamble } from './runtimed-wire-constants.js';
import { parseFromDaemon } from './schemas/parse-from-daemon.js';
import { runtimedErrorFrameSchema } from './schemas/runtimed-error-frame.js';
import type { RuntimedHandshake } from './schemas/runtimed-handshake.js';
import { type WireControlAnswer, wireControlAnswerSchemas } from './schemas/wire-control-answer.js';
import type { WireControlRequest } from './schemas/wire-control-request.js';
import { type WireNotebookAnswer, wireNotebookAnswerSchemas } from './schemas/wire-notebook-answer.js';
import type { WireNotebookRequest } from './schemas/wire-notebook-request.js';

/** A frame from the daemon, as parsed JSON (read it with the schema of what it is). */
export type RuntimedFrame = Readonly<Record<string, unknown>>;

/** A request as {@link RuntimedConnection.request} sends it (it adds the `id`); not checked. */
export type RuntimedRequestFrame = Readonly<Record<string, unknown>> & { readonly type: string };

export interface RuntimedConnectionOptions {
  readonly socketPath: string;
  readonly handshake: RuntimedHandshake;
  /** Time allowed for connecting and the daemon's first answer (default 5 s). */
  readonly timeoutMs?: number;
  /** Largest frame accepted from the daemon (default 1 MiB); a bigger one closes the connection. */
  readonly maxFrameBytes?: number;
  /**
   * Largest message sent or accepted (default 256 MiB). A request over it rejects with
   * `messageTooLarge` without being sent; an answer over it rejects its request the same way,
   * and the connection goes on.
   */
  readonly maxMessageBytes?: number;
}

const codeKinds: Readonly<Record<string, RuntimedProtocolErrorKind>> = {
  shutting_down: 'daemonUnavailable',
  bad_preamble: 'protocolViolation',
  unsupported_protocol: 'protocolViolation',
  bad_frame: 'protocolViolation',
  oversized_frame: 'protocolViolation',
  oversized_message: 'messageTooLarge',
  unknown_channel: 'protocolViolation',
};

/**
 * Turns a daemon error frame into a {@link RuntimedProtocolError} (keeping the daemon's code); an
 * error frame without a string `code` and `message` is itself a `protocolViolation`.
 */
export function errorFromFrame(frame: RuntimedFrame): RuntimedProtocolError {
  let error: { code: string; message: string };
  try {
    error = parseFromDaemon(runtimedErrorFrameSchema, frame, 'error frame');
  } catch (violation) {
    return violation as RuntimedProtocolError;
  }
  return new RuntimedProtocolError(codeKinds[error.code] ?? 'daemonRefused', error.message, { code: error.code });
}

/**
 * One client connection to `runtimed`: preamble, handshake, then requests matched to answers by
 * `id` and every other frame (broadcasts, events) delivered to listeners.
 *
 * Guarantees: refuses a socket owned by another user (`unsafeSocket`); every request settles
 * exactly once (answer, error frame, or `daemonUnavailable` when the connection closes); listeners
 * see frames in arrival order. Does not guarantee that a request rejected by a closed connection
 * did not take effect in the daemon (use idempotency keys).
 */
export class RuntimedConnection {
  readonly #socket: Socket;
  readonly #decoder: RuntimedFrameDecoder;
  readonly #pending = new Map<number, { resolve(frame: RuntimedFrame): void; reject(error: Error): void }>();
  readonly #listeners = new Set<(frame: RuntimedFrame) => void>();
  /** Frames that arrived while nobody listened (e.g. in the same chunk as the greeting); given to the next listener. */
  readonly #backlog: RuntimedFrame[] = [];
  readonly #closeListeners = new Set<(reason: string) => void>();
  readonly #maxMessageBytes: number;
  #nextId = 1;
  #closedReason: string | undefined;

  private constructor(socket: Socket, decoder: RuntimedFrameDecoder, maxMessageBytes: number) {
    this.#socket = socket;
    this.#decoder = decoder;
    this.#maxMessageBytes = maxMessageBytes;
  }

  /**
   * Connects, sends the preamble and handshake, and resolves with the connection and the daemon's
   * greeting frame. A refusal (an error frame) rejects with the matching {@link RuntimedProtocolError}.
   */
  public static async open(
    options: RuntimedConnectionOptions,
  ): Promise<{ connection: RuntimedConnection; greeting: RuntimedFrame }> {
    await assertSocketIsOurs(options.socketPath);
    const socket = await connectSocket(options.socketPath, options.timeoutMs ?? 5000);
    const maxMessageBytes = options.maxMessageBytes ?? defaultMaxMessageBytes;
    const connection = new RuntimedConnection(
      socket,
      new RuntimedFrameDecoder({ maxFrameBytes: options.maxFrameBytes ?? defaultMaxFrameBytes, maxMessageBytes }),
      maxMessageBytes,
    );
    const greeting = connection.firstFrame(options.timeoutMs ?? 5000);
    connection.attach();
    socket.write(runtimedPreamble());
    socket.write(encodeRuntimedFrame(options.handshake));
    try {
      return { connection, greeting: await greeting };
    } catch (error) {
      connection.close();
      throw error;
    }
  }

  public get isClosed(): boolean {
    return this.#closedReason !== undefined;
  }

  /**
   * Sends a control request and resolves with its answer, read with the answer's schema (a
   * malformed answer rejects with `protocolViolation` naming the field).
   */
  public requestControl<R extends WireControlRequest>(message: R): Promise<WireControlAnswer<R['type']>> {
    return this.request(message).then(
      (frame) =>
        parseFromDaemon(wireControlAnswerSchemas[message.type], frame, `${message.type} answer`) as WireControlAnswer<
          R['type']
        >,
    );
  }

  /** Sends a notebook request and resolves with its answer, read with the answer's schema. */
  public requestNotebook<R extends WireNotebookRequest>(message: R): Promise<WireNotebookAnswer<R['type']>> {
    return this.request(message).then(
      (frame) =>
        parseFromDaemon(wireNotebookAnswerSchemas[message.type], frame, `${message.type} answer`) as WireNotebookAnswer<
          R['type']
        >,
    );
  }

  /** Sends `{ id, ...message }` unchecked and resolves with the frame that answers it, unread. */
  public request(message: RuntimedRequestFrame): Promise<RuntimedFrame> {
    if (this.#closedReason !== undefined) {
      return Promise.reject(
        new RuntimedProtocolError('daemonUnavailable', `Connection to the daemon is closed (${this.#closedReason})`),
      );
    }
    const id = this.#nextId++;
    let bytes: Buffer;
    try {
      bytes = encodeRuntimedFrame({ ...message, id }, { maxMessageBytes: this.#maxMessageBytes });
    } catch (error) {
      return Promise.reject(error);
    }
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      // Once written, a large request's bytes are garbage: given back soon.
      this.#socket.write(bytes, () => releaseLargeTransient(bytes.byteLength));
    });
  }

  /**
   * Frames that answer no request: broadcasts and events. Frames that arrived while no listener
   * was registered (such as broadcasts right behind the greeting) are delivered to the first
   * listener at once, in order.
   */
  public onFrame(listener: (frame: RuntimedFrame) => void): Subscription {
    this.#listeners.add(listener);
    for (const frame of this.#backlog.splice(0)) listener(frame);
    return { dispose: () => this.#listeners.delete(listener) };
  }

  public onClose(listener: (reason: string) => void): Subscription {
    if (this.#closedReason !== undefined) {
      listener(this.#closedReason);
      return { dispose: () => undefined };
    }
    this.#closeListeners.add(listener);
    return { dispose: () => this.#closeListeners.delete(listener) };
  }

  /** Closes our end. Idempotent; pending requests reject with `daemonUnavailable`. */
  public close(): void {
    this.finish('closed by client');
    this.#socket.destroy();
  }

  private firstFrame(timeoutMs: number): Promise<RuntimedFrame> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        cleanup();
        reject(
          new RuntimedProtocolError(
            'daemonUnavailable',
            `The daemon did not answer the handshake within ${timeoutMs} ms`,
          ),
        );
      }, timeoutMs);
      const frameSub = this.onFrame((frame) => {
        cleanup();
        if (frame.type === 'error') reject(errorFromFrame(frame));
        else resolve(frame);
      });
      const closeSub = this.onClose((reason) => {
        cleanup();
        reject(
          new RuntimedProtocolError(
            'daemonUnavailable',
            `The daemon closed the connection during the handshake (${reason})`,
          ),
        );
      });
      const cleanup = (): void => {
        clearTimeout(timer);
        frameSub.dispose();
        closeSub.dispose();
      };
    });
  }

  private attach(): void {
    this.#socket.on('data', (chunk: Buffer) => {
      for (const decoded of this.#decoder.push(chunk)) {
        if (decoded.kind === 'oversized') {
          this.oversized(decoded.bytes, decoded.limit, decoded.id);
          continue;
        }
        if (decoded.kind !== 'frame') {
          this.finish(
            decoded.kind === 'frame-too-large'
              ? `daemon sent a ${decoded.bytes}-byte frame, over the ${decoded.limit}-byte frame limit`
              : decoded.reason,
          );
          this.#socket.destroy();
          return;
        }
        this.dispatch(decoded.value as RuntimedFrame);
      }
    });
    this.#socket.on('close', () => this.finish('daemon closed the connection'));
    this.#socket.on('error', (error) => this.finish(error.message));
  }

  /**
   * A message over our cap was skipped: its request (when its id could be read) rejects with
   * `messageTooLarge`; a skipped broadcast is lost, and the document version gap it leaves makes
   * the handle's cache stale.
   */
  private oversized(bytes: number, limit: number, id: number | undefined): void {
    const pending = id === undefined ? undefined : this.#pending.get(id);
    if (!pending || id === undefined) return;
    this.#pending.delete(id);
    pending.reject(
      new RuntimedProtocolError(
        'messageTooLarge',
        `The daemon's answer is ${bytes} bytes, over the ${limit}-byte limit of one daemon message`,
        { code: 'oversized_message' },
      ),
    );
  }

  private dispatch(frame: RuntimedFrame): void {
    const id = typeof frame.id === 'number' ? frame.id : undefined;
    const pending = id === undefined ? undefined : this.#pending.get(id);
    if (pending && id !== undefined) {
      this.#pending.delete(id);
      if (frame.type === 'error') pending.reject(errorFromFrame(frame));
      else pending.resolve(frame);
      return;
    }
    if (this.#listeners.size === 0) {
      this.#backlog.push(frame);
      if (this.#backlog.length > 1024) this.#backlog.shift();
      return;
    }
    for (const listener of [...this.#listeners]) listener(frame);
  }

  private finish(reason: string): void {
    if (this.#closedReason !== undefined) return;
    this.#closedReason = reason;
    for (const { reject } of this.#pending.values()) {
      reject(
        new RuntimedProtocolError(
          'daemonUnavailable',
          `Lost the connection to the daemon before it answered (${reason})`,
        ),
      );
    }
    this.#pending.clear();
    for (const listener of [...this.#closeListeners]) listener(reason);
    this.#closeListeners.clear();
  }
}

/**
 * Refuses a socket that is missing (`daemonUnavailable`) or owned by a user other than `uid`
 * (default: ours) (`unsafeSocket`).
 */
export async function assertSocketIsOurs(
  socketPath: string,
  uid: number | undefined = process.getuid?.(),
): Promise<void> {
  let owner: number;
  try {
    owner = (await lstat(socketPath)).uid;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') {
      throw new RuntimedProtocolError('daemonUnavailable', `Daemon is not running. No socket at ${socketPath}.`, {
        code,
      });
    }
    throw new RuntimedProtocolError(
      'daemonUnavailable',
      `Cannot inspect the daemon socket ${socketPath}: ${(error as Error).message}`,
      { code },
    );
  }
  if (uid !== undefined && owner !== uid) {
    throw new RuntimedProtocolError(
      'unsafeSocket',
      `Refusing to connect: the daemon socket ${socketPath} belongs to uid ${owner}, not to this user (uid ${uid}).`,
    );
  }
}

function connectSocket(socketPath: string, timeoutMs: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(socketPath);
    const timer = setTimeout(() => {
      socket.destroy();
      reject(
        new RuntimedProtocolError(
          'daemonUnavailable',
          `Connecting to the daemon at ${socketPath} timed out after ${timeoutMs} ms`,
        ),
      );
    }, timeoutMs);
    socket.once('connect', () => {
      clearTimeout(timer);
      socket.removeAllListeners('error');
      resolve(socket);
    });
    socket.once('error', (error: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      const message =
        error.code === 'ECONNREFUSED'
          ? `Daemon connection refused at ${socketPath}. The daemon may have crashed or is restarting.`
          : error.code === 'EACCES'
            ? `Permission denied connecting to daemon at ${socketPath}. Check file permissions.`
            : error.code === 'ENOENT'
              ? `Daemon is not running. No socket at ${socketPath}.`
              : `Cannot connect to the daemon at ${socketPath}: ${error.message}`;
      reject(new RuntimedProtocolError('daemonUnavailable', message, { code: error.code }));
    });
  });
}
