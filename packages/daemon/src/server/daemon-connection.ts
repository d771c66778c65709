import type { Socket } from 'node:net';
import { type Logger, releaseLargeTransient, releaseLargeTransientsNow } from '@nteract-mcp/foundation';
import {
  type ClientRequestCheck,
  checkClientRequest,
  checkWire,
  type DecodedFrame,
  defaultMaxMessageBytes,
  describeWireValue,
  encodeRuntimedFrame,
  maxHandshakeFrameBytes,
  type RuntimedErrorCode,
  RuntimedFrameDecoder,
  RuntimedProtocolError,
  runtimedMagic,
  runtimedProtocolVersion,
  type WireControlHello,
  type WireDaemonInfo,
  type WireNotebookConnected,
  wireControlHandshakeSchema,
} from '@nteract-mcp/runtimed-protocol';
import { serializeBlobTextsAs } from '../persistence/blob-text.js';
import type { PeerDeparture, RoomPeer } from '../room/room-peers.js';
import type { NotebookAdmission } from './admit-notebook.js';
import { errorFrame } from './error-frame.js';

/**
 * Where a connection is: reading the `preamble`, waiting for the `handshake` (the first frame),
 * `admitting` a notebook handshake (frames that arrive meanwhile wait), `admitted` (serving the
 * requests of a control or notebook session), `leaving` (ending: it failed, its peer left, the
 * client or the daemon ended it, or it closed). `leaving` is final.
 */
export type DaemonConnectionState = 'preamble' | 'handshake' | 'admitting' | 'admitted' | 'leaving';

/** The moves a connection can make; anything else is not a move (see {@link DaemonConnection}). */
const transitions: Readonly<Record<DaemonConnectionState, readonly DaemonConnectionState[]>> = {
  preamble: ['handshake', 'leaving'],
  handshake: ['admitting', 'admitted', 'leaving'],
  admitting: ['admitted', 'leaving'],
  admitted: ['leaving'],
  leaving: [],
};

/** What a connection needs of the daemon. */
export interface DaemonConnectionHost {
  readonly info: WireDaemonInfo;
  readonly logger: Logger;
  /** Largest frame accepted; a bigger one closes the connection. */
  readonly maxFrameBytes: number;
  /** Largest message sent or accepted after the handshake. */
  readonly maxMessageBytes: number;
  readonly handshakeTimeoutMs: number;
  /**
   * The blob directory of the rooms' large output values, when they are kept there: a notebook
   * peer that reads blob references gets references in place of those values.
   */
  readonly blobDir?: string;
  /** Admits a notebook handshake; a refusal throws (answered as an error that ends the connection). */
  admitNotebook(frame: Record<string, unknown>): Promise<NotebookAdmission>;
  /** Answers one request of a control session (see {@link DaemonConnection.acceptRequest}). */
  control(connection: DaemonConnection, request: Record<string, unknown>): void;
  /**
   * Why this daemon must not act on any request now (it is stopping, or another daemon took its
   * socket or lock), or `undefined`: asked before every request, which is then refused
   * (`shutting_down`, nothing done) instead of served.
   */
  refusal(): string | undefined;
  /** The connection closed. */
  closed(connection: DaemonConnection): void;
}

/** How long a connection that broke the protocol may take to read what it was sent (the error included). */
const failedConnectionGraceMs = 10_000;

/**
 * One client connection of the daemon, from its preamble to its end. A connection that breaks the
 * protocol (bad preamble, malformed, oversized or unknown frame) gets an error frame and is
 * closed; nothing else is affected. Its state changes only in {@link DaemonConnection.enter}.
 */
export class DaemonConnection {
  readonly #socket: Socket;
  readonly #host: DaemonConnectionHost;
  readonly #decoder: RuntimedFrameDecoder;
  #state: DaemonConnectionState = 'preamble';
  /** What arrived of the preamble so far. */
  #preamble: Buffer = Buffer.alloc(0);
  /** Serves a frame of the admitted session (after a `leave`, ignores it). */
  #serve: ((frame: Record<string, unknown>) => void) | undefined;
  /** What the connection's end undoes (a notebook peer leaves its room). */
  #onClose: (() => void) | undefined;
  /** Frames that arrived while a notebook handshake was being admitted. */
  readonly #queued: DecodedFrame[] = [];
  /** The client ended its side of the connection. */
  #clientEnded = false;
  /** Set for a notebook peer that reads blob references: it is sent references, not large values. */
  #blobDir: string | undefined;
  readonly #handshakeTimer: NodeJS.Timeout;

