import { Text } from '@codemirror/state';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { mergeSource } from './merge-source.js';
import { type RoomSource, type SourceSendOutcome, SourceSync, type SourceSyncState } from './source-sync.js';

/**
 * A room as the daemon keeps a cell: one text and its version; a write names the version it was
 * written over (refused `stale` otherwise, nothing changed) and an idempotency key (a resend of an
 * applied write gets the same answer). Each change is told to every page in the room's order: the
 * writer's at once (the page applies its answer as an event), the others' when {@link deliver} is called.
 */
class FakeRoom {
  public text: string;
  public version = 1;
  public writes = 0;
  /** While true, a write gets no answer (the daemon is down): `lostAnswers` says whether it was applied all the same. */
  public down = false;
  public lostAnswers = false;
  public refuseWith: string | undefined;
  /** Holds answers back (applied already) until it resolves. */
  public answerGate: Promise<void> | undefined;
  readonly #answers = new Map<string, SourceSendOutcome>();
  readonly #pages: FakePage[] = [];
  readonly #queue: { page: FakePage; room: RoomSource }[] = [];

  public constructor(text: string) {
    this.text = text;
  }

  public get source(): RoomSource {
    return { text: this.text, version: `v${this.version}` };
  }

  public join(page: FakePage): void {
    this.#pages.push(page);
  }

  /** Another peer (an agent) writes the whole text. */
  public agentWrites(text: string): void {
    this.apply(text, undefined);
  }

  public async write(
    writer: FakePage,
    text: string,
    expected: string | undefined,
    key: string,
  ): Promise<SourceSendOutcome> {
    await Promise.resolve();
    if (this.down && !this.lostAnswers) return { kind: 'unknown', message: 'fetch failed' };
    let outcome = this.#answers.get(key);
    if (!outcome) {
      if (this.refuseWith !== undefined) outcome = { kind: 'refused', message: this.refuseWith };
      else if (expected !== `v${this.version}`) outcome = { kind: 'stale' };
      else {
        this.apply(text, writer);
        outcome = { kind: 'applied', version: `v${this.version}` };
      }
      this.#answers.set(key, outcome);
    }
    if (this.down) return { kind: 'unknown', message: 'the answer was lost' };
    if (this.answerGate) await this.answerGate;
    return outcome;
  }

  /** Tells the pages the changes so far (in order). */
  public deliver(): void {
    for (const { page, room } of this.#queue.splice(0)) page.sync.roomChanged(room);
  }

  private apply(text: string, writer: FakePage | undefined): void {
    this.text = text;
    this.version += 1;
    this.writes += 1;
    const room = this.source;
    for (const page of this.#pages) {
      if (page === writer) page.sync.roomChanged(room);
      else this.#queue.push({ page, room });
    }
  }
}

/** A person's page: the editor's text, merged as the page's editor merges. */
class FakePage {
  public text: string;
  public readonly states: [SourceSyncState, string | undefined][] = [];
  public readonly sync: SourceSync;

  public constructor(room: FakeRoom) {
    this.text = room.text;
    this.sync = new SourceSync(room.source, {
      localText: () => this.text,
      merge: (base, remote) => {
        this.text = mergeSource(base, this.text, remote.text)
          .changes.apply(Text.of(this.text.split('\n')))
          .toString();
      },
      send: (text, expected, key) => room.write(this, text, expected, key),
      stateChanged: (state, message) => this.states.push([state, message]),
    });
    room.join(this);
  }

