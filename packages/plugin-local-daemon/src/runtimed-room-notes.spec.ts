import { CoreError } from '@nteract-mcp/core';
import type { WireCommentThread, WireNotebookConnected } from '@nteract-mcp/runtimed-protocol';
import { describe, expect, it } from 'vitest';
import { maxHeldNotices, type NotebookRequester, RuntimedRoomNotes } from './runtimed-room-notes.js';

const greeting: WireNotebookConnected = {
  type: 'connected',
  notebook_id: '00000000-0000-4000-8000-000000000001',
  notebook_path: null,
  ephemeral: false,
  document_version: 0,
  cells: [],
  runtime: { state: 'ready', kernel_status: 'idle' },
  peer_id: 'me',
  daemon_pid: 1,
  daemon_started_at: '2026-01-01T00:00:00.000Z',
};

const thread: WireCommentThread = {
  id: 't-1',
  cell_id: 'c1',
  range: { start: 0, end: 5, quote: 'total', state: 'moved', now_start: 4, now_end: 9 },
  resolved: false,
  orphaned: false,
  messages: [{ id: 'm', author: 'human:Ada', text: 'Why?', at: '2026-01-01T00:00:00.000Z' }],
};

describe('RuntimedRoomNotes', () => {
  it('sends nothing to a daemon whose greeting does not offer comments, and says why', async () => {
    const sent: unknown[] = [];
    const request = (async (message: unknown) => {
      sent.push(message);
      return {};
    }) as NotebookRequester;
    const notes = new RuntimedRoomNotes(greeting, request);
    const refused = await notes.comments.list().catch((error: unknown) => error);
    expect(CoreError.is(refused, 'invalidRequest')).toBe(true);
    expect((refused as Error).message).toContain('predates comments');
    expect(sent).toEqual([]);
  });

  it('sends the comment requests with their idempotency key and reads the thread in core’s names', async () => {
    const sent: Record<string, unknown>[] = [];
    const request = (async (message: Record<string, unknown>) => {
      sent.push(message);
      return { thread };
    }) as unknown as NotebookRequester;
    const notes = new RuntimedRoomNotes({ ...greeting, comments: true }, request);
    const added = await notes.comments.add('c1', 'Why?', { start: 0, end: 5 }, { idempotencyKey: 'k' });
    expect(sent).toEqual([
      { type: 'add_comment', cell_id: 'c1', text: 'Why?', range: { start: 0, end: 5 }, idempotency_key: 'k' },
    ]);
    expect(added).toMatchObject({ id: 't-1', cellId: 'c1', range: { state: 'moved', nowStart: 4, nowEnd: 9 } });
  });

  it('tells another peer’s change of a thread once, never this peer’s own, and holds a bounded number of notices', () => {
    const notes = new RuntimedRoomNotes({ ...greeting, comments: true }, (async () => ({})) as NotebookRequester);
    notes.told({ event: 'comment_thread', action: 'added', peer_id: 'me', peer_label: 'agent:me:1', thread });
    expect(notes.take()).toEqual([]);
    notes.told({ event: 'comment_thread', action: 'replied', peer_id: 'ada', peer_label: 'human:Ada', thread });
    expect(notes.take()).toEqual([
      'human:Ada replied in comment thread t-1 on cell c1: "Why?" (list_comments shows the thread).',
    ]);
    expect(notes.take()).toEqual([]);
    for (let index = 0; index < maxHeldNotices + 5; index += 1) notes.told({ event: 'notice', message: `n${index}` });
    const held = notes.take();
    expect(held).toHaveLength(maxHeldNotices);
    expect(held.at(-1)).toBe(`n${maxHeldNotices + 4}`);
  });
});
