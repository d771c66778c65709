import { maxCommentMessages, maxCommentThreads } from '@nteract-mcp/runtimed-protocol';
import { describe, expect, it } from 'vitest';
import { DaemonError } from '../daemon-error.js';
import { type CommentRecord, CommentThreads, rangeNow, wireThreadOf } from './comment-threads.js';

const at = '2026-01-01T00:00:00.000Z';

function add(threadId: string, cellId = 'c1', text = 'why?', key?: string): CommentRecord {
  return {
    op: 'add',
    thread_id: threadId,
    message_id: `${threadId}-m`,
    cell_id: cellId,
    author: 'agent:a:1',
    text,
    at,
    ...(key ? { key } : {}),
  };
}

function reply(threadId: string, text = 'because', author = 'human:Ada'): CommentRecord {
  return { op: 'reply', thread_id: threadId, message_id: `${threadId}-r${Math.random()}`, author, text, at };
}

describe('CommentThreads', () => {
  it('adds threads, replies, resolves and reopens them, each message with its author', () => {
    const threads = new CommentThreads();
    threads.apply(add('t-1'));
    threads.apply(reply('t-1'));
    threads.apply({ op: 'resolve', thread_id: 't-1', by: 'human:Ada', at });
    expect(threads.thread('t-1')).toMatchObject({ resolved: true, resolved_by: 'human:Ada', resolved_at: at });
    threads.apply({ op: 'reopen', thread_id: 't-1', by: 'agent:a:1', at });
    const thread = threads.thread('t-1');
    expect(thread.resolved).toBe(false);
    expect(thread.resolved_by).toBeUndefined();
    expect(thread.messages.map((message) => [message.author, message.text])).toEqual([
      ['agent:a:1', 'why?'],
      ['human:Ada', 'because'],
    ]);
  });

  it('refuses a change of an unknown thread, naming it, and changes nothing', () => {
    const threads = new CommentThreads();
    threads.apply(add('t-1'));
    for (const record of [reply('t-9'), { op: 'resolve', thread_id: 't-9', by: 'x', at } as const]) {
      expect(() => threads.apply(record)).toThrow("no comment thread 't-9'");
    }
    expect(threads.all()).toHaveLength(1);
  });

  it('keeps its bounds: threads per notebook and messages per thread, refused with a clear badRequest', () => {
    const threads = new CommentThreads();
    for (let index = 0; index < maxCommentThreads; index += 1) threads.apply(add(`t-${index}`));
    const tooMany = (() => {
      try {
        threads.apply(add('t-over'));
      } catch (error) {
        return error;
      }
    })();
    expect(DaemonError.is(tooMany, 'badRequest')).toBe(true);
    expect((tooMany as Error).message).toContain(`${maxCommentThreads} comment threads`);
    for (let index = 1; index < maxCommentMessages; index += 1) threads.apply(reply('t-0'));
    expect(() => threads.apply(reply('t-0'))).toThrow(`${maxCommentMessages} messages`);
    expect(threads.thread('t-0').messages).toHaveLength(maxCommentMessages);
  });

  it('remembers the idempotency key of an add across a snapshot', () => {
    const threads = new CommentThreads();
    threads.apply(add('t-1', 'c1', 'why?', 'key-1'));
    const { threads: kept, keys } = threads.snapshot();
    const again = new CommentThreads(kept, keys);
    expect(again.threadOfKey('key-1')).toBe('t-1');
    expect(again.threadOfKey('key-2')).toBeUndefined();
  });

  it('tells a thread orphaned when its cell is gone, and where its range is in the source now', () => {
    const threads = new CommentThreads();
    threads.apply({ ...add('t-1'), range: { start: 0, end: 5, quote: 'total' } } as CommentRecord);
    const sources = new Map([['c1', 'total = 3']]);
    const document = { sourceOf: (cellId: string) => sources.get(cellId) };
    expect(wireThreadOf(threads.thread('t-1'), document)).toMatchObject({
      orphaned: false,
      range: { state: 'intact', quote: 'total' },
    });
    sources.set('c1', 'grand_total = 3');
    expect(wireThreadOf(threads.thread('t-1'), document).range).toMatchObject({
      state: 'moved',
      now_start: 6,
      now_end: 11,
    });
    sources.delete('c1');
    expect(wireThreadOf(threads.thread('t-1'), document)).toMatchObject({
      orphaned: true,
      range: { state: 'vanished' },
    });
  });

  it('finds a moved range at the place nearest to where it was', () => {
    expect(rangeNow({ start: 10, end: 11, quote: 'x' }, 'x ........ yx')).toMatchObject({
      state: 'moved',
      now_start: 12,
    });
    expect(rangeNow({ start: 0, end: 1, quote: 'x' }, 'abc')).toMatchObject({ state: 'vanished' });
  });
});
