import { sniffTopLevelId, sniffTrailingId } from '@nteract-mcp/foundation';

/** Default cap on one newline-delimited JSON-RPC line: 16 MiB. */
export const defaultMaxJsonRpcLineBytes = 16 * 1024 * 1024;

/** The JSON-RPC 2.0 error codes the framer answers with. */
export const jsonRpcParseErrorCode = -32700;
export const jsonRpcInvalidRequestCode = -32600;

/** A request id: JSON-RPC allows strings and numbers (MCP forbids `null` for requests). */
export type JsonRpcId = string | number;

/** `params` of a request or notification: a structured value. */
export type JsonRpcParams = Readonly<Record<string, unknown>> | readonly unknown[];

export interface JsonRpcRequest {
  readonly jsonrpc: '2.0';
  readonly id: JsonRpcId;
  readonly method: string;
  readonly params?: JsonRpcParams;
}

export interface JsonRpcNotification {
  readonly jsonrpc: '2.0';
  readonly method: string;
  readonly params?: JsonRpcParams;
}

export interface JsonRpcResultResponse {
  readonly jsonrpc: '2.0';
  readonly id: JsonRpcId;
  readonly result: unknown;
}

export interface JsonRpcErrorObject {
  readonly code: number;
  readonly message: string;
  readonly data?: unknown;
}

export interface JsonRpcErrorResponse {
  readonly jsonrpc: '2.0';
  /** `null` only when the id of the offending message could not be read. */
  readonly id: JsonRpcId | null;
  readonly error: JsonRpcErrorObject;
}

/** One valid JSON-RPC 2.0 message, exactly as parsed (extra members are kept, not checked). */
export type JsonRpcMessage = JsonRpcRequest | JsonRpcNotification | JsonRpcResultResponse | JsonRpcErrorResponse;

/**
 * Why a line was refused:
 * - `parse-error`: not JSON (or not UTF-8); answered with -32700 and id `null`.
 * - `invalid-request`: JSON, but not a JSON-RPC 2.0 message; -32600 with the id when readable.
 * - `batch`: a JSON array (MCP removed JSON-RPC batching); -32600 with id `null`.
 * - `line-too-long`: the line exceeded the cap; -32600 with the top-level id when it could be
 *   read from the start or the end of the line, else `null`.
 */
export type JsonRpcFramingFailure = 'parse-error' | 'invalid-request' | 'batch' | 'line-too-long';

/** What one complete (or, for an oversized line, abandoned) line turned into. */
export type JsonRpcFrame =
  | {
      readonly kind: 'message';
      readonly message: JsonRpcMessage;
      /** The line's bytes as received, without its `\n`: a relay that changes nothing may pass them on. */
      readonly line: Buffer;
    }
  | { readonly kind: 'error'; readonly reason: JsonRpcFramingFailure; readonly response: JsonRpcErrorResponse };

/** Result of {@link validateJsonRpcMessage}. */
export type JsonRpcValidation =
  | { readonly valid: true; readonly message: JsonRpcMessage }
  | {
      readonly valid: false;
      readonly reason: 'invalid-request' | 'batch';
      readonly id: JsonRpcId | null;
      readonly detail: string;
    };

export interface JsonRpcLineFramerOptions<T = never> {
  /** Largest accepted line in bytes, not counting its `\n` (a `\r` before it counts). Default 16 MiB. */
  readonly maxLineBytes?: number;
  /**
   * Reads each complete line within the cap (its bytes without the `\n`) before the framer parses
   * it: what it returns is delivered in the line's place, `undefined` leaves the line to the
   * framer. For a relay that passes some lines on without building them.
   */
  readonly readLine?: (line: Buffer) => T | undefined;
}

/** How much of an oversized line is looked at to find its top-level `id`. */
const idSniffBytes = 64 * 1024;
const newline = 0x0a;

/**
 * Splits a byte stream of newline-delimited JSON-RPC 2.0 (the MCP stdio transport) into messages,
 * and turns every bad line into the error response to send back, so a malformed peer never
 * stops the stream.
 *
 * Guarantees: lines are delivered in order; `\n` and `\r\n` both end a line; empty and
 * whitespace-only lines are ignored; bytes split anywhere (even inside a UTF-8 character) are
 * reassembled; a line over the cap yields one error and the rest of that line is dropped as it
 * arrives, never held in memory (at most `maxLineBytes` plus the current chunk are buffered, then
 * only the last 64 KiB of the skipped line); the error comes as soon as the cap is passed when the
 * start of the line holds its top-level `id`, else when the line ends, with the `id` read from the
 * end of the line (where the MCP SDK writes the `id` of a response) or `null`; the next line is
 * parsed normally.
 * Does not guarantee: that a `message` makes sense to MCP (method names and params are not
 * checked), or that an error response is welcome (a broken *response* line also gets one).
 * Pure: no I/O.
 */
