import process from 'node:process';
import type { Readable, Writable } from 'node:stream';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { Transport, TransportSendOptions } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  ClientRequestSchema,
  ErrorCode,
  type JSONRPCMessage,
  JSONRPCMessageSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { boundClientText, releaseLargeTransientsNow } from '@nteract-mcp/foundation';
import type * as z from 'zod';
import {
  defaultChildInputBufferBytes,
  defaultMaxChildMessageBytes,
  describeMiB,
} from '../../handoff/mcp-message-limits.js';
import {
  type JsonRpcErrorResponse,
  type JsonRpcId,
  JsonRpcLineFramer,
  type JsonRpcMessage,
} from '../../json-rpc/json-rpc-line-framer.js';
import { requestIdKey } from '../../json-rpc/request-id-key.js';
import type { Logger } from '../../ports/logger.js';

/** JSON-RPC "internal error": the code of the answer that replaces one too large to send. */
export const messageTooLargeErrorCode = -32603;

/**
 * A step every outgoing message passes through just before it is written, in the order given:
 * it returns the message to write (the same one, or a replacement such as an error answer for a
 * reply that must not be sent as is). A step that throws makes a reply an internal-error answer.
 */
export type OutgoingMessageFilter = (message: JSONRPCMessage) => JSONRPCMessage;

export interface GuardedStdioTransportOptions {
  /** Default `process.stdin`. */
  readonly stdin?: Readable;
  /** Default `process.stdout`. */
  readonly stdout?: Writable;
  /**
   * Largest accepted input line (bytes); longer ones are answered -32600 and dropped. Default
   * 17 MiB: above the proxy's 16 MiB line cap, so whatever the proxy forwards is read (the SDK's
   * own reader would close the transport past 10 MiB).
   */
  readonly maxLineBytes?: number;
  /**
   * Largest serialized message written (default 10 MiB minus 512 KiB, under the client's 10 MiB
   * read buffer): an answer over it is replaced by a -32603 answer to the same id naming the size
   * and the limit; a request or notification over it is dropped and logged. Applied after the
   * `outgoing` steps: the last resort behind the tools' own result budget.
   */
  readonly maxMessageBytes?: number;
  /** Steps applied to every outgoing message (see {@link OutgoingMessageFilter}). */
  readonly outgoing?: readonly OutgoingMessageFilter[];
  /** Where refused input is logged (never stdout). */
  readonly logger?: Logger;
}

/** The SDK's request schemas by method, to answer bad params before the SDK turns them into -32603. */
const requestSchemas: ReadonlyMap<string, z.ZodType> = new Map(
  ClientRequestSchema.options.map((schema) => [schema.shape.method.value, schema as unknown as z.ZodType]),
);

/** Longest validation detail put into one error message. */
const maxDetailChars = 300;

/**
 * The child's stdio transport: the SDK's {@link StdioServerTransport} for writing and closing,
 * with reading done here so that every request gets exactly one answer.
 *
 * Guarantees:
 * - An unparseable line (not JSON, not UTF-8) is answered -32700 with id `null`; a line that is
 *   JSON but not one JSON-RPC message (a batch, no `jsonrpc: "2.0"`, a bad id, `params` neither
 *   object nor array, …) or over the line cap is answered -32600, with its id when readable.
 * - A request whose `params` is not an object, or whose params fail the SDK's schema for a known
 *   MCP method (e.g. `tools/call` without `params` or without `name`), is answered -32602 with one
 *   line naming the method and the offending fields (never a raw validation dump).
 * - A request the SDK's message schema would still refuse is answered -32600; refused
 *   notifications and responses (which cannot be answered) are dropped and logged.
 * - A `notifications/cancelled` naming no request in flight (not yet received, or answered
 *   already) is dropped: the SDK runs a cancellation after the requests of the same chunk are
 *   registered, so one sent just before its request would otherwise cancel it unanswered.
 * - Outgoing messages pass the {@link OutgoingMessageFilter}s; a reply that cannot be written as
 *   it is (a filter or serialization throws) becomes a -32603 answer to the same id.
 * - Nothing here throws on bad input; the stream goes on with the next line.
 *
 * - Once stdout is gone (it failed under a write, e.g. EPIPE because the proxy died, or closed),
 *   no send waits for it: the write under way and every later one settle at once, dropped, so
 *   `close()` and whoever awaits a send (the era's stream endings at close) finish and the
 *   process can exit. (The SDK's writer would wait for a `drain` that never comes.)
 *
 * Does not guarantee: that a valid request is handled (the server decides), or delivery once
 * stdout is gone.
 */
