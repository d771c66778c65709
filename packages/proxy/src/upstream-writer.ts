import type { Writable } from 'node:stream';
import { type JsonRpcMessage, type Logger, serializeJsonRpcLine } from '@nteract-mcp/core';
import { toProxyWireError } from './to-proxy-wire-error.js';

export interface UpstreamWriterOptions {
  readonly output: Writable;
  /** Largest line written to the client, in bytes. */
  readonly limit: number;
  readonly logger: Logger;
  /** A result as the client's protocol era sends it. */
  readonly shapeResult: (result: Record<string, unknown>) => Record<string, unknown>;
}

/**
 * Writes messages to the client, one JSON-RPC line each. A result goes out shaped by the opened
 * protocol era. A line over the client's limit is never written: a response becomes an error
 * answer (`too_large`) to the same id, anything else is dropped and logged. Nothing is written
 * once the output is no longer writable.
 */
export class UpstreamWriter {
  readonly #options: UpstreamWriterOptions;

  public constructor(options: UpstreamWriterOptions) {
    this.#options = options;
  }

  public write(outgoing: JsonRpcMessage): void {
    const { output, limit, logger, shapeResult } = this.#options;
    if (!output.writable) return;
    const result = (outgoing as { result?: unknown }).result;
    const message =
      !('method' in outgoing) && typeof result === 'object' && result !== null && !Array.isArray(result)
        ? ({ ...outgoing, result: shapeResult(result as Record<string, unknown>) } as JsonRpcMessage)
        : outgoing;
    const line = serializeJsonRpcLine(message);
    const bytes = line.length * 3 <= limit ? line.length : Buffer.byteLength(line);
    if (bytes <= limit) {
      output.write(line);
      return;
    }
    if ('method' in message || !('id' in message) || message.id === null) {
      logger.warn('dropped a message to the client over the size limit', { bytes, limit });
      return;
    }
    logger.warn('replaced an answer over the client size limit by an error', { bytes, limit });
    output.write(
      serializeJsonRpcLine({
        jsonrpc: '2.0',
        id: message.id,
        error: toProxyWireError({ kind: 'too_large', bytes, limit, stage: 'client' }),
      }),
    );
  }
}
