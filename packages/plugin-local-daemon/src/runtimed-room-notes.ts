import { CoreError, type NotebookCondition, type NotebookHandle } from '@nteract-mcp/core';
import type {
  WireCommentThread,
  WireCommentThreadEvent,
  WireNotebookAnswer,
  WireNotebookConnected,
  WireNotebookRequest,
  WireRoomEvent,
} from '@nteract-mcp/runtimed-protocol';

/** Notices kept for an agent that makes no call for a while; older ones are dropped first. */
export const maxHeldNotices = 20;

/** The comments capability of a notebook handle (core's `NotebookComments`). */
type NotebookComments = NonNullable<NotebookHandle['comments']>;
type CommentThread = Awaited<ReturnType<NotebookComments['add']>>;

/** Sends one notebook request on the handle's connection and reads its answer. */
export type NotebookRequester = <R extends WireNotebookRequest>(message: R) => Promise<WireNotebookAnswer<R['type']>>;

/** What a comment's change note quotes of its message at most. */
const quotedCharacters = 200;

/**
 * What a room tells its peers beside the cells, as a {@link RuntimedNotebookHandle} keeps it for its
 * agent: the room's conditions (from the greeting and each `conditions` broadcast), its one-off
 * notices, and what another peer did to a comment thread (told once, as a notice), at most
 * {@link maxHeldNotices} of them held. Also the handle's comments capability: its requests go on
 * the handle's connection; a daemon whose greeting did not offer comments (one before them, which
 * would answer them `unknown_request` and close the connection) is not sent any.
 */
export class RuntimedRoomNotes {
  #conditions: readonly NotebookCondition[];
  /** The notices not yet taken, oldest first. */
  readonly #notices: string[] = [];
  readonly #ownPeerId: string;
  /** The comments capability, also when the daemon keeps none (its calls then say so, sending nothing). */
  public readonly comments: NotebookComments;

  public constructor(connected: WireNotebookConnected, request: NotebookRequester) {
    this.#conditions = connected.conditions ?? [];
    this.#ownPeerId = connected.peer_id;
    const offered = connected.comments === true;
    const send: NotebookRequester = (message) => {
      if (!offered) {
        return Promise.reject(
          new CoreError(
            'invalidRequest',
            'The daemon this notebook is open in predates comments (its greeting does not offer them), so nothing was sent: stop it with `runtimed stop` (a current one starts on the next call) to use comments.',
          ),
        );
      }
      return request(message);
    };
    const thread = (answer: Promise<{ thread: WireCommentThread }>) => answer.then((a) => toCommentThread(a.thread));
    this.comments = {
      add: (cellId, text, range, options) =>
        thread(send({ type: 'add_comment', cell_id: cellId, text, ...(range ? { range } : {}), ...keyOf(options) })),
      reply: (threadId, text, options) =>
        thread(send({ type: 'reply_comment', thread_id: threadId, text, ...keyOf(options) })),
      resolve: (threadId) => thread(send({ type: 'resolve_comment', thread_id: threadId })),
      reopen: (threadId) => thread(send({ type: 'reopen_comment', thread_id: threadId })),
      list: async (options) => {
        const answer = await send({
          type: 'list_comments',
          ...(options?.cellId === undefined ? {} : { cell_id: options.cellId }),
          include_resolved: options?.includeResolved === true,
        });
        return { threads: answer.threads.map(toCommentThread), total: answer.total, resolved: answer.resolved };
      },
    };
  }

  public get conditions(): readonly NotebookCondition[] {
    return this.#conditions;
  }

  /** The notices not yet taken, oldest first; from now on they count as told. */
  public take(): readonly string[] {
    return this.#notices.splice(0);
  }

  /** A `conditions`, `notice` or `comment_thread` broadcast of the room. */
  public told(event: Extract<WireRoomEvent, { event: 'conditions' | 'notice' | 'comment_thread' }>): void {
    if (event.event === 'conditions') this.#conditions = event.conditions;
    else if (event.event === 'notice') this.hold(event.message);
    else if (event.peer_id !== this.#ownPeerId) this.hold(commentNote(event));
  }

  private hold(message: string): void {
    if (this.#notices.length >= maxHeldNotices) this.#notices.shift();
    this.#notices.push(message);
  }
}

/** The change note of another peer's change of a thread: who did what on which cell, quoting the message. */
export function commentNote(event: WireCommentThreadEvent): string {
  const { thread, peer_label: who } = event;
  const where = `comment thread ${thread.id} on cell ${thread.cell_id}${thread.orphaned ? ' (a deleted cell)' : ''}`;
  const last = thread.messages.at(-1)?.text ?? '';
  const quoted = last.length > quotedCharacters ? `${last.slice(0, quotedCharacters)}…` : last;
  switch (event.action) {
    case 'added':
      return `${who} started ${where}: "${quoted}" (reply_comment answers it; list_comments lists the threads).`;
    case 'replied':
      return `${who} replied in ${where}: "${quoted}" (list_comments shows the thread).`;
    case 'resolved':
      return `${who} resolved ${where}.`;
    case 'reopened':
      return `${who} reopened ${where}.`;
  }
}

/** A comment request's idempotency key field, from a call's options. */
function keyOf(options: { readonly idempotencyKey?: string } | undefined): { idempotency_key?: string } {
  return options?.idempotencyKey === undefined ? {} : { idempotency_key: options.idempotencyKey };
}

/** A thread as core names it. */
function toCommentThread(thread: WireCommentThread): CommentThread {
  const { range } = thread;
  return {
    id: thread.id,
    cellId: thread.cell_id,
    ...(range
      ? {
          range: {
            start: range.start,
            end: range.end,
            quote: range.quote,
            state: range.state,
            ...(range.now_start === undefined ? {} : { nowStart: range.now_start }),
            ...(range.now_end === undefined ? {} : { nowEnd: range.now_end }),
          },
        }
      : {}),
    resolved: thread.resolved,
    ...(thread.resolved_by === undefined ? {} : { resolvedBy: thread.resolved_by }),
    ...(thread.resolved_at === undefined ? {} : { resolvedAt: thread.resolved_at }),
    orphaned: thread.orphaned,
    messages: thread.messages.map((message) => ({ ...message })),
  };
}
