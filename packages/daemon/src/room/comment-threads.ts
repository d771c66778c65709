import {
  maxCommentCharacters,
  maxCommentMessages,
  maxCommentThreads,
  type WireCommentRange,
  type WireCommentThread,
} from '@nteract-mcp/runtimed-protocol';
import { DaemonError } from '../daemon-error.js';

/**
 * One change of a notebook's comments, as the room journals it and replays it: everything it needs
 * is in it (ids, author, time), so applying the same records in order gives the same threads. An
 * `add` or `reply` may carry the request's idempotency key: a request sent again with it (also
 * after a daemon restart) answers the thread without adding again.
 */
export type CommentRecord =
  | {
      readonly op: 'add';
      readonly thread_id: string;
      readonly message_id: string;
      readonly cell_id: string;
      readonly range?: { readonly start: number; readonly end: number; readonly quote: string };
      readonly author: string;
      readonly text: string;
      readonly at: string;
      readonly key?: string;
    }
  | {
      readonly op: 'reply';
      readonly thread_id: string;
      readonly message_id: string;
      readonly author: string;
      readonly text: string;
      readonly at: string;
      readonly key?: string;
    }
  | { readonly op: 'resolve' | 'reopen'; readonly thread_id: string; readonly by: string; readonly at: string };

/** A thread as the store keeps it (its range without where it is now: that depends on the cell's source). */
export interface StoredCommentThread {
  readonly id: string;
  readonly cell_id: string;
  readonly range?: { readonly start: number; readonly end: number; readonly quote: string };
  resolved: boolean;
  resolved_by?: string;
  resolved_at?: string;
  readonly messages: { readonly id: string; readonly author: string; readonly text: string; readonly at: string }[];
}

/** What the threads need of the notebook: whether a cell is there, and its source. */
export interface CommentedDocument {
  /** The cell's source, or `undefined` when the notebook has no such cell. */
  sourceOf(cellId: string): string | undefined;
}

/**
 * The comment threads of one notebook, in memory: checks a change against the bounds
 * ({@link maxCommentThreads}, {@link maxCommentMessages}, {@link maxCommentCharacters}; a message's
 * own length is the request schema's) and applies it. Pure: no I/O, no clock (a record carries its time).
 */
export class CommentThreads {
  readonly #threads = new Map<string, StoredCommentThread>();
  /** The thread each idempotency key made or replied to. */
  readonly #keys = new Map<string, string>();
  #characters = 0;

  public constructor(threads: readonly StoredCommentThread[] = [], keys: Readonly<Record<string, string>> = {}) {
    for (const thread of threads) {
      this.#threads.set(thread.id, structuredClone(thread));
      for (const message of thread.messages) this.#characters += message.text.length;
    }
    for (const [key, id] of Object.entries(keys)) this.#keys.set(key, id);
  }

  public get size(): number {
    return this.#threads.size;
  }

  /** The thread an idempotency key already made or replied to, `undefined` when none did. */
  public threadOfKey(key: string | undefined): string | undefined {
    return key === undefined ? undefined : this.#keys.get(key);
  }

  /** Throws `badRequest` when `record` cannot be applied (an unknown thread, a bound reached); changes nothing. */
  public check(record: CommentRecord): void {
    if (record.op === 'add') {
      if (this.#threads.size >= maxCommentThreads) {
        throw new DaemonError(
          'badRequest',
          `This notebook has ${maxCommentThreads} comment threads, the most it keeps: nothing was added. Reply to a thread instead.`,
        );
      }
    } else {
      const thread = this.thread(record.thread_id);
      if (record.op === 'reply' && thread.messages.length >= maxCommentMessages) {
        throw new DaemonError(
          'badRequest',
          `Comment thread ${record.thread_id} has ${maxCommentMessages} messages, the most a thread keeps: nothing was added. Start a new thread.`,
        );
      }
    }
    if (
      (record.op === 'add' || record.op === 'reply') &&
      this.#characters + record.text.length > maxCommentCharacters
    ) {
      throw new DaemonError(
        'badRequest',
        `This notebook's comments hold ${this.#characters} characters; ${record.text.length} more would pass the ${maxCommentCharacters} it keeps: nothing was added.`,
      );
    }
  }

