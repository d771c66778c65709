import { SessionRefusedError, sessionFetch } from './page-session.js';

/** The connection to the room as the page shows it (`closed`: the daemon refused the page's session). */
export type ConnectionState = 'connecting' | 'live' | 'reconnecting' | 'closed';

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
  /** The daemon refused the page's session (none, or the token was rotated): the stream stays closed. */
  readonly onRefused: (message: string) => void;
}

/** The longest wait between two attempts to open the stream again. */
const maxRetryMs = 5000;

/**
 * The room's event stream: server-sent events on the answer to a POST made with the page's session
 * (`EventSource` can send neither a POST nor a header). A stream that ends or fails is opened
 * again, waiting 500 ms doubling to 5 s; one the daemon refuses for the session is not (the
 * person must open the page again: `onRefused`).
 */
export class RoomStream {
  #retryMs = 500;
  #opened = false;

  public constructor(
    private readonly url: string,
    private readonly body: unknown,
    private readonly handlers: RoomStreamHandlers,
  ) {}

  public open(): void {
    void this.follow().then(
      () => this.again(),
      (error: unknown) => {
        if (error instanceof SessionRefusedError) this.handlers.onRefused(error.message);
        else this.again();
      },
    );
  }

  private again(): void {
    this.handlers.onState('reconnecting');
    const wait = this.#retryMs;
    this.#retryMs = Math.min(maxRetryMs, this.#retryMs * 2);
    setTimeout(() => this.open(), wait);
  }

  /** Reads one stream to its end: resolves when it ends, rejects when it could not open. */
  private async follow(): Promise<void> {
    const answer = await sessionFetch(this.url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'text/event-stream' },
      body: JSON.stringify(this.body),
    });
    // A request the daemon refuses as such (a name it does not take) is refused again every time.
    if (answer.status === 400) throw new SessionRefusedError(`The page cannot join: ${await answer.text()}`);
    if (!answer.ok || answer.body === null) throw new Error(`HTTP ${answer.status}`);
    this.#retryMs = 500;
    this.handlers.onState('live');
    if (this.#opened) this.handlers.onReopen();
    this.#opened = true;
    const reader = answer.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffered = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      // Only the new text (and the newline before it) can end an event: a large event coming in
      // many chunks is searched once, not again at every chunk.
      const searchFrom = Math.max(0, buffered.length - 1);
      buffered += value;
      let start = 0;
      let end = buffered.indexOf('\n\n', searchFrom);
      while (end !== -1) {
        this.dispatch(buffered.slice(start, end));
        start = end + 2;
        end = buffered.indexOf('\n\n', start);
      }
      if (start > 0) buffered = buffered.slice(start);
    }
  }

  /** One event of the stream (`event:` and `data:` lines; `:` lines are comments). */
  private dispatch(block: string): void {
    let event = 'message';
    const data: string[] = [];
    for (const line of block.split('\n')) {
      if (line.startsWith('event:')) event = line.slice(6).trim();
      else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
    }
    if (data.length === 0) return;
    const parsed = JSON.parse(data.join('\n'));
    if (event === 'hello') this.handlers.onHello(parsed);
    else this.handlers.onFrame(parsed);
  }
}
