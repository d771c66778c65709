import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { sessionRefusedText } from './page-session.js';
import { type ConnectionState, RoomStream, type StreamFrame } from './room-stream.js';

/** This origin's storage, as `localStorage` (the page's session is kept there). */
class FakeStorage {
  readonly #items = new Map<string, string>();
  public getItem(key: string): string | null {
    return this.#items.get(key) ?? null;
  }
  public setItem(key: string, value: string): void {
    this.#items.set(key, value);
  }
}

/** An answer whose body is `chunks` (server-sent event text), ending after them unless `open`. */
function eventStream(chunks: readonly string[], open = false): Response {
  const encoder = new TextEncoder();
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(encoder.encode(chunk));
      if (!open) controller.close();
    },
  });
  return new Response(body, { status: 200, headers: { 'Content-Type': 'text/event-stream' } });
}

const hello = (version: number) =>
  `event: hello\ndata: ${JSON.stringify({ peer_id: 'p1', label: 'human:Ada', document_version: version })}\n\n`;

/** A stream of the room with every call to its handlers logged, and the requests it made. */
function follow(answers: (() => Response | Promise<Response>)[]) {
  const log: string[] = [];
  const frames: StreamFrame[] = [];
  const requests: { url: string; init: RequestInit }[] = [];
  vi.stubGlobal(
    'fetch',
    vi.fn(async (url: string, init: RequestInit) => {
      requests.push({ url, init });
      const next = answers.shift();
      if (!next) return new Promise<Response>(() => undefined);
      return next();
    }),
  );
  const stream = new RoomStream(
    '/api/notebooks/n/events',
    { name: 'Ada' },
    {
      onHello: (peer) => log.push(`hello ${peer.peer_id}@${peer.document_version}`),
      onReopen: () => log.push('reopen'),
      onFrame: (frame) => {
        frames.push(frame);
        log.push(`frame ${frame.event}`);
      },
      onState: (state: ConnectionState) => log.push(state),
      onRefused: (message) => log.push(`refused: ${message}`),
    },
  );
  return { stream, log, frames, requests };
}

let storage: FakeStorage;

beforeEach(() => {
  vi.useFakeTimers();
  storage = new FakeStorage();
  storage.setItem('runtimed-session', 'token-1');
  vi.stubGlobal('localStorage', storage);
});

afterEach(() => {
  vi.useRealTimers();
  vi.unstubAllGlobals();
});

