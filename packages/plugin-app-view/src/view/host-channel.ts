/** A JSON-RPC message between the view and its host (postMessage). */
interface RpcMessage {
  readonly jsonrpc: '2.0';
  readonly id?: number | string;
  readonly method?: string;
  readonly params?: Record<string, unknown>;
  readonly result?: unknown;
  readonly error?: { readonly code: number; readonly message: string };
}

type NotificationHandler = (params: Record<string, unknown>) => void;

/**
 * The view's side of the MCP Apps channel: JSON-RPC 2.0 over `postMessage` with the window that
 * embeds it. Requests get an answer or an error; the host's notifications go to their handlers;
 * the host's requests the view serves (`ping`, `ui/resource-teardown`) are answered empty.
 */
export class HostChannel {
  readonly #pending = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
  readonly #handlers = new Map<string, NotificationHandler>();
  readonly #host: Window;
  #nextId = 1;

  public constructor(host: Window) {
    this.#host = host;
    window.addEventListener('message', (event) => {
      if (event.source !== this.#host) return;
      this.#receive(event.data as RpcMessage);
    });
  }

  public on(method: string, handler: NotificationHandler): void {
    this.#handlers.set(method, handler);
  }

  public request(method: string, params: Record<string, unknown>): Promise<unknown> {
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      this.#post({ jsonrpc: '2.0', id, method, params });
    });
  }

  public notify(method: string, params: Record<string, unknown> = {}): void {
    this.#post({ jsonrpc: '2.0', method, params });
  }

  #post(message: RpcMessage): void {
    this.#host.postMessage(message, '*');
  }

  #receive(message: RpcMessage): void {
    if (typeof message !== 'object' || message === null || message.jsonrpc !== '2.0') return;
    if (message.method === undefined && typeof message.id === 'number') {
      const pending = this.#pending.get(message.id);
      if (pending === undefined) return;
      this.#pending.delete(message.id);
      if (message.error) pending.reject(new Error(message.error.message));
      else pending.resolve(message.result);
      return;
    }
    if (message.method === undefined) return;
    if (message.id !== undefined) {
      // A request of the host's: the view has nothing to do before a ping or a teardown.
      this.#post({ jsonrpc: '2.0', id: message.id, result: {} });
      return;
    }
    this.#handlers.get(message.method)?.(message.params ?? {});
  }
}