  public constructor(socket: Socket, host: DaemonConnectionHost) {
    this.#socket = socket;
    this.#host = host;
    socket.on('error', () => undefined);
    this.#decoder = new RuntimedFrameDecoder({
      maxFrameBytes: host.maxFrameBytes,
      maxMessageBytes: host.maxMessageBytes,
      maxFirstMessageBytes: maxHandshakeFrameBytes,
    });
    this.#handshakeTimer = setTimeout(
      () => this.fail('bad_request', 'no handshake within the time allowed'),
      host.handshakeTimeoutMs,
    );
    this.#handshakeTimer.unref();
    socket.on('data', (chunk: Buffer) => this.receive(chunk));
    socket.on('end', () => {
      this.#clientEnded = true;
      // Answers still to come (a notebook handshake being admitted, and what was queued behind it)
      // end the connection when they are written; otherwise it ends now (unless our side already
      // ended it, e.g. after a leave: ending it twice makes Node build and drop an error).
      if (this.#state !== 'admitting' && !socket.writableEnded) this.end();
    });
    socket.on('close', () => {
      clearTimeout(this.#handshakeTimer);
      this.enter('leaving');
      this.#host.closed(this);
      this.#onClose?.();
    });
  }

  public get state(): DaemonConnectionState {
    return this.#state;
  }

  /**
   * Writes one message; one over the message cap is answered `oversized_message` (or, unanswerable,
   * dropped and logged). A peer that reads blob references gets a reference for each value the
   * rooms keep as a blob; any other peer gets the value's text and never `blob_outputs`.
   */
  public send(frame: Readonly<Record<string, unknown>>): void {
    const { maxMessageBytes, logger } = this.#host;
    if (this.#blobDir === undefined) {
      sendFrame(this.#socket, withoutBlobOutputs(frame), maxMessageBytes, logger);
      return;
    }
    serializeBlobTextsAs(
      (blob) => blob.reference(),
      () => sendFrame(this.#socket, frame, maxMessageBytes, logger),
    );
  }

  /** Ends the connection from our side (what was sent is still delivered). */
  public end(): void {
    this.enter('leaving');
    this.#socket.end();
  }

  /** Cuts the connection off. */
  public destroy(): void {
    this.#socket.destroy();
  }

  /** Answers an error frame and ends the connection (cut off once the error left, or after a grace period). */
  public fail(code: RuntimedErrorCode, message: string): void {
    this.send({ type: 'error', code, message });
    this.end();
    // Cut off only once what was sent has left (a slow reader still gets every answer and the
    // error), giving the peer a moment to close first; a peer that never reads, after a while.
    const cut = (): void => {
      this.#socket.destroy();
    };
    this.#socket.once('finish', () => setTimeout(cut, 100).unref());
    setTimeout(cut, failedConnectionGraceMs).unref();
  }

  /**
   * The request of a frame, checked against its type's schema (`checkClientRequest`). A frame
   * without a numeric id and a string type fails the connection (`bad_frame`); an unknown type is
   * answered `unknown_request` and the connection closed; a request that fails its schema is
   * answered `bad_request` naming the field, and the connection goes on. `undefined` in those cases.
   */
  public acceptRequest<R>(
    checked: ClientRequestCheck<R>,
    channel: 'control' | 'notebook',
  ): { readonly id: number; readonly request: R } | undefined {
    switch (checked.kind) {
      case 'malformed':
        this.fail('bad_frame', "a request needs a numeric 'id' and a string 'type'");
        return undefined;
      case 'unknown':
        this.sendSmall({
          type: 'error',
          id: checked.id,
          code: 'unknown_request',
          message: `Unknown ${channel} request '${checked.type}'`,
        });
        this.end();
        return undefined;
      case 'invalid':
        this.sendSmall({ type: 'error', id: checked.id, code: 'bad_request', message: checked.message });
        return undefined;
      case 'ok':
        return checked;
    }
  }

  /** Answers `request` `shutting_down`, nothing done, when the daemon must not act (see {@link DaemonConnectionHost.refusal}). */
  private refused(request: Record<string, unknown>): boolean {
    const why = this.#host.refusal();
    if (why === undefined) return false;
    this.sendSmall({
      type: 'error',
      ...(typeof request.id === 'number' ? { id: request.id } : {}),
      code: 'shutting_down',
      message: `This daemon did not apply the request: ${why}.`,
    });
    return true;
  }

  /** The one place the state changes; `false` (and no change) when `next` is not a move from here. */
  private enter(next: DaemonConnectionState): boolean {
    if (!transitions[this.#state].includes(next)) return false;
    this.#state = next;
    return true;
  }

  /** A short answer of the daemon's own (sent under the protocol's default message cap). */
  private sendSmall(frame: Readonly<Record<string, unknown>>): void {
    sendFrame(this.#socket, frame, defaultMaxMessageBytes);
  }

  private receive(chunk: Buffer): void {
    if (this.#socket.destroyed || this.#socket.writableEnded) return;
    let data = chunk;
    if (this.#state === 'preamble') {
      const preamble = Buffer.concat([this.#preamble, data]);
      this.#preamble = preamble;
      if (preamble.length < runtimedMagic.length + 1) {
        if (!runtimedMagic.slice(0, preamble.length).every((byte, index) => preamble[index] === byte)) {
          this.fail('bad_preamble', 'Not a runtimed client: the connection must start with the runtimed preamble');
        }
        return;
      }
      if (!runtimedMagic.every((byte, index) => preamble[index] === byte)) {
        this.fail('bad_preamble', 'Not a runtimed client: the connection must start with the runtimed preamble');
        return;
      }
      const version = preamble[runtimedMagic.length];
      if (version !== runtimedProtocolVersion) {
        this.fail(
          'unsupported_protocol',
          `Protocol version ${version} is not supported; this daemon (${this.#host.info.version}) speaks ${runtimedProtocolVersion}. Stop it (runtimed stop) so a matching one can start.`,
        );
        return;
      }
      data = preamble.subarray(runtimedMagic.length + 1);
      this.#preamble = Buffer.alloc(0);
      this.enter('handshake');
    }
    try {
      for (const decoded of this.#decoder.push(data)) {
        if (this.#state === 'admitting') {
          // In order: nothing sent after the handshake is acted on before the handshake is answered.
          this.#queued.push(decoded);
          continue;
        }
        if (!this.handleDecoded(decoded)) return;
      }
    } catch (error) {
      // One connection's bad input never takes the daemon down.
      this.#host.logger.warn('a connection sent input the daemon could not handle; closing it', {
        error: error instanceof Error ? error.message : String(error),
      });
      this.fail('bad_frame', 'the daemon could not handle this input');
    }
  }

  /** Acts on one decoded message; `false` when the connection is done. */
  private handleDecoded(decoded: DecodedFrame): boolean {
    const serve = this.#serve;
    if (decoded.kind === 'frame-too-large') {
      this.fail('oversized_frame', `Frame of ${decoded.bytes} bytes is over the limit of ${decoded.limit}`);
      return false;
    }
    if (decoded.kind === 'oversized') {
      const message = `Message of ${decoded.bytes} bytes is over the limit of ${decoded.limit}`;
      // A request we can name is answered and the connection goes on; anything else ends it.
      if (serve && decoded.id !== undefined) {
        this.send({ type: 'error', id: decoded.id, code: 'oversized_message', message });
        return true;
      }
      this.fail(serve ? 'oversized_message' : 'oversized_frame', message);
      return false;
    }
    if (
      decoded.kind === 'malformed' ||
      typeof decoded.value !== 'object' ||
      decoded.value === null ||
      Array.isArray(decoded.value)
    ) {
      this.fail('bad_frame', decoded.kind === 'malformed' ? decoded.reason : 'frame is not a JSON object');
      return false;
    }
    const frame = decoded.value as Record<string, unknown>;
    if (serve) {
      serve(frame);
      return true;
    }
    return this.handshake(frame);
  }

  /** The first frame: a control handshake is admitted at once, a notebook one once its room let it in. */
  private handshake(frame: Record<string, unknown>): boolean {
    clearTimeout(this.#handshakeTimer);
    if (frame.channel === 'control' && checkWire(wireControlHandshakeSchema, frame).ok) {
      this.#serve = (request) => {
        if (!this.refused(request)) this.#host.control(this, request);
      };
      this.enter('admitted');
      this.send({ type: 'hello', ...this.#host.info } satisfies WireControlHello);
      return true;
    }
    if (frame.channel !== 'notebook') {
      this.fail('unknown_channel', `Unknown channel ${describeWireValue(frame.channel)}: use 'control' or 'notebook'`);
      return false;
    }
    this.enter('admitting');
    const reads = {
      blobReferences: frame.blob_references === true,
      sourceEdits: frame.source_edits === true,
      comments: frame.comments === true,
    };
    void this.#host.admitNotebook(frame).then(
      (admitted) => this.admitted(admitted, reads),
      (error: unknown) => {
        this.#queued.length = 0;
        const frameOut = errorFrame(error);
        this.fail(frameOut.code as RuntimedErrorCode, String(frameOut.message));
      },
    );
    return true;
  }

  /**
   * A notebook handshake was let in: the peer joins its room (reading blob references and source
   * edits when its handshake declared them), then what waited is served in order.
   */
  private admitted(
    { admission, peer }: NotebookAdmission,
    reads: { readonly blobReferences: boolean; readonly sourceEdits: boolean; readonly comments: boolean },
  ): void {
    if (this.#state === 'leaving') {
      // The connection ended while the room let it in: nobody is there to join (a peer added now
      // would never leave, and the room's kernel never be torn down).
      admission.release();
      return;
    }
    const { room } = admission;
    const { info } = this.#host;
    if (reads.blobReferences) this.#blobDir = this.#host.blobDir;
    this.send({
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
      daemon_pid: info.pid,
      daemon_started_at: info.started_at,
      ...(this.#blobDir === undefined ? {} : { blob_dir: this.#blobDir }),
      comments: true,
    } satisfies WireNotebookConnected);
    const attached: RoomPeer = {
      ...peer,
      readsSourceEdits: reads.sourceEdits,
      readsComments: reads.comments,
      send: (message) => this.send(message),
      disconnect: (why, cause) => {
        this.send({ type: 'room_closed', reason: why, code: cause });
        this.end();
      },
    };
    room.addPeer(attached);
    admission.release();
    // Without a `leave` first, the end of the connection means the peer vanished.
    let departure: PeerDeparture = 'vanished';
    this.#onClose = () => room.removePeer(peer.id, departure);
    this.#serve = (request) => {
      if (request.type === 'leave' && typeof request.id === 'number') {
        departure = 'left';
        room.removePeer(peer.id, 'left');
        this.sendSmall({ type: 'ok', id: request.id, left: true });
        this.#serve = () => undefined;
        this.end();
        return;
      }
      if (this.refused(request)) return;
      const accepted = this.acceptRequest(checkClientRequest('notebook', request), 'notebook');
      if (accepted === undefined) return;
      const { id } = accepted;
      room.handle(attached, accepted.request).then(
        (result) => this.send({ ...result, type: 'ok', id }),
        (error: unknown) => this.send(errorFrame(error, id)),
      );
    };
    this.enter('admitted');
    for (const next of this.#queued.splice(0)) if (!this.handleDecoded(next)) return;
    if (this.#clientEnded && !this.#socket.writableEnded) this.end();
  }
}

/**
 * Writes `frame` as one wire message (split into continuation frames when large). When it is over
 * `maxMessageBytes`, an answer (a frame with an `id`) is replaced by an `oversized_message` error
 * answer to the same request; a broadcast or event is dropped and logged (the document version
 * gap makes the peer's cache stale, so it reads again); a greeting becomes an error that ends the
 * connection.
 */
/** `frame` without what only peers that read blob references are sent (an `execution_done`'s `blob_outputs`). */
function withoutBlobOutputs(frame: Readonly<Record<string, unknown>>): Readonly<Record<string, unknown>> {
  if (frame.blob_outputs === undefined) return frame;
  const { blob_outputs: _, ...rest } = frame;
  return rest;
}

function sendFrame(
  socket: Socket,
  frame: Readonly<Record<string, unknown>>,
  maxMessageBytes: number,
  logger?: Logger,
): void {
  if (socket.destroyed || !socket.writable) return;
  // An answer goes out once what handling its request dropped is given back.
  if (typeof frame.id === 'number') releaseLargeTransientsNow();
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
  // Once written, a large message's bytes are garbage: given back soon.
  socket.write(bytes, () => releaseLargeTransient(bytes.byteLength));
}
