import type { Transport, TransportSendOptions } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage, MessageExtraInfo } from '@modelcontextprotocol/sdk/types.js';
import type { EraConnection } from '../contributions/protocol-admission.js';
import type { ProtocolEraGate } from '../contributions/protocol-era-gate.js';

/**
 * A transport in front of the SDK server that asks the contributed protocol eras (through a
 * {@link ProtocolEraGate}) about every request before the server sees it: the gate's refusals,
 * handshake answers (legacy `initialize`) and probe answers (`server/discover`) are sent from here;
 * served requests go on to the server; every result the server sends is shaped by the opened era
 * (native: `resultType` and serverInfo in `_meta`). Notifications and responses pass unchanged.
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

  public constructor(inner: Transport, gate: ProtocolEraGate, onOpened: (connection: EraConnection) => void) {
    this.#inner = inner;
    this.#gate = gate;
    this.#onOpened = onOpened;
    inner.onclose = () => this.onclose?.();
    inner.onerror = (error) => this.onerror?.(error);
    inner.onmessage = (message, extra) => this.#receive(message, extra);
  }

  public start(): Promise<void> {
    return this.#inner.start();
  }

  public close(): Promise<void> {
    return this.#inner.close();
  }

  public send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    if ('result' in message && !('method' in message)) {
      const result = this.#gate.shapeResult(message.result as Record<string, unknown>);
      return this.#inner.send({ ...message, result } as JSONRPCMessage, options);
    }
    return this.#inner.send(message, options);
  }

  #receive(message: JSONRPCMessage, extra: MessageExtraInfo | undefined): void {
    if (!('method' in message) || !('id' in message)) {
      this.onmessage?.(message, extra);
      return;
    }
    const verdict = this.#gate.receive({ method: message.method, params: message.params });
    if (verdict.kind === 'serve') {
      if (verdict.opened) this.#onOpened(verdict.opened);
      this.onmessage?.(message, extra);
      return;
    }
    const answer: JSONRPCMessage =
      verdict.kind === 'answer'
        ? ({ jsonrpc: '2.0', id: message.id, result: this.#gate.shapeResult(verdict.result) } as JSONRPCMessage)
        : ({ jsonrpc: '2.0', id: message.id, error: verdict.error } as JSONRPCMessage);
    this.#inner.send(answer).catch((error: unknown) => this.onerror?.(error as Error));
    if (verdict.kind === 'answer' && verdict.opened) this.#onOpened(verdict.opened);
  }
}