export class JsonRpcLineFramer<T = never> {
  readonly #maxLineBytes: number;
  readonly #readLine: ((line: Buffer) => T | undefined) | undefined;
  readonly #decoder = new TextDecoder('utf-8', { fatal: true });
  #parts: Buffer[] = [];
  #size = 0;
  /** Set while the rest of an oversized line is skipped: whether it was reported, and its last bytes. */
  #skipping: { reported: boolean; tail: Buffer } | undefined;

  public constructor(options: JsonRpcLineFramerOptions<T> = {}) {
    const max = options.maxLineBytes ?? defaultMaxJsonRpcLineBytes;
    if (!Number.isSafeInteger(max) || max < 1) {
      throw new RangeError(`JsonRpcLineFramer: maxLineBytes must be a positive integer, got ${max}`);
    }
    this.#maxLineBytes = max;
    this.#readLine = options.readLine;
  }

  /** The cap on one line, in bytes. */
  public get maxLineBytes(): number {
    return this.#maxLineBytes;
  }

  /** Bytes of an unfinished line held so far (0 while skipping an oversized line, but for its bounded tail). */
  public get pendingBytes(): number {
    return this.#size;
  }

  /**
   * Feeds the next chunk; returns every frame completed by it (and what `readLine` made of a line
   * in its place), in order. Strings are UTF-8 encoded.
   */
  public push(chunk: Buffer | string): (JsonRpcFrame | T)[] {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
    const frames: (JsonRpcFrame | T)[] = [];
    let start = 0;
    while (start < bytes.length) {
      const end = bytes.indexOf(newline, start);
      const piece = bytes.subarray(start, end === -1 ? bytes.length : end);
      if (this.#skipping) {
        if (!this.#skipping.reported) this.#skipping.tail = keepTail(this.#skipping.tail, piece);
        if (end !== -1) {
          if (!this.#skipping.reported) frames.push(this.#oversized(sniffTail(this.#skipping.tail)));
          this.#skipping = undefined;
        }
      } else if (this.#size + piece.length > this.#maxLineBytes) {
        const headId = sniffTopLevelId(new TextDecoder('utf-8').decode(this.#head(piece)));
        const tail = keepTail(keepTail(Buffer.alloc(0), ...this.#parts), piece);
        this.#reset();
        if (headId !== null) frames.push(this.#oversized(headId));
        if (end === -1) this.#skipping = { reported: headId !== null, tail };
        else if (headId === null) frames.push(this.#oversized(sniffTail(tail)));
      } else if (end === -1) {
        if (piece.length > 0) {
          this.#parts.push(Buffer.from(piece));
          this.#size += piece.length;
        }
      } else {
        const line = this.#size === 0 ? piece : Buffer.concat([...this.#parts, piece]);
        this.#reset();
        const read = this.#readLine?.(line);
        const frame = read === undefined ? this.#parseLine(line) : read;
        if (frame !== undefined) frames.push(frame);
      }
      if (end === -1) break;
      start = end + 1;
    }
    return frames;
  }

  #reset(): void {
    this.#parts = [];
    this.#size = 0;
  }

  /** The first {@link idSniffBytes} of the line held so far followed by `piece`. */
  #head(piece: Buffer): Buffer {
    const head: Buffer[] = [];
    let headBytes = 0;
    for (const part of [...this.#parts, piece]) {
      if (headBytes >= idSniffBytes) break;
      const slice = part.subarray(0, idSniffBytes - headBytes);
      head.push(slice);
      headBytes += slice.length;
    }
    return Buffer.concat(head);
  }

  #oversized(id: JsonRpcId | null): JsonRpcFrame {
    return errorFrame(
      'line-too-long',
      id,
      jsonRpcInvalidRequestCode,
      `Invalid Request: line too long (over the ${this.#maxLineBytes}-byte limit${describeMiB(this.#maxLineBytes)}); the line was dropped`,
    );
  }

  /** One complete line without its `\n`; a `\r` before it is JSON whitespace, so `\r\n` needs no special case. */
  #parseLine(line: Buffer): JsonRpcFrame | undefined {
    let text: string;
    try {
      text = this.#decoder.decode(line);
    } catch {
      return errorFrame('parse-error', null, jsonRpcParseErrorCode, 'Parse error: the line is not valid UTF-8');
    }
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      // A blank line (whitespace only) is no message: it is skipped, not answered.
      if (text.trim().length === 0) return undefined;
      return errorFrame('parse-error', null, jsonRpcParseErrorCode, 'Parse error: the line is not valid JSON');
    }
    const validation = validateJsonRpcMessage(value);
    if (validation.valid) return { kind: 'message', message: validation.message, line };
    return errorFrame(
      validation.reason,
      validation.id,
      jsonRpcInvalidRequestCode,
      `Invalid Request: ${validation.detail}`,
    );
  }
}

/**
 * Checks that a parsed JSON value is one JSON-RPC 2.0 message: an object with `jsonrpc: "2.0"`
 * and either a string `method` (request when it has a string/number `id`, else notification;
 * `params`, when present, an object or array) or a response (`id` plus exactly one of `result`
 * and `error`, where `error` is `{code: integer, message: string}` and only an error may have
 * id `null`). Arrays (batches) are refused. On refusal, `id` is the message's id when it is a
 * string or number, else `null`. Pure.
 */
export function validateJsonRpcMessage(value: unknown): JsonRpcValidation {
  if (Array.isArray(value)) {
    return refuse(
      'batch',
      null,
      'batches (JSON arrays) are not supported: MCP removed JSON-RPC batching; send one message per line',
    );
  }
  if (!isPlainObject(value)) return refuse('invalid-request', null, 'a JSON-RPC message must be a JSON object');
  const id = isJsonRpcId(value.id) ? value.id : null;
  if (value.jsonrpc !== '2.0') return refuse('invalid-request', id, 'the "jsonrpc" member must be exactly "2.0"');
  const hasResult = Object.hasOwn(value, 'result');
  const hasError = Object.hasOwn(value, 'error');
  if (Object.hasOwn(value, 'method')) {
    // Any string names a method, the empty one too (JSON-RPC sets no other rule): an id-less
    // message with `method: ""` is a notification, never answered; with an id, a request that
    // the server answers "Method not found".
    if (typeof value.method !== 'string') return refuse('invalid-request', id, 'the "method" member must be a string');
    if (hasResult || hasError) {
      return refuse('invalid-request', id, 'a request or notification cannot carry "result" or "error"');
    }
    if (Object.hasOwn(value, 'params') && !isPlainObject(value.params) && !Array.isArray(value.params)) {
      return refuse('invalid-request', id, 'the "params" member must be an object or an array');
    }
    if (Object.hasOwn(value, 'id') && !isJsonRpcId(value.id)) {
      return refuse('invalid-request', null, 'the "id" member must be a string or a number');
    }
    return { valid: true, message: value as unknown as JsonRpcMessage };
  }
  if (!hasResult && !hasError) {
    return refuse('invalid-request', id, 'the message has no "method" and no "result" or "error"');
  }
  if (hasResult && hasError) return refuse('invalid-request', id, 'a response cannot carry both "result" and "error"');
  if (!Object.hasOwn(value, 'id')) return refuse('invalid-request', null, 'a response must carry an "id"');
  if (hasError) {
    const error = value.error;
    if (!isPlainObject(error) || !Number.isInteger(error.code) || typeof error.message !== 'string') {
      return refuse('invalid-request', id, 'the "error" member must be an object with an integer code and a message');
    }
    if (value.id !== null && !isJsonRpcId(value.id)) {
      return refuse('invalid-request', null, 'the "id" member must be a string, a number or null');
    }
    return { valid: true, message: value as unknown as JsonRpcMessage };
  }
  if (!isJsonRpcId(value.id)) return refuse('invalid-request', null, 'the "id" member must be a string or a number');
  return { valid: true, message: value as unknown as JsonRpcMessage };
}

/**
 * One message as one transport line: compact JSON plus `\n`. `JSON.stringify` escapes every
 * control character inside strings, so the line never holds a raw newline or carriage return.
 * Throws what `JSON.stringify` throws (cycles, BigInt).
 */
export function serializeJsonRpcLine(message: JsonRpcMessage): string {
  return `${JSON.stringify(message)}\n`;
}

function refuse(reason: 'invalid-request' | 'batch', id: JsonRpcId | null, detail: string): JsonRpcValidation {
  return { valid: false, reason, id, detail };
}

function errorFrame(reason: JsonRpcFramingFailure, id: JsonRpcId | null, code: number, message: string): JsonRpcFrame {
  return { kind: 'error', reason, response: { jsonrpc: '2.0', id, error: { code, message } } };
}

/** `into` followed by `parts`, cut to its last {@link idSniffBytes}. */
function keepTail(into: Buffer, ...parts: Buffer[]): Buffer {
  let tail = into;
  for (const part of parts) {
    const joined = Buffer.concat([tail, part.subarray(Math.max(0, part.length - idSniffBytes))]);
    tail = Buffer.from(joined.subarray(Math.max(0, joined.length - idSniffBytes)));
  }
  return tail;
}

function sniffTail(tail: Buffer): JsonRpcId | null {
  return sniffTrailingId(new TextDecoder('utf-8').decode(tail));
}

function describeMiB(bytes: number): string {
  const mib = bytes / (1024 * 1024);
  return Number.isInteger(mib) ? `, ${mib} MiB` : '';
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isJsonRpcId(value: unknown): value is JsonRpcId {
  return typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value));
}
