/** The connection to the room as the page shows it. */
export type ConnectionState = 'connecting' | 'live' | 'reconnecting';

/** One message of the stream: a room broadcast (`type: 'broadcast'`, the event's fields beside it). */
export type StreamFrame = { readonly type: string; readonly event?: string } & Readonly<Record<string, unknown>>;

export interface RoomStreamHandlers {
  /**
   * The stream's first event: the page's own peer of the room (new on every connection), and the
   * document's version when it joined (every later change comes on the stream).
   */
  readonly onHello: (peer: {
    readonly peer_id: string;
    readonly label: string;
    readonly document_version: number;
  }) => void;
  /** The stream opened again after it was cut: what happened meanwhile is not known, read the notebook again. */
  readonly onReopen: () => void;
  /** A broadcast of the room, in the order the room sent them. */
  readonly onFrame: (frame: StreamFrame) => void;
  readonly onState: (state: ConnectionState) => void;
}

/** The longest wait between two attempts to open the stream again after the server refused it. */
const maxRetryMs = 5000;

/**
 * The room's event stream (server-sent events). The browser reconnects an interrupted stream by
 * itself; one the server refused (the daemon restarting, the room not open yet) is opened again
 * here, waiting 500 ms doubling to 5 s.
 */
export class RoomStream {
  #source: EventSource | undefined;
  #retryMs = 500;
  #opened = false;

  public constructor(
    private readonly url: string,
    private readonly handlers: RoomStreamHandlers,
  ) {}

  public open(): void {
    const source = new EventSource(this.url);
    this.#source = source;
    source.addEventListener('hello', (event) => {
      this.handlers.onHello(JSON.parse((event as MessageEvent<string>).data));
    });
    source.onopen = () => {
      this.#retryMs = 500;
      this.handlers.onState('live');
      if (this.#opened) this.handlers.onReopen();
      this.#opened = true;
    };
    source.onmessage = (event: MessageEvent<string>) => this.handlers.onFrame(JSON.parse(event.data));
    source.onerror = () => {
      this.handlers.onState('reconnecting');
      if (source.readyState !== EventSource.CLOSED) return;
      const wait = this.#retryMs;
      this.#retryMs = Math.min(maxRetryMs, this.#retryMs * 2);
      setTimeout(() => {
        if (this.#source === source) this.open();
      }, wait);
    };
  }
}