  /** Types `text` at `at` (the end by default). */
  public type(text: string, at = this.text.length): void {
    this.text = this.text.slice(0, at) + text + this.text.slice(at);
    this.sync.edited();
  }
}

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

/** Runs timers and the answers they start until nothing is left to do. */
async function settle(room: FakeRoom): Promise<void> {
  for (let round = 0; round < 50; round++) {
    room.deliver();
    await vi.runAllTimersAsync();
    room.deliver();
    if (vi.getTimerCount() === 0) return;
  }
}

/** `flush()` of `page`, the timers run while it waits. */
async function flushed(page: FakePage): Promise<boolean> {
  const saved = page.sync.flush();
  await vi.advanceTimersByTimeAsync(0);
  return saved;
}

describe('SourceSync', () => {
  it('sends nothing for a visit that changed nothing, and the room’s change shows at once', async () => {
    const room = new FakeRoom('c = 1');
    const page = new FakePage(room);
    expect(await page.sync.flush()).toBe(true);
    room.agentWrites('c = 999');
    room.deliver();
    expect(page.text).toBe('c = 999');
    await settle(room);
    expect(room.writes).toBe(1);
    expect(page.sync.pending).toBe(false);
  });

  it('merges the agent’s write into the text the person is typing, and the room ends with both', async () => {
    const room = new FakeRoom('a = 1\nb = 2');
    const page = new FakePage(room);
    page.type('0', 5);
    // The agent's write lands before the person's text was sent: her send is refused as stale, merged, sent again.
    room.agentWrites('a = 1\nb = 200');
    await vi.advanceTimersByTimeAsync(300);
    room.deliver();
    await settle(room);
    expect(room.text).toBe('a = 10\nb = 200');
    expect(page.text).toBe(room.text);
    expect(page.states.at(-1)?.[0]).toBe('saved');
  });

  it('merges a change the room made after the person’s send, which came while it was on its way', async () => {
    const room = new FakeRoom('x');
    const page = new FakePage(room);
    page.type('y');
    let release: () => void = () => undefined;
    room.answerGate = new Promise((resolve) => {
      release = resolve;
    });
    const saved = page.sync.flush();
    await vi.advanceTimersByTimeAsync(0);
    // The person's write is in the room, its answer on its way; the agent's change comes meanwhile.
    expect(room.text).toBe('xy');
    room.agentWrites('zxy');
    room.deliver();
    expect(page.text).toBe('xy');
    release();
    expect(await saved).toBe(true);
    await settle(room);
    expect(room.text).toBe('zxy');
    expect(page.text).toBe('zxy');
  });

  it('two people typing in one cell at once both keep their work, and every copy ends the same', async () => {
    const room = new FakeRoom('total = 0\n');
    const ada = new FakePage(room);
    const bob = new FakePage(room);
    for (let i = 0; i < 20; i++) {
      ada.type(`a${i}`, 'total = '.length);
      bob.type(`b${i};`);
      if (i % 3 === 0) room.deliver();
      await vi.advanceTimersByTimeAsync(i % 4 === 0 ? 300 : 40);
      if (i === 7) room.agentWrites(`${room.text}# agent\n`);
    }
    await settle(room);
    expect(ada.text).toBe(room.text);
    expect(bob.text).toBe(room.text);
    for (let i = 0; i < 20; i++) {
      expect(room.text).toContain(`a${i}`);
      expect(room.text).toContain(`b${i};`);
    }
    expect(room.text).toContain('# agent');
    expect(ada.sync.pending || bob.sync.pending).toBe(false);
  });

  it('keeps a text the daemon did not answer, says so, and sends it again once — applied once even when only its answer was lost', async () => {
    const room = new FakeRoom('n = 1');
    const page = new FakePage(room);
    room.down = true;
    room.lostAnswers = true;
    page.type('2');
    expect(await flushed(page)).toBe(false);
    expect(page.sync.state).toBe('waiting');
    expect(page.states.at(-1)?.[1]).toBe('the answer was lost');
    await vi.advanceTimersByTimeAsync(2000);
    expect(page.sync.state).toBe('waiting');
    room.down = false;
    await settle(room);
    expect(room.text).toBe('n = 12');
    expect(room.writes).toBe(1);
    expect(page.sync.state).toBe('saved');
    expect(page.text).toBe('n = 12');
  });

  it('says a refusal for good, keeps the person’s text in the editor, and a later edit tries again', async () => {
    const room = new FakeRoom('keep');
    const page = new FakePage(room);
    room.refuseWith = 'cell not found';
    page.type(' me');
    expect(await flushed(page)).toBe(false);
    expect(page.states.at(-1)).toEqual(['refused', 'cell not found']);
    expect(page.text).toBe('keep me');
    room.refuseWith = undefined;
    page.type('!');
    await settle(room);
    expect(room.text).toBe('keep me!');
  });

  it('stops sending once closed', async () => {
    const room = new FakeRoom('a');
    const page = new FakePage(room);
    page.type('b');
    const flushed = page.sync.flush();
    page.sync.close();
    expect(await flushed).toBe(false);
    await settle(room);
    expect(room.writes).toBe(0);
  });
});

/**
 * A cell whose sends the spec answers one by one: each send is logged with its text, expected
 * version and key, and waits for `answer(outcome)`.
 */
function scriptedCell(text: string, version = 'v1') {
  let local = text;
  const sends: { text: string; expected: string | undefined; key: string; at: number }[] = [];
  const answers: ((outcome: SourceSendOutcome) => void)[] = [];
  const states: SourceSyncState[] = [];
  const sync = new SourceSync(
    { text, version },
    {
      localText: () => local,
      merge: (_base, remote) => {
        local = remote.text;
      },
      send: (sent, expected, key) => {
        sends.push({ text: sent, expected, key, at: Date.now() });
        return new Promise((resolve) => answers.push(resolve));
      },
      stateChanged: (state) => states.push(state),
    },
    { pauseMs: 250, maxWaitMs: 1000, retryMs: [500, 1000, 2000] },
  );
  const type = (more: string) => {
    local += more;
    sync.edited();
  };
  /** Answers the oldest send waiting, and lets its consequences run. */
  const answer = async (outcome: SourceSendOutcome) => {
    answers.shift()?.(outcome);
    await vi.advanceTimersByTimeAsync(0);
  };
  return { sync, sends, states, type, answer, text: () => local };
}

describe('SourceSync timing and resends', () => {
  it('sends once the person pauses for 250 ms, over the version the text started from', async () => {
    const cell = scriptedCell('a', 'v7');
    const start = Date.now();
    cell.type('b');
    await vi.advanceTimersByTimeAsync(200);
    cell.type('c');
    await vi.advanceTimersByTimeAsync(249);
    expect(cell.sends).toHaveLength(0);
    await vi.advanceTimersByTimeAsync(1);
    expect(cell.sends).toEqual([
      { text: 'abc', expected: 'v7', key: expect.stringMatching(/^page-/), at: start + 450 },
    ]);
    expect(cell.states).toEqual(['sending']);
  });

  it('sends at most 1 s after the first unsent keystroke while typing goes on', async () => {
    const cell = scriptedCell('');
    const start = Date.now();
    for (let i = 0; i < 12; i++) {
      cell.type(String(i % 10));
      await vi.advanceTimersByTimeAsync(100);
    }
    expect(cell.sends.map((send) => send.at - start)).toEqual([1000]);
  });

  it('has one send on its way at a time; what was typed meanwhile goes next, over the version the answer gave', async () => {
    const cell = scriptedCell('x', 'v1');
    cell.type('1');
    await vi.advanceTimersByTimeAsync(250);
    cell.type('2');
    await vi.advanceTimersByTimeAsync(2000);
    expect(cell.sends).toHaveLength(1);
    await cell.answer({ kind: 'applied', version: 'v2' });
    await vi.advanceTimersByTimeAsync(250);
    expect(cell.sends.map(({ text, expected }) => [text, expected])).toEqual([
      ['x1', 'v1'],
      ['x12', 'v2'],
    ]);
    expect(cell.sends[1]?.key).not.toBe(cell.sends[0]?.key);
    await cell.answer({ kind: 'applied', version: 'v3' });
    expect(cell.sync.state).toBe('saved');
    expect(cell.sync.pending).toBe(false);
  });

  it('resends an unanswered text with the same key and version after 500, 1000, then 2000 ms each time', async () => {
    const cell = scriptedCell('n', 'v1');
    cell.type('!');
    await vi.advanceTimersByTimeAsync(250);
    const first = cell.sends[0];
    for (const wait of [500, 1000, 2000, 2000]) {
      const count = cell.sends.length;
      await cell.answer({ kind: 'unknown', message: 'fetch failed' });
      await vi.advanceTimersByTimeAsync(wait - 1);
      expect(cell.sends).toHaveLength(count);
      await vi.advanceTimersByTimeAsync(1);
      expect(cell.sends).toHaveLength(count + 1);
    }
    expect(cell.sends).toHaveLength(5);
    expect(cell.sends.every((send) => send.key === first?.key && send.expected === 'v1' && send.text === 'n!')).toBe(
      true,
    );
    expect(cell.states).toEqual(['sending', 'waiting', 'waiting', 'waiting', 'waiting']);
    await cell.answer({ kind: 'applied', version: 'v2' });
    expect(cell.sync.state).toBe('saved');
  });

  it('waits for the room’s newer text after a stale refusal, then merges it and sends over its version', async () => {
    const cell = scriptedCell('base', 'v1');
    cell.type('+mine');
    await vi.advanceTimersByTimeAsync(250);
    await cell.answer({ kind: 'stale' });
    await vi.advanceTimersByTimeAsync(5000);
    expect(cell.sends).toHaveLength(1);
    // The other peer's change comes (its event): the fake merge takes the room's text, then the page types on.
    cell.sync.roomChanged({ text: 'theirs', version: 'v2' });
    expect(cell.text()).toBe('theirs');
    cell.type('+again');
    await vi.advanceTimersByTimeAsync(250);
    expect(cell.sends.at(-1)).toMatchObject({ text: 'theirs+again', expected: 'v2' });
  });

  it('takes its own text coming back as an event as the room’s, merging nothing', async () => {
    const cell = scriptedCell('a', 'v1');
    cell.type('b');
    await vi.advanceTimersByTimeAsync(250);
    cell.sync.roomChanged({ text: 'ab', version: 'v2' });
    expect(cell.text()).toBe('ab');
    await cell.answer({ kind: 'applied', version: 'v2' });
    await vi.advanceTimersByTimeAsync(5000);
    expect(cell.sends).toHaveLength(1);
    expect(cell.sync.roomText).toBe('ab');
    expect(cell.sync.pending).toBe(false);
  });
});
