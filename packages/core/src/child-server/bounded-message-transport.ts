import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { Transport, TransportSendOptions } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage, MessageExtraInfo } from '@modelcontextprotocol/sdk/types.js';
import {
  defaultChildInputBufferBytes,
  defaultMaxChildMessageBytes,
  describeMiB,
} from '../contract/mcp-message-limits.js';
import type { Logger } from '../ports/logger.js';

/** JSON-RPC "internal error": the code of the answer that replaces one too large to send. */
export const messageTooLargeErrorCode = -32603;

export interface BoundedMessageTransportOptions {
  /** Largest serialized message sent (default 10 MiB minus 512 KiB). */
  readonly maxMessageBytes?: number;
  readonly logger?: Logger;
}

/**
 * Wraps the child's MCP transport so that no message over `maxMessageBytes` is ever written: an
 * answer (result or error) that is too large is replaced by an error answer to the same request
 * id (-32603, naming the size and the limit); a request or notification that is too large is
 * dropped and logged. Everything else passes through unchanged, in order. The last resort behind
 * the tools' own result budget.
 */
export class BoundedMessageTransport implements Transport {
  public onclose?: (() => void) | undefined;
  public onerror?: ((error: Error) => void) | undefined;
  public onmessage?: (<T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void) | undefined;
  readonly #inner: Transport;
  readonly #maxMessageBytes: number;
  readonly #logger: Logger | undefined;

  public constructor(inner: Transport, options: BoundedMessageTransportOptions = {}) {
    this.#inner = inner;
    this.#maxMessageBytes = options.maxMessageBytes ?? defaultMaxChildMessageBytes;
    this.#logger = options.logger;
    inner.onclose = () => this.onclose?.();
    inner.onerror = (error) => this.onerror?.(error);
    inner.onmessage = (message, extra) => this.onmessage?.(message, extra);
  }

  /**
   * The child's transport on this process's stdin/stdout: reads request lines as large as the
   * proxy forwards (17 MiB, not the SDK's 10 MiB, past which it would close), writes none over the limit.
   */
  public static overStdio(options: BoundedMessageTransportOptions = {}): BoundedMessageTransport {
    return new BoundedMessageTransport(
      new StdioServerTransport(process.stdin, process.stdout, { maxBufferSize: defaultChildInputBufferBytes }),
      options,
    );
  }

  public get sessionId(): string | undefined {
    return this.#inner.sessionId;
  }

  public setProtocolVersion(version: string): void {
    this.#inner.setProtocolVersion?.(version);
  }

  public start(): Promise<void> {
    return this.#inner.start();
  }

  public close(): Promise<void> {
    return this.#inner.close();
  }

  public send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    const bytes = serializedBytes(message);
    if (bytes <= this.#maxMessageBytes) return this.#inner.send(message, options);
    const limit = this.#maxMessageBytes;
    if ('id' in message && !('method' in message)) {
      this.#logger?.warn('replaced an answer over the message size limit by an error', {
        id: message.id,
        bytes,
        limit,
      });
      return this.#inner.send(
        {
          jsonrpc: '2.0',
          id: message.id,
          error: {
            code: messageTooLargeErrorCode,
            message: `The answer is ${bytes} bytes (${describeMiB(bytes)}), over the ${limit}-byte (${describeMiB(limit)}) limit of one MCP message, so it was not sent. Ask for less at once: a window of cells (get_all_cells with start/count), one cell (get_cell), or outputs without full_output.`,
          },
        },
        options,
      );
    }
    this.#logger?.warn('dropped a message over the message size limit', {
      method: 'method' in message ? message.method : undefined,
      bytes,
      limit,
    });
    return Promise.resolve();
  }
}

/** UTF-8 bytes of the message as a transport writes it (without the newline). */
function serializedBytes(message: JSONRPCMessage): number {
  try {
    return Buffer.byteLength(JSON.stringify(message));
  } catch {
    return Number.POSITIVE_INFINITY;
  }
}
