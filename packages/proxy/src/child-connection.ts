import {
  type ChildProcessHandle,
  type Clock,
  type JsonRpcId,
  type JsonRpcMessage,
  type Logger,
  requestIdKey,
  serializeJsonRpcLine,
} from '@nteract-mcp/core';
import { ChildLineReader } from './child-line-reader.js';
import { IdempotencyKeys } from './idempotency-keys.js';
import type { InFlightRequest } from './in-flight-requests.js';
import { rewriteRequestId } from './rewrite-request-id.js';
import type { ScannedAnswer } from './scan-child-answer.js';
import { toProxyWireError } from './to-proxy-wire-error.js';
import { TurnWriter, type WriteTurn } from './turn-writer.js';
import type { RestartNotice } from './version-banner.js';

export interface ChildConnectionOptions {
  readonly handle: ChildProcessHandle;
  /** The rejoin target this child was started with, if any. */
  readonly handedOff: string | undefined;
  /** The id for the next message written to a child (unique across children). */
  readonly nextId: () => number;
  readonly clock: Clock;
  readonly logger: Logger;
  /**
   * Every message the child writes that is not the answer to a request of the proxy's own, with
   * the line it came on (absent for an answer the connection made up, e.g. for a line too long).
   */
  readonly onMessage: (message: JsonRpcMessage, line?: Buffer) => void;
  /**
   * Every successful answer the child writes that is not to a request of the proxy's own, as read
   * without being parsed (see `scanChildAnswer`); {@link parseAnswer} builds it when needed.
   */
  readonly onAnswer: (answer: ScannedAnswer) => void;
  /** The span the proxy's reads open: writes in it leave together when it ends (a child chunk opens one). */
  readonly turn?: WriteTurn;
}

/** A scanned answer as a message (the scan checked it is a valid JSON-RPC answer). */
export function parseAnswer(answer: ScannedAnswer): JsonRpcMessage {
  return JSON.parse(answer.line.toString('utf8', 0, answer.end)) as JsonRpcMessage;
}

/**
 * One child process as the proxy speaks to it: its stdout read as JSON-RPC lines (an answer over
 * the line cap becomes an error answer to its id), writes to its stdin while it is writable, the
 * proxy's own requests to it, the ids of its requests to the client, and its readiness.
 *
 * Guarantees: an own request resolves once (its answer, or an error when the child died first or
 * the bound passed); readiness settles once (`true` after {@link markReady}, `false` after
 * {@link markExited}).
 */
export class ChildConnection {
  public readonly handle: ChildProcessHandle;
  public readonly handedOff: string | undefined;
  /** What its start changed, for a child that is not the first one. */
  public notice: RestartNotice | undefined;
  /**
   * The tools of its list that answer its status document, to which the proxy adds its
   * supervision section (they declare `declaresSupervisionStatus`); set from its list at handshake.
   */
  public statusTools: ReadonlySet<string> = new Set();
  readonly #options: ChildConnectionOptions;
  readonly #own = new Map<number, (message: JsonRpcMessage) => void>();
  /** Requests the child sent the client, by the key of the upstream id we gave them. */
  readonly #toClient = new Map<string, JsonRpcId>();
  /** The upstream ids of those requests: like idempotency keys, never repeated by this or any other proxy. */
  readonly #upstreamIds = new IdempotencyKeys();
  readonly #readiness: Promise<boolean>;
  readonly #stdin: TurnWriter;
  #settleReadiness!: (ready: boolean) => void;
  #ready = false;

