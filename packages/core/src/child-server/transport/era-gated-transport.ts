import type { Transport, TransportSendOptions } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage, MessageExtraInfo } from '@modelcontextprotocol/sdk/types.js';
import type { AdmissionRequest, EraConnection } from '../../contributions/protocol-admission.js';
import type { ProtocolEraGate } from '../../contributions/protocol-era-gate.js';
import { withPlainErrorMessage } from '../../json-rpc/plain-error-message.js';
import { requestIdKey } from '../../json-rpc/request-id-key.js';

/** Who wants to know which notification streams the client holds open (to watch what they name). */
export interface NotificationStreamObserver {
  /** The stream of request `id` opened (acknowledged) with `request`. */
  opened(id: string | number, request: AdmissionRequest): void;
  /** The client cancelled the stream of request `id`. */
  closed(id: string | number): void;
}

/**
 * A transport in front of the SDK server that asks the contributed protocol eras (through a
 * {@link ProtocolEraGate}) about every request before the server sees it: the gate's refusals,
 * handshake answers (legacy `initialize`) and probe answers (`server/discover`) are sent from here;
 * served requests go on to the server; every result the server sends is shaped by the opened era
 * (native: `resultType` and serverInfo in `_meta`). A request the era holds as a notification
 * stream (native: `subscriptions/listen`) is opened here and never reaches the server; the
 * client's cancellation of it ends the stream. Every notification the server sends goes out as
 * the era delivers it (native: list changes only on the streams that asked for them, log messages
 * only for a request that asked for the level), judged against the request it belongs to. Every
 * error the server sends goes out with its plain message: the `MCP error <code>: ` the SDK's
 * `McpError` writes into its message is taken off (the code is in `code`).
 * Client notifications and responses pass unchanged. An optional {@link NotificationStreamObserver}
 * is told of every stream opened and cancelled (the server watches the resources they name).
 *
 * Guarantees: a request is either answered here or handed on, never both; the SDK never sees an
 * `initialize`, so the era alone negotiates. Does not guarantee anything the inner transport does not.
 */
export class EraGatedTransport implements Transport {
  public onclose?: () => void;
  public onerror?: (error: Error) => void;
  public onmessage?: (message: JSONRPCMessage, extra?: MessageExtraInfo) => void;

  readonly #inner: Transport;
  readonly #gate: ProtocolEraGate;
  readonly #onOpened: (connection: EraConnection) => void;
  readonly #streams: NotificationStreamObserver | undefined;
  /** Requests handed to the server and not answered yet, by id (what a notification may belong to). */
  readonly #served = new Map<string, AdmissionRequest>();

  public constructor(
    inner: Transport,
    gate: ProtocolEraGate,
    onOpened: (connection: EraConnection) => void,
    streams?: NotificationStreamObserver,
  ) {
    this.#inner = inner;
    this.#gate = gate;
    this.#onOpened = onOpened;
    this.#streams = streams;
    inner.onclose = () => this.onclose?.();
    inner.onerror = (error) => this.onerror?.(error);
    inner.onmessage = (message, extra) => this.#receive(message, extra);
  }

  /**
   * The request `id` as the client sent it (params the SDK's schemas would strip included, e.g.
   * a 2026-07-28 retry's `inputResponses`), while it is being served.
   */
  public served(id: string | number): AdmissionRequest | undefined {
    return this.#served.get(requestIdKey(id));
  }

  public start(): Promise<void> {
    return this.#inner.start();
  }

  public async close(): Promise<void> {
    for (const ending of this.#gate.endStreams()) {
      const result = this.#gate.shapeResult(ending.result);
      await this.#inner.send({ jsonrpc: '2.0', id: ending.id, result } as JSONRPCMessage).catch(() => undefined);
    }
    return this.#inner.close();
  }

  public async send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    if (!('method' in message)) {
      const id = (message as { id?: unknown }).id;
      if (typeof id === 'string' || typeof id === 'number') this.#served.delete(requestIdKey(id));
      // The one place the server's errors leave: the SDK writes an `McpError`'s message, prefix and all.
      if (!('result' in message)) return this.#inner.send(withPlainErrorMessage(message), options);
      const result = this.#gate.shapeResult(message.result as Record<string, unknown>);
      return this.#inner.send({ ...message, result } as JSONRPCMessage, options);
    }
    if ('id' in message) return this.#inner.send(message, options);
    const related =
      options?.relatedRequestId === undefined ? undefined : this.#served.get(requestIdKey(options.relatedRequestId));
    const params = message.params as Record<string, unknown> | undefined;
    for (const notification of this.#gate.deliver(
      { method: message.method, ...(params === undefined ? {} : { params }) },
      related ? [related] : [],
    )) {
      await this.#inner.send({ jsonrpc: '2.0', ...notification } as JSONRPCMessage, options);
    }
  }

  #receive(message: JSONRPCMessage, extra: MessageExtraInfo | undefined): void {
    if (!('method' in message) || !('id' in message)) {
      if ('method' in message && message.method === 'notifications/cancelled') {
        const requestId = (message.params as { requestId?: unknown } | undefined)?.requestId;
        if (typeof requestId === 'string' || typeof requestId === 'number') {
          // The end of a stream the era holds: the server never saw its request.
          if (this.#gate.cancelled(requestId)) {
            this.#streams?.closed(requestId);
            return;
          }
          this.#served.delete(requestIdKey(requestId));
        }
      }
      this.onmessage?.(message, extra);
      return;
    }
    const request: AdmissionRequest = { method: message.method, params: message.params };
    const verdict = this.#gate.receive(request);
    if (verdict.kind === 'serve') {
      if (verdict.opened) this.#onOpened(verdict.opened);
      this.#served.set(requestIdKey(message.id), request);
      this.onmessage?.(message, extra);
      return;
    }
    if (verdict.kind === 'listen') {
      if (verdict.opened) this.#onOpened(verdict.opened);
      this.#openStream(message.id, request);
      return;
    }
    const answer: JSONRPCMessage =
      verdict.kind === 'answer'
        ? ({ jsonrpc: '2.0', id: message.id, result: this.#gate.shapeResult(verdict.result) } as JSONRPCMessage)
        : ({ jsonrpc: '2.0', id: message.id, error: verdict.error } as JSONRPCMessage);
    this.#inner.send(answer).catch((error: unknown) => this.onerror?.(error as Error));
    if (verdict.kind === 'answer' && verdict.opened) this.#onOpened(verdict.opened);
  }

  /** Opens the stream request `id` asked for: its first notifications, or its refusal. */
  #openStream(id: string | number, request: AdmissionRequest): void {
    const opened = this.#gate.listen(id, request);
    const messages: JSONRPCMessage[] =
      'error' in opened
        ? [{ jsonrpc: '2.0', id, error: opened.error } as JSONRPCMessage]
        : opened.notifications.map((notification) => ({ jsonrpc: '2.0', ...notification }) as JSONRPCMessage);
    void (async () => {
      for (const message of messages) await this.#inner.send(message);
    })().catch((error: unknown) => this.onerror?.(error as Error));
    // After the acknowledgement was handed to the transport: nothing goes on a stream before it.
    if (!('error' in opened)) this.#streams?.opened(id, request);
  }
}
