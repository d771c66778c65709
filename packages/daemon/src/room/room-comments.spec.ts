import { ManualClock, RecordingLogger } from '@nteract-mcp/foundation/testing';
import { describe, expect, it } from 'vitest';
import { NotebookDocument } from '../document/notebook-document.js';
import { RoomComments } from './room-comments.js';
import type { RoomPeer } from './room-peers.js';

function peer(id: string, label: string, readsComments: boolean, told: Record<string, unknown>[]): RoomPeer {
  return { id, label, readsComments, send: (frame) => told.push({ ...frame, to: id }), disconnect: () => undefined };
}

function room(): {
  comments: RoomComments;
  document: NotebookDocument;
  agent: RoomPeer;
  told: Record<string, unknown>[];
  older: Record<string, unknown>[];
} {
  const document = NotebookDocument.empty();
  const told: Record<string, unknown>[] = [];
  const older: Record<string, unknown>[] = [];
  const agent = peer('p-agent', 'Claude agent:claude:1', true, told);
  const page = peer('p-page', 'human:Ada', true, told);
  const before = peer('p-old', 'agent:old:1', false, older);
  const comments = new RoomComments({
    notebookId: '00000000-0000-4000-8000-000000000001',
    journal: undefined,
    documentPath: () => undefined,
    document,
    peers: () => [agent, page, before],
    clock: new ManualClock(Date.UTC(2026, 0, 1)),
    logger: new RecordingLogger(),
  });
  return { comments, document, agent, told, older };
}

describe('RoomComments', () => {
  it('authors a thread by the asking peer and tells every other peer that reads comments, and only them (the asking one has it in its answer)', async () => {
    const { comments, document, agent, told, older } = room();
    const { cell } = document.insert({ source: 'total = 3', cellType: 'code' });
    const answer = (await comments.handle(agent, {
      type: 'add_comment',
      cell_id: cell.id,
      text: 'why?',
      range: { start: 0, end: 5 },
    })) as { thread: { id: string; messages: { author: string; at: string }[]; range: { quote: string } } };
    expect(answer.thread.messages[0]).toMatchObject({
      author: 'Claude agent:claude:1',
      at: '2026-01-01T00:00:00.000Z',
    });
    expect(answer.thread.range.quote).toBe('total');
    expect(told.map((frame) => [frame.event, frame.action, frame.peer_label, frame.to])).toEqual([
      ['comment_thread', 'added', 'Claude agent:claude:1', 'p-page'],
    ]);
    expect(older).toEqual([]);
  });

  it('answers a repeated idempotency key with the thread it made, adding nothing', async () => {
    const { comments, document, agent } = room();
    const { cell } = document.insert({ source: 'x', cellType: 'code' });
    const request = { type: 'add_comment', cell_id: cell.id, text: 'once', idempotency_key: 'k' } as const;
    const first = (await comments.handle(agent, request)) as { thread: { id: string } };
    const again = (await comments.handle(agent, request)) as { thread: { id: string } };
    expect(again.thread.id).toBe(first.thread.id);
    expect(((await comments.handle(agent, { type: 'list_comments' })) as { total: number }).total).toBe(1);
  });

  it('refuses an unknown cell or a range past the source, changing nothing; keeps a thread whose cell is deleted, orphaned', async () => {
    const { comments, document, agent, told } = room();
    const { cell } = document.insert({ source: 'abc', cellType: 'code' });
    await expect(comments.handle(agent, { type: 'add_comment', cell_id: 'nope', text: 'x' })).rejects.toThrow(
      "no cell 'nope'",
    );
    await expect(
      comments.handle(agent, { type: 'add_comment', cell_id: cell.id, text: 'x', range: { start: 1, end: 9 } }),
    ).rejects.toThrow('past the end');
    expect(told).toEqual([]);
    await comments.handle(agent, { type: 'add_comment', cell_id: cell.id, text: 'kept' });
    document.delete(cell.id);
    const listed = (await comments.handle(agent, { type: 'list_comments' })) as {
      threads: { orphaned: boolean; messages: { text: string }[] }[];
    };
    expect(listed.threads).toMatchObject([{ orphaned: true, messages: [{ text: 'kept' }] }]);
  });

  it('resolves and reopens, telling the peers only of a change (a thread already resolved is answered as it is)', async () => {
    const { comments, document, agent, told } = room();
    const { cell } = document.insert({ source: 'x', cellType: 'code' });
    const { thread } = (await comments.handle(agent, { type: 'add_comment', cell_id: cell.id, text: 'x' })) as {
      thread: { id: string };
    };
    told.length = 0;
    await comments.handle(agent, { type: 'resolve_comment', thread_id: thread.id });
    await comments.handle(agent, { type: 'resolve_comment', thread_id: thread.id });
    expect(told.map((frame) => [frame.action, frame.to])).toEqual([['resolved', 'p-page']]);
    await comments.handle(agent, { type: 'reopen_comment', thread_id: thread.id });
    expect(told.map((frame) => frame.action)).toEqual(['resolved', 'reopened']);
    const open = (await comments.handle(agent, { type: 'list_comments' })) as { threads: unknown[]; resolved: number };
    expect(open).toMatchObject({ resolved: 0 });
    expect(open.threads).toHaveLength(1);
  });
});