  public constructor(options: ChildConnectionOptions) {
    this.#options = options;
    this.handle = options.handle;
    this.handedOff = options.handedOff;
    this.#stdin = new TurnWriter(options.handle.stdin, options.turn);
    this.#readiness = new Promise<boolean>((resolve) => {
      this.#settleReadiness = resolve;
    });
    const reader = new ChildLineReader();
    this.handle.stdout.on('data', (chunk: Buffer) => {
      options.turn?.begin();
      try {
        this.#read(reader, chunk);
      } finally {
        options.turn?.end();
      }
    });
    this.handle.stdin.on('error', () => undefined);
  }

  #read(reader: ChildLineReader, chunk: Buffer): void {
    const { logger } = this.#options;
    const frames = reader.push(chunk);
    for (let i = 0; i < frames.length; i++) {
      const frame = frames[i] as (typeof frames)[number];
      if (frame.kind === 'answer') this.#receiveAnswer(frame.answer);
      else if (frame.kind === 'message') this.#receive(frame.message, frame.line);
      else if (frame.reason === 'line-too-long' && frame.response.id !== null) {
        // An answer too large to carry: its request gets an error answer instead of silence.
        logger.warn('the child wrote an answer over the line limit', { id: frame.response.id });
        this.#receive({
          jsonrpc: '2.0',
          id: frame.response.id,
          error: toProxyWireError({ kind: 'too_large', limit: reader.maxLineBytes, stage: 'child' }),
        });
      } else logger.warn('the child wrote a line that is not JSON-RPC', { reason: frame.reason });
    }
  }

  /** The handshake with it is done: it serves. */
  public get ready(): boolean {
    return this.#ready;
  }

  public get writable(): boolean {
    return this.handle.stdin.writable;
  }

  public markReady(): void {
    this.#ready = true;
    this.#settleReadiness(true);
  }

  /** It exited (or is no longer the live child): it never becomes ready, and own requests get an error. */
  public markExited(): void {
    this.#settleReadiness(false);
    const exited = toProxyWireError({ kind: 'child_unavailable', reason: 'child exited' });
    for (const resolve of [...this.#own.values()]) resolve({ jsonrpc: '2.0', id: 0, error: exited });
    this.#own.clear();
  }

  /** `true` once its handshake is done; `false` when it died first or `timeoutMs` passed (on the clock). */
  public whenReady(timeoutMs: number): Promise<boolean> {
    if (this.#ready) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = this.#options.clock.setTimer(timeoutMs, () => resolve(false));
      void this.#readiness.then((ready) => {
        timer.cancel();
        resolve(ready);
      });
    });
  }

  /** Writes `message` while the child's stdin is writable; else drops it. */
  public write(message: JsonRpcMessage): void {
    if (!this.writable) return;
    this.#stdin.write(serializeJsonRpcLine(message));
  }

  /**
   * Forwards a request under a new child id: `beforeWrite(childId)` runs first (the answer may
   * come at once), then the line is written. `clientLine`, the client's bytes of the request when
   * nothing in it was changed, goes on with only its id rewritten when it can be (see
   * {@link rewriteRequestId}); else the request is serialized. Throws (writing nothing) when it
   * cannot be serialized.
   */
  public forward(
    pending: InFlightRequest<ChildConnection>,
    beforeWrite: (childId: number) => void,
    clientLine?: Buffer,
  ): void {
    const childId = this.#options.nextId();
    const request = pending.request as { id: JsonRpcId };
    const upstreamId = request.id;
    let line: string | Buffer | undefined =
      clientLine === undefined ? undefined : rewriteRequestId(clientLine, upstreamId, childId);
    if (line === undefined) {
      // The request was parsed for the proxy alone: its id is swapped for the child's while it is
      // written out (no copy of it is made), and put back.
      request.id = childId;
      try {
        line = serializeJsonRpcLine(pending.request);
      } finally {
        request.id = upstreamId;
      }
    }
    beforeWrite(childId);
    this.#stdin.write(line);
  }

  /**
   * A request of the proxy's own; resolves with its answer, or with an error when the child exits
   * first or `timeoutMs` (if given) passes (a late answer is then ignored).
   */
  public request(method: string, params: unknown, timeoutMs?: number): Promise<JsonRpcMessage> {
    const id = this.#options.nextId();
    return new Promise((resolve) => {
      const timer =
        timeoutMs === undefined
          ? undefined
          : this.#options.clock.setTimer(timeoutMs, () => {
              this.#own.delete(id);
              resolve({
                jsonrpc: '2.0',
                id,
                error: toProxyWireError({ kind: 'child_unavailable', reason: `no answer to ${method}` }),
              });
            });
      this.#own.set(id, (message) => {
        timer?.cancel();
        resolve(message);
      });
      this.write({ jsonrpc: '2.0', id, method, ...(params === undefined ? {} : { params }) } as JsonRpcMessage);
    });
  }

  /** A request of the child to the client: the upstream id it goes out under. */
  public toClientId(childId: JsonRpcId): string {
    const upstreamId = `child-${this.#upstreamIds.next()}`;
    this.#toClient.set(requestIdKey(upstreamId), childId);
    return upstreamId;
  }

  /** The client answered `upstreamId`: the child's own id for it (once), if it was this child's request. */
  public takeClientAnswer(upstreamId: JsonRpcId): JsonRpcId | undefined {
    const key = requestIdKey(upstreamId);
    const childId = this.#toClient.get(key);
    this.#toClient.delete(key);
    return childId;
  }

  #receiveAnswer(answer: ScannedAnswer): void {
    if (this.#own.has(answer.id)) this.#receive(parseAnswer(answer));
    else this.#options.onAnswer(answer);
  }

  #receive(message: JsonRpcMessage, line?: Buffer): void {
    const id = (message as { id?: unknown }).id;
    const own = !('method' in message) && typeof id === 'number' ? this.#own.get(id) : undefined;
    if (own) {
      this.#own.delete(id as number);
      own(message);
      return;
    }
    this.#options.onMessage(message, line);
  }
}
