import type { Transport, TransportSendOptions } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

/** One request the client sent, and how many answers came back for it. */
export interface TappedRequest {
  readonly id: string | number;
  readonly method: string;
  /** The tool name of a `tools/call`. */
  readonly tool?: string;
  /** How many responses (result or error) carried this id. Exactly one is the promise. */
  answers: number;
}

/**
 * A transport that records every request the client sends and counts the responses per id, then
 * passes everything through unchanged. The SDK client drops a second answer to the same id
 * silently; this tap sees it.
 */
export class TappedTransport implements Transport {
  public onclose?: () => void;
  public onerror?: (error: Error) => void;
  public onmessage?: (message: JSONRPCMessage) => void;
  readonly #inner: Transport;
  readonly #requests = new Map<string, TappedRequest>();
  /** Responses whose id was never sent by this client. */
  readonly #strays: JSONRPCMessage[] = [];
  /** Every `[nteract] ` line of every tool result, in arrival order. */
  readonly #news: string[] = [];

  public constructor(inner: Transport) {
    this.#inner = inner;
  }

  public get sessionId(): string | undefined {
    return this.#inner.sessionId;
  }

  public async start(): Promise<void> {
    this.#inner.onclose = () => this.onclose?.();
    this.#inner.onerror = (error) => this.onerror?.(error);
    this.#inner.onmessage = (message) => {
      const record = message as { id?: string | number; method?: string };
      if (record.method === undefined && record.id !== undefined) {
        const request = this.#requests.get(JSON.stringify(record.id));
        if (request) request.answers += 1;
        else this.#strays.push(message);
        const content = (message as { result?: { content?: unknown } }).result?.content;
        if (Array.isArray(content)) {
          for (const item of content as { type?: unknown; text?: unknown }[]) {
            if (item.type === 'text' && typeof item.text === 'string' && item.text.startsWith('[nteract] ')) {
              this.#news.push(item.text);
            }
          }
        }
      }
      this.onmessage?.(message);
    };
    await this.#inner.start();
  }

  public async send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    const record = message as { id?: string | number; method?: string; params?: { name?: unknown } };
    if (record.method !== undefined && record.id !== undefined) {
      this.#requests.set(JSON.stringify(record.id), {
        id: record.id,
        method: record.method,
        ...(record.method === 'tools/call' && typeof record.params?.name === 'string'
          ? { tool: record.params.name }
          : {}),
        answers: 0,
      });
    }
    await this.#inner.send(message, options);
  }

  public async close(): Promise<void> {
    await this.#inner.close();
  }

  /** Every request sent so far, in order, with its answer count. */
  public requests(): readonly TappedRequest[] {
    return [...this.#requests.values()];
  }

  /**
   * Every line the server added to a tool result to tell the agent something (`[nteract] …`),
   * whichever call it came with (session_status polls included), in arrival order.
   */
  public news(): readonly string[] {
    return [...this.#news];
  }

  /** Responses to ids this client never used. */
  public strays(): readonly JSONRPCMessage[] {
    return [...this.#strays];
  }
}
