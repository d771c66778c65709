import { afterEach, describe, expect, it } from 'vitest';
import { CoreError } from '../../errors/core-error.js';
import type { CommentThread, NotebookComments } from '../../ports/notebook-handle.js';
import type { FakeNotebookHandle } from '../../testing/fake-notebook-handle.js';
import {
  type ChildServerTestHarness,
  startChildServerTestHarness,
  toolError,
} from '../../testing/start-child-server-test-harness.js';
import { sessionNewsPrefix } from '../awareness/session-news.js';
import { noCommentsMessage } from './create-comment-tools.js';

/** Comments kept in memory the way a notebook's owner keeps them, refusing as it does. */
function fakeComments(cellIds: () => readonly string[]): NotebookComments & { readonly sent: string[] } {
  const threads = new Map<string, { -readonly [K in keyof CommentThread]: CommentThread[K] }>();
  const sent: string[] = [];
  const thread = (id: string) => {
    const found = threads.get(id);
    if (!found)
      throw new CoreError('invalidRequest', `This notebook has no comment thread '${id}' (list_comments lists them).`);
    return found;
  };
  const at = '2026-01-01T00:00:00.000Z';
  return {
    sent,
    add: async (cellId, text, range) => {
      sent.push('add');
      if (!cellIds().includes(cellId))
        throw new CoreError('cellNotFound', `This notebook has no cell '${cellId}': no comment was added.`);
      const id = `t-${threads.size + 1}`;
      threads.set(id, {
        id,
        cellId,
        ...(range ? { range: { ...range, quote: 'x', state: 'intact' as const } } : {}),
        resolved: false,
        orphaned: false,
        messages: [{ id: 'm', author: 'agent:test:1', text, at }],
      });
      return thread(id);
    },
    reply: async (threadId, text) => {
      sent.push('reply');
      const found = thread(threadId);
      found.messages = [...found.messages, { id: 'r', author: 'agent:test:1', text, at }];
      return found;
    },
    resolve: async (threadId) => Object.assign(thread(threadId), { resolved: true, resolvedBy: 'agent:test:1' }),
    reopen: async (threadId) => Object.assign(thread(threadId), { resolved: false }),
    list: async (options) => {
      const all = [...threads.values()];
      return {
        threads: all.filter((one) => (options?.includeResolved ? true : !one.resolved)),
        total: all.length,
        resolved: all.filter((one) => one.resolved).length,
      };
    },
  };
}

describe('the comment tools', () => {
  let harness: ChildServerTestHarness;
  afterEach(async () => {
    await harness.close();
  });

  const ownJson = (result: { content: unknown }) =>
    JSON.parse((result.content as { text: string }[])[0]?.text ?? '{}') as Record<string, unknown>;

  it('say clearly that a notebook whose backend keeps no comments (a hosted one) has none, and change nothing', async () => {
    harness = await startChildServerTestHarness();
    await harness.createNotebook();
    const cellId = String((await harness.callJson('create_cell', { source: 'x = 1' })).cell_id);
    for (const [tool, args] of [
      ['add_comment', { cell_id: cellId, text: 'hello' }],
      ['reply_comment', { thread_id: 't-1', text: 'hello' }],
      ['resolve_comment', { thread_id: 't-1' }],
      ['reopen_comment', { thread_id: 't-1' }],
      ['list_comments', {}],
    ] as const) {
      expect(await toolError(harness.call(tool, args)), tool).toBe(noCommentsMessage);
    }
  });

  it('pass on the owner’s refusals (unknown cell, unknown thread) and refuse a text too long or a backwards range before sending', async () => {
    harness = await startChildServerTestHarness();
    const handle: FakeNotebookHandle = await harness.createNotebook();
    const cellId = String((await harness.callJson('create_cell', { source: 'x = 1' })).cell_id);
    const comments = fakeComments(() => [cellId]);
    Object.assign(handle, { comments });

    expect(await toolError(harness.call('add_comment', { cell_id: 'nope', text: 'hi' }))).toContain("no cell 'nope'");
    expect(await toolError(harness.call('reply_comment', { thread_id: 't-9', text: 'hi' }))).toContain(
      "no comment thread 't-9'",
    );
    const backwards = await toolError(
      harness.call('add_comment', { cell_id: cellId, text: 'hi', range: { start: 4, end: 2 } }),
    );
    expect(backwards).toContain('range.end must be after range.start');
    const tooLong = await toolError(harness.call('reply_comment', { thread_id: 't-9', text: 'x'.repeat(4001) }));
    expect(tooLong).toContain('at most 4000 characters (this one has 4001)');
    // The two refusals were the owner's; the backwards range and the long text never reached it.
    expect(comments.sent).toEqual(['add', 'reply']);

    const added = ownJson(
      await harness.call('add_comment', { cell_id: cellId, text: 'why?', range: { start: 0, end: 1 } }),
    );
    const thread = added.thread as { thread_id: string; range: { state: string } };
    expect(thread.range.state).toBe('intact');
    await harness.call('reply_comment', { thread_id: thread.thread_id, text: 'because' });
    await harness.call('resolve_comment', { thread_id: thread.thread_id });
    const open = ownJson(await harness.call('list_comments'));
    expect(open).toMatchObject({ threads: [], matching: 0, notebook_threads: 1, notebook_resolved: 1 });
    const all = ownJson(await harness.call('list_comments', { include_resolved: true }));
    expect((all.threads as { messages: { text: string }[] }[])[0]?.messages.map((m) => m.text)).toEqual([
      'why?',
      'because',
    ]);
    expect(await toolError(harness.call('list_comments', { count: 0 }))).toContain('count must be between 1 and 100');
  });

  it('carry another peer’s comment as a change note once, with the next answer', async () => {
    harness = await startChildServerTestHarness();
    const handle = await harness.createNotebook();
    Object.assign(handle, { comments: fakeComments(() => []) });
    handle.notices.push('human:Ada replied in comment thread t-1 on cell c1: "yes" (list_comments shows the thread).');
    const first = await harness.call('list_comments');
    const news = (first.content as { text: string }[])
      .map((item) => item.text)
      .filter((t) => t.startsWith(sessionNewsPrefix));
    expect(news).toEqual([
      `${sessionNewsPrefix}human:Ada replied in comment thread t-1 on cell c1: "yes" (list_comments shows the thread).`,
    ]);
    const second = await harness.call('list_comments');
    expect((second.content as unknown[]).length).toBe(1);
  });
});