describe(RoomStream, () => {
  it('posts its join with the page’s session, and reads hello then broadcasts in order', async () => {
    const broadcast = (event: string, extra = '') => `data: {"type":"broadcast","event":"${event}"${extra}}\n\n`;
    const f = follow([
      () => eventStream([hello(7), ': keep-alive\n\n', broadcast('cell_updated'), broadcast('presence')], true),
    ]);
    f.stream.open();
    await vi.advanceTimersByTimeAsync(0);
    expect(f.log).toEqual(['live', 'hello p1@7', 'frame cell_updated', 'frame presence']);
    const [request] = f.requests;
    expect(request?.url).toBe('/api/notebooks/n/events');
    expect(request?.init.method).toBe('POST');
    expect(request?.init.body).toBe('{"name":"Ada"}');
    expect(new Headers(request?.init.headers).get('Authorization')).toBe('Bearer token-1');
  });

  it('puts an event together from chunks cut anywhere, and from several data lines', async () => {
    const text = `${hello(1)}data: {"type":"broadcast",\ndata: "event":"output_set","text":"a\\n\\nb"}\n\n`;
    const chunks = [text.slice(0, 5), text.slice(5, 40), text.slice(40, 41), text.slice(41, 90), text.slice(90)];
    const f = follow([() => eventStream(chunks, true)]);
    f.stream.open();
    await vi.advanceTimersByTimeAsync(0);
    expect(f.log).toEqual(['live', 'hello p1@1', 'frame output_set']);
    expect(f.frames[0]).toEqual({ type: 'broadcast', event: 'output_set', text: 'a\n\nb' });
  });

  it('reads the same events wherever one chunk ends and the next begins, between the two newlines too', async () => {
    const text = `${hello(1)}data: {"type":"broadcast","event":"cell_moved"}\n\n`;
    for (let cut = 1; cut < text.length; cut++) {
      const f = follow([() => eventStream([text.slice(0, cut), text.slice(cut)], true)]);
      f.stream.open();
      await vi.advanceTimersByTimeAsync(0);
      expect(f.log, `cut at ${cut}`).toEqual(['live', 'hello p1@1', 'frame cell_moved']);
    }
  });

  it('opens again after the stream ends, waiting 500 ms doubling to 5 s while it fails, and says it reopened', async () => {
    const failed = () => Promise.reject(new TypeError('fetch failed'));
    const f = follow([
      () => eventStream([hello(1)]),
      failed,
      failed,
      failed,
      failed,
      failed,
      () => eventStream([hello(2)], true),
    ]);
    f.stream.open();
    await vi.advanceTimersByTimeAsync(0);
    expect(f.log).toEqual(['live', 'hello p1@1', 'reconnecting']);
    // The waits before each attempt: 500, 1000, 2000, 4000, 5000, 5000 ms.
    for (const wait of [500, 1000, 2000, 4000, 5000]) {
      const attempts = f.requests.length;
      await vi.advanceTimersByTimeAsync(wait - 1);
      expect(f.requests).toHaveLength(attempts);
      await vi.advanceTimersByTimeAsync(1);
      expect(f.requests).toHaveLength(attempts + 1);
    }
    await vi.advanceTimersByTimeAsync(5000);
    expect(f.requests).toHaveLength(7);
    expect(f.log.slice(-3)).toEqual(['live', 'reopen', 'hello p1@2']);
  });

  it('waits 500 ms again once a stream opened', async () => {
    const failed = () => Promise.reject(new TypeError('fetch failed'));
    const f = follow([failed, failed, () => eventStream([hello(1)]), () => eventStream([hello(2)], true)]);
    f.stream.open();
    await vi.advanceTimersByTimeAsync(500 + 1000);
    expect(f.requests).toHaveLength(3);
    // That stream ended at once: the next attempt comes 500 ms later, not 2 s.
    await vi.advanceTimersByTimeAsync(500);
    expect(f.requests).toHaveLength(4);
  });

  it('stays closed when the daemon refuses the session, or the join itself', async () => {
    const refused = follow([() => new Response('no', { status: 401 })]);
    refused.stream.open();
    await vi.advanceTimersByTimeAsync(10_000);
    expect(refused.log).toEqual([`refused: ${sessionRefusedText}`]);
    expect(refused.requests).toHaveLength(1);

    const badJoin = follow([() => new Response('unknown name', { status: 400 })]);
    badJoin.stream.open();
    await vi.advanceTimersByTimeAsync(10_000);
    expect(badJoin.log).toEqual(['refused: The page cannot join: unknown name']);
    expect(badJoin.requests).toHaveLength(1);
  });

  it('asks nothing of the daemon without a session', async () => {
    vi.stubGlobal('localStorage', new FakeStorage());
    const f = follow([() => eventStream([hello(1)])]);
    f.stream.open();
    await vi.advanceTimersByTimeAsync(10_000);
    expect(f.requests).toHaveLength(0);
    expect(f.log).toEqual([`refused: ${sessionRefusedText}`]);
  });

  it('tries again after a server error', async () => {
    const f = follow([() => new Response('busy', { status: 503 }), () => eventStream([hello(3)], true)]);
    f.stream.open();
    await vi.advanceTimersByTimeAsync(0);
    expect(f.log).toEqual(['reconnecting']);
    await vi.advanceTimersByTimeAsync(500);
    // The first stream that opened is no reopen: nothing was shown before it.
    expect(f.log).toEqual(['reconnecting', 'live', 'hello p1@3']);
  });
});