  /** Applies `record` (checked first: see {@link check}); the thread as it is after it. */
  public apply(record: CommentRecord): StoredCommentThread {
    this.check(record);
    if ('key' in record && record.key !== undefined) this.#keys.set(record.key, record.thread_id);
    switch (record.op) {
      case 'add': {
        const thread: StoredCommentThread = {
          id: record.thread_id,
          cell_id: record.cell_id,
          ...(record.range ? { range: record.range } : {}),
          resolved: false,
          messages: [{ id: record.message_id, author: record.author, text: record.text, at: record.at }],
        };
        this.#threads.set(thread.id, thread);
        this.#characters += record.text.length;
        return thread;
      }
      case 'reply': {
        const thread = this.thread(record.thread_id);
        thread.messages.push({ id: record.message_id, author: record.author, text: record.text, at: record.at });
        this.#characters += record.text.length;
        return thread;
      }
      case 'resolve': {
        const thread = this.thread(record.thread_id);
        thread.resolved = true;
        thread.resolved_by = record.by;
        thread.resolved_at = record.at;
        return thread;
      }
      case 'reopen': {
        const thread = this.thread(record.thread_id);
        thread.resolved = false;
        delete thread.resolved_by;
        delete thread.resolved_at;
        return thread;
      }
    }
  }

  /** The thread `id`; `badRequest` naming it when the notebook has none. */
  public thread(id: string): StoredCommentThread {
    const thread = this.#threads.get(id);
    if (!thread)
      throw new DaemonError('badRequest', `This notebook has no comment thread '${id}' (list_comments lists them).`);
    return thread;
  }

  /** Every thread, oldest first. */
  public all(): readonly StoredCommentThread[] {
    return [...this.#threads.values()];
  }

  /** What the store file keeps: the threads and the idempotency keys. */
  public snapshot(): { threads: StoredCommentThread[]; keys: Record<string, string> } {
    return { threads: structuredClone(this.all()) as StoredCommentThread[], keys: Object.fromEntries(this.#keys) };
  }
}

/**
 * `thread` as peers are told it, against the notebook as it is now: `orphaned` when its cell is
 * gone, its range's place in the cell's source now.
 */
export function wireThreadOf(thread: StoredCommentThread, document: CommentedDocument): WireCommentThread {
  const source = document.sourceOf(thread.cell_id);
  return {
    id: thread.id,
    cell_id: thread.cell_id,
    ...(thread.range ? { range: rangeNow(thread.range, source) } : {}),
    resolved: thread.resolved,
    ...(thread.resolved_by === undefined ? {} : { resolved_by: thread.resolved_by }),
    ...(thread.resolved_at === undefined ? {} : { resolved_at: thread.resolved_at }),
    orphaned: source === undefined,
    messages: thread.messages.map((message) => ({ ...message })),
  };
}

/**
 * Where a range is in `source` now: `intact` when its quote is still at its offsets, `moved` to the
 * nearest place the quote is found, `vanished` when it is not found (or the cell is gone).
 */
export function rangeNow(
  range: { readonly start: number; readonly end: number; readonly quote: string },
  source: string | undefined,
): WireCommentRange {
  const { start, end, quote } = range;
  if (source === undefined || quote.length === 0) return { start, end, quote, state: 'vanished' };
  if (source.slice(start, end) === quote) return { start, end, quote, state: 'intact' };
  let best: number | undefined;
  for (let at = source.indexOf(quote); at >= 0; at = source.indexOf(quote, at + 1)) {
    if (best === undefined || Math.abs(at - start) < Math.abs(best - start)) best = at;
  }
  if (best === undefined) return { start, end, quote, state: 'vanished' };
  return { start, end, quote, state: 'moved', now_start: best, now_end: best + quote.length };
}