export class GuardedStdioTransport implements Transport {
  public onclose?: () => void;
  public onerror?: (error: Error) => void;
  public onmessage?: (message: JSONRPCMessage) => void;

  readonly #stdin: Readable;
  readonly #stdout: Writable;
  readonly #inner: StdioServerTransport;
  readonly #framer: JsonRpcLineFramer;
  readonly #outgoing: readonly OutgoingMessageFilter[];
  readonly #maxMessageBytes: number;
  readonly #logger: Logger | undefined;
  /** Ids (by {@link requestIdKey}) of the requests handed to the server and not answered yet. */
  readonly #inFlight = new Set<string>();
  #started = false;
  /** Settles when stdout fails or closes: nothing written after that arrives, so no write waits longer. */
  readonly #outputGone: Promise<void>;
  #markOutputGone: () => void = () => undefined;

  readonly #onData = (chunk: Buffer | string): void => {
    for (const frame of this.#framer.push(chunk)) {
      if (frame.kind === 'error') {
        this.#refuse(frame.response, frame.reason);
        continue;
      }
      try {
        this.#admit(frame.message);
      } catch (error) {
        // Validation itself failed (a message nested thousands of levels deep overflows the
        // stack): refuse that message, never the process.
        const id = (frame.message as { id?: unknown }).id;
        const detail = error instanceof RangeError ? 'it is nested too deeply' : String(error);
        if ('method' in frame.message && (typeof id === 'string' || typeof id === 'number')) {
          this.#refuse(errorResponse(id, ErrorCode.InvalidRequest, `Invalid Request: ${detail}`), 'invalid-request');
        } else {
          this.#logger?.warn('dropped an incoming message that could not be checked', { error: detail });
        }
      }
    }
  };

  readonly #onError = (error: Error): void => {
    this.onerror?.(error);
  };

  /** The reader of our stdout went away (EPIPE): nobody can be answered any more, so the transport is closed. */
  readonly #onOutputError = (error: Error): void => {
    this.#markOutputGone();
    this.#logger?.info('stdout closed under a write; closing the transport', { error: error.message });
    this.onclose?.();
  };

  readonly #onOutputClose = (): void => {
    this.#markOutputGone();
  };

  public constructor(options: GuardedStdioTransportOptions = {}) {
    this.#stdin = options.stdin ?? process.stdin;
    this.#stdout = options.stdout ?? process.stdout;
    // The SDK transport writes (with back-pressure) and closes; it is never started, so it never reads.
    this.#inner = new StdioServerTransport(this.#stdin, this.#stdout);
    this.#inner.onclose = () => this.onclose?.();
    this.#framer = new JsonRpcLineFramer({ maxLineBytes: options.maxLineBytes ?? defaultChildInputBufferBytes });
    this.#outgoing = options.outgoing ?? [];
    this.#maxMessageBytes = options.maxMessageBytes ?? defaultMaxChildMessageBytes;
    this.#logger = options.logger;
    this.#outputGone = new Promise((resolve) => {
      this.#markOutputGone = resolve;
    });
  }

  public async start(): Promise<void> {
    if (this.#started) throw new Error('GuardedStdioTransport already started');
    this.#started = true;
    this.#stdin.on('data', this.#onData);
    this.#stdin.on('error', this.#onError);
    this.#stdout.on('error', this.#onOutputError);
    this.#stdout.on('close', this.#onOutputClose);
  }

  public async close(): Promise<void> {
    this.#stdin.off('data', this.#onData);
    this.#stdin.off('error', this.#onError);
    this.#stdout.off('error', this.#onOutputError);
    this.#stdout.off('close', this.#onOutputClose);
    await this.#inner.close();
  }

  public async send(message: JSONRPCMessage, _options?: TransportSendOptions): Promise<void> {
    const answered = replyId(message);
    if (answered !== undefined) {
      this.#inFlight.delete(requestIdKey(answered));
      // An answer goes out once what handling its request dropped is given back.
      releaseLargeTransientsNow();
    }
    let outgoing = message;
    try {
      for (const filter of this.#outgoing) outgoing = filter(outgoing);
      const bounded = this.#withinSizeLimit(outgoing);
      if (bounded !== undefined) await this.#write(bounded);
    } catch (error) {
      const id = replyId(message);
      const detail = error instanceof Error ? error.message : String(error);
      this.#logger?.error('an outgoing message could not be written', { id, error: detail });
      if (id === undefined) throw error;
      await this.#write({
        jsonrpc: '2.0',
        id,
        error: { code: ErrorCode.InternalError, message: `The reply could not be sent: ${detail}` },
      });
    }
  }

  /** Writes through the SDK's writer (back-pressure included) while stdout is there; else drops. */
  #write(message: JSONRPCMessage): Promise<void> {
    if (this.#stdout.destroyed || this.#stdout.writableEnded) return Promise.resolve();
    return Promise.race([this.#inner.send(message), this.#outputGone]);
  }

  /** `message` when it fits the size limit; else an error answer to its id, or nothing (logged). */
  #withinSizeLimit(message: JSONRPCMessage): JSONRPCMessage | undefined {
    const bytes = Buffer.byteLength(JSON.stringify(message));
    const limit = this.#maxMessageBytes;
    if (bytes <= limit) return message;
    const id = replyId(message);
    if (id === undefined) {
      this.#logger?.warn('dropped a message over the message size limit', {
        method: 'method' in message ? message.method : undefined,
        bytes,
        limit,
      });
      return undefined;
    }
    this.#logger?.warn('replaced an answer over the message size limit by an error', { id, bytes, limit });
    return {
      jsonrpc: '2.0',
      id,
      error: {
        code: messageTooLargeErrorCode,
        message: `The answer is ${bytes} bytes (${describeMiB(bytes)}), over the ${limit}-byte (${describeMiB(limit)}) limit of one MCP message, so it was not sent. Ask for less at once: a window of cells (get_all_cells with start/count), one cell (get_cell), or outputs in pages (get_cell or get_results with offset and length).`,
      },
    };
  }

  /** A message the framer accepted: checked against MCP's rules before the SDK sees it. */
  #admit(message: JsonRpcMessage): void {
    const isRequest = 'method' in message && 'id' in message;
    if (isRequest) {
      const problem = paramsProblem(message as { method: string; params?: unknown });
      if (problem !== undefined) {
        this.#refuse(errorResponse(message.id, ErrorCode.InvalidParams, problem), 'invalid-params');
        return;
      }
    }
    const parsed = JSONRPCMessageSchema.safeParse(message);
    if (!parsed.success) {
      const detail = `Invalid Request: ${describeIssues(parsed.error)}`;
      if (isRequest) this.#refuse(errorResponse(message.id, ErrorCode.InvalidRequest, detail), 'invalid-request');
      else this.#logger?.warn('dropped an incoming message the MCP schema refuses', { error: detail });
      return;
    }
    const admitted = parsed.data;
    if ('method' in admitted && 'id' in admitted) this.#inFlight.add(requestIdKey(admitted.id));
    else if ('method' in admitted && admitted.method === 'notifications/cancelled') {
      const requestId = (admitted.params as { requestId?: unknown } | undefined)?.requestId;
      const key = typeof requestId === 'string' || typeof requestId === 'number' ? requestIdKey(requestId) : undefined;
      if (key === undefined || !this.#inFlight.delete(key)) {
        this.#logger?.debug('dropped a cancellation of no request in flight', {
          requestId: boundClientText(String(requestId)),
        });
        return;
      }
    }
    this.onmessage?.(admitted);
  }

  #refuse(response: JsonRpcErrorResponse, reason: string): void {
    this.#logger?.warn('refused an incoming message', {
      reason,
      id: response.id,
      code: response.error.code,
      error: response.error.message,
    });
    this.#inner.send(response as JSONRPCMessage).catch((error: unknown) => this.onerror?.(error as Error));
  }
}

