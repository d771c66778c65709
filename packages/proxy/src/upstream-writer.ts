import type { Writable } from 'node:stream';
import {
  type JsonRpcId,
  type JsonRpcMessage,
  type Logger,
  serializeJsonRpcLine,
  withPlainErrorMessage,
} from '@nteract-mcp/core';
import type { ScannedAnswer } from './scan-child-answer.js';
import { toProxyWireError } from './to-proxy-wire-error.js';
import { TurnWriter, type WriteTurn } from './turn-writer.js';

/** An answer as the child wrote it: its line's bytes and the id it carries there. */
export interface RelayedLine {
  readonly line: Buffer;
  readonly id: JsonRpcId;
}

export interface UpstreamWriterOptions {
  readonly output: Writable;
  /** Largest line written to the client, in bytes. */
  readonly limit: number;
  readonly logger: Logger;
  /** A result as the client's protocol era sends it. */
  readonly shapeResult: (result: Record<string, unknown>) => Record<string, unknown>;
  /** The span the proxy's reads open: writes in it leave together when it ends. */
  readonly turn?: WriteTurn;
}

/**
 * Writes messages to the client, one JSON-RPC line each. A result goes out shaped by the opened
 * protocol era; an error with its plain message (the `MCP error <code>: ` an MCP SDK's `McpError`
 * writes into its message, as a child's may carry, is taken off: the code is in `code`). A line
 * over the client's limit is never written: a response becomes an error answer (`too_large`) to
 * the same id, anything else is dropped and logged. Nothing is written once the output is no
 * longer writable. The writes of one turn leave together ({@link TurnWriter}).
 *
 * An answer relayed unchanged (the era shapes nothing, the proxy added nothing) goes out as the
 * child's own bytes with only its trailing `"id"` member rewritten, when the line ends with it (as
 * the MCP SDK writes answers); otherwise it is serialized again.
 */
export class UpstreamWriter {
  readonly #options: UpstreamWriterOptions;
  readonly #out: TurnWriter;

  public constructor(options: UpstreamWriterOptions) {
    this.#options = options;
    this.#out = new TurnWriter(options.output, options.turn);
  }

  /** Writes `outgoing`; `relayed` is the child's line it came from when nothing in it was changed. */
  public write(outgoing: JsonRpcMessage, relayed?: RelayedLine): void {
    const { limit, logger, shapeResult } = this.#options;
    if (!this.#out.writable) return;
    const result = (outgoing as { result?: unknown }).result;
    let message = 'error' in outgoing ? withPlainErrorMessage(outgoing) : outgoing;
    if (!('method' in outgoing) && typeof result === 'object' && result !== null && !Array.isArray(result)) {
      const shaped = shapeResult(result as Record<string, unknown>);
      if (shaped !== result) message = { ...outgoing, result: shaped } as JsonRpcMessage;
      else if (relayed !== undefined && 'id' in outgoing && outgoing.id !== null) {
        const line = withTrailingId(relayed.line, relayed.id, outgoing.id);
        if (line !== undefined && line.length <= limit) {
          this.#out.write(line);
          return;
        }
      }
    }
    const line = serializeJsonRpcLine(message);
    const bytes = line.length * 3 <= limit ? line.length : Buffer.byteLength(line);
    if (bytes <= limit) {
      this.#out.write(line);
      return;
    }
    if ('method' in message || !('id' in message) || message.id === null) {
      logger.warn('dropped a message to the client over the size limit', { bytes, limit });
      return;
    }
    this.#tooLarge(message.id, bytes);
  }

  #tooLarge(id: JsonRpcId, bytes: number): void {
    const { limit, logger } = this.#options;
    logger.warn('replaced an answer over the client size limit by an error', { bytes, limit });
    this.#out.write(
      serializeJsonRpcLine({
        jsonrpc: '2.0',
        id,
        error: toProxyWireError({ kind: 'too_large', bytes, limit, stage: 'client' }),
      }),
    );
  }

  /**
   * Writes a child's answer as its own bytes with only its `id` value replaced by `id` (the era
   * sends results as they are, and the proxy changed nothing in it); over the limit, an error
   * answer to `id` instead.
   */
  public writeRelayed(answer: ScannedAnswer, id: JsonRpcId): void {
    if (!this.#out.writable) return;
    const { line, idSpan, end } = answer;
    // A client's id is nearly always a small whole number: its digits are written as bytes. As a
    // string (`String(id)`) it would also stay in V8's number-to-string cache for thousands of
    // calls, long enough to be moved to the old generation, where it waits for a full collection.
    const digits = typeof id === 'number' ? decimalDigits(id) : 0;
    const idText = digits > 0 ? undefined : JSON.stringify(id);
    const idBytes = idText === undefined ? digits : Buffer.byteLength(idText);
    const bytes = idSpan.start + idBytes + (end - idSpan.end);
    if (bytes > this.#options.limit) {
      this.#tooLarge(id, bytes);
      return;
    }
    // The child's line is copied whole in one native step (`Uint8Array.set`, which makes no view
    // of it as `Buffer.copy` does), then written over from its id on.
    const size = bytes + 1;
    const out = Buffer.allocUnsafe(Math.max(size, line.length));
    out.set(line);
    if (idText === undefined) writeDigits(out, idSpan.start, id as number, digits);
    else out.write(idText, idSpan.start, 'utf8');
    // What follows the id: the closing brace, in the layout the scan reads.
    let at = idSpan.start + idBytes;
    for (let i = idSpan.end; i < end; i++) out[at++] = line[i] as number;
    out[at] = 0x0a;
    this.#out.write(out.length === size ? out : out.subarray(0, size));
  }

  /** Sends what is held for this turn now (before the process exits). */
  public flush(): void {
    this.#out.flush();
  }
}

/**
 * `line` (a JSON object) with its last member `"id":<from>` replaced by `"id":<to>`, and a newline;
 * `undefined` when the line does not end with exactly that member. A `"id"` right before the final
 * `}` and after a `,` is a top-level member: the quotes cannot be inside a string there.
 */
function withTrailingId(line: Buffer, from: JsonRpcId, to: JsonRpcId): Buffer | undefined {
  let end = line.length;
  while (end > 0 && (line[end - 1] === 0x20 || line[end - 1] === 0x0d || line[end - 1] === 0x09)) end -= 1;
  const member = `,"id":${JSON.stringify(from)}}`;
  const start = end - member.length;
  if (start < 1 || line.toString('latin1', start, end) !== member) return undefined;
  return Buffer.concat([line.subarray(0, start), Buffer.from(`,"id":${JSON.stringify(to)}}\n`)]);
}

/** How many decimal digits `id` is written with, when it is a whole number from 0 to 2^53 - 1; else 0. */
function decimalDigits(id: number): number {
  if (!Number.isSafeInteger(id) || id < 0) return 0;
  let digits = 1;
  for (let rest = id; rest >= 10; rest = Math.floor(rest / 10)) digits += 1;
  return digits;
}

/** Writes the `digits` decimal digits of the whole number `id` into `out` at `at`. */
function writeDigits(out: Buffer, at: number, id: number, digits: number): void {
  let rest = id;
  for (let i = at + digits - 1; i >= at; i--) {
    out[i] = 0x30 + (rest % 10);
    rest = Math.floor(rest / 10);
  }
}
