import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

type RequestId = string | number;

/**
 * The requests the client cancelled (`notifications/cancelled`), told apart from the other reasons
 * a request handler's `signal` aborts (the connection closing, e.g. when the proxy hands the
 * session to a new child): {@link ClientCancellations.signalFor} aborts only for the first.
 *
 * Guarantees: a signal aborts at most once, when a cancellation names its request id while the
 * request is tracked; {@link ClientCancellations.release} forgets the request (a later
 * cancellation of that id is ignored); at most `capacity` requests are tracked (a request never
 * released, e.g. one whose handler threw, is forgotten once newer ones push it out). Pure
 * bookkeeping: no I/O, no timers.
 */
export class ClientCancellations {
  readonly #controllers = new Map<RequestId, AbortController>();
  readonly #watched = new WeakSet<Transport>();

  public constructor(private readonly capacity = 1024) {}

  /** The signal of a request that is being handled (tracked until {@link release}). */
  public signalFor(requestId: RequestId): AbortSignal {
    let controller = this.#controllers.get(requestId);
    if (!controller) {
      controller = new AbortController();
      this.#controllers.set(requestId, controller);
      for (const oldest of this.#controllers.keys()) {
        if (this.#controllers.size <= this.capacity) break;
        this.#controllers.delete(oldest);
      }
    }
    return controller.signal;
  }

  public release(requestId: RequestId): void {
    this.#controllers.delete(requestId);
  }

  /**
   * Observes every message `transport` delivers from now on, once per transport. The transport
   * must be connected already: its `onmessage` is wrapped (the observation comes first).
   */
  public watch(transport: Transport): void {
    if (this.#watched.has(transport)) return;
    this.#watched.add(transport);
    const deliver = transport.onmessage;
    transport.onmessage = (message, extra) => {
      this.observe(message);
      deliver?.(message, extra);
    };
  }

  /** Looks at one incoming message; a cancellation of a tracked request aborts its signal. */
  public observe(message: JSONRPCMessage): void {
    if (!('method' in message) || message.method !== 'notifications/cancelled' || 'id' in message) return;
    const requestId = (message.params as { requestId?: unknown } | undefined)?.requestId;
    if (typeof requestId !== 'string' && typeof requestId !== 'number') return;
    const controller = this.#controllers.get(requestId);
    if (!controller) return;
    this.#controllers.delete(requestId);
    const reason = (message.params as { reason?: unknown }).reason;
    controller.abort(typeof reason === 'string' ? reason : 'cancelled by the client');
  }

  /** How many requests are tracked. */
  public get size(): number {
    return this.#controllers.size;
  }
}