/** Why a request's params are unusable, as one line, or `undefined`. */
function paramsProblem(request: { readonly method: string; readonly params?: unknown }): string | undefined {
  const { method, params } = request;
  if (params !== undefined && (typeof params !== 'object' || params === null || Array.isArray(params))) {
    return `Invalid params for ${boundClientText(method)}: "params" must be an object (MCP uses named parameters), not ${Array.isArray(params) ? 'an array' : typeof params}`;
  }
  const schema = requestSchemas.get(method);
  if (!schema) return undefined;
  const parsed = schema.safeParse({ method, params });
  return parsed.success ? undefined : `Invalid params for ${boundClientText(method)}: ${describeIssues(parsed.error)}`;
}

function describeIssues(error: z.ZodError): string {
  const text = error.issues
    .map((issue) => {
      const path = issue.path.map(String).join('.');
      return path ? `${path}: ${issue.message}` : issue.message;
    })
    .join('; ')
    .replace(/\s+/g, ' ');
  return text.length > maxDetailChars ? `${text.slice(0, maxDetailChars - 1)}…` : text;
}

function errorResponse(id: JsonRpcId, code: number, message: string): JsonRpcErrorResponse {
  return { jsonrpc: '2.0', id, error: { code, message } };
}

/** The id of a response (result or error), else `undefined`. */
function replyId(message: JSONRPCMessage): string | number | undefined {
  if (!('id' in message) || 'method' in message) return undefined;
  return message.id ?? undefined;
}
