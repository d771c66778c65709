import { randomUUID } from 'node:crypto';
import type { Clock, Logger, Timer } from '@nteract-mcp/foundation';
import type {
  WireCommentAction,
  WireCommentThread,
  WireNotebookAnswer,
  WireNotebookRequestOf,
} from '@nteract-mcp/runtimed-protocol';
import { DaemonError } from '../daemon-error.js';
import type { NotebookDocument } from '../document/notebook-document.js';
import { CommentStore, commentSidecarPath } from '../persistence/comment-store.js';
import type { JournalSettings } from '../persistence/room-journal.js';
import { type CommentRecord, type CommentThreads, wireThreadOf } from './comment-threads.js';
import type { RoomPeer } from './room-peers.js';

/** The comment requests a room answers. */
export type CommentRequest = WireNotebookRequestOf<
  'add_comment' | 'reply_comment' | 'resolve_comment' | 'reopen_comment' | 'list_comments'
>;

/** How long after a change the sidecar is written (the journal holds the change meanwhile). */
export const commentSidecarDelayMs = 1000;

export interface RoomCommentsInit {
  readonly notebookId: string;
  /** Where the room's journals go (`undefined`: no journal, each change is written to the sidecar before it is answered). */
  readonly journal: JournalSettings | undefined;
  /**
   * Where the notebook's document is kept now (its file, or its untitled store file; `undefined`
   * for an ephemeral notebook): the comments are kept beside it (see {@link commentSidecarPath}).
   */
  readonly documentPath: () => string | undefined;
  readonly document: NotebookDocument;
  /** The room's peers now (the ones that declared `comments` are told each change). */
  readonly peers: () => readonly RoomPeer[];
  readonly clock: Clock;
  readonly logger: Logger;
}

/**
 * The comment threads of one room: answers its peers' comment requests, authored by the asking
 * peer's label (never a request's field), makes each change durable ({@link CommentStore}) before
 * it is answered, and tells every peer that reads comments the thread as it is now.
 */
export class RoomComments {
  readonly #init: RoomCommentsInit;
  readonly #store: CommentStore;
  readonly #threads: CommentThreads;
  #timer: Timer | undefined;

  public constructor(init: RoomCommentsInit) {
    this.#init = init;
    const { store, threads } = CommentStore.load(
      {
        notebookId: init.notebookId,
        // Private (0600): a conversation about the notebook is its writers' business.
        sidecar: () => {
          const documentPath = init.documentPath();
          return documentPath === undefined ? undefined : { path: commentSidecarPath(documentPath), mode: 0o600 };
        },
        journalDir: init.journal?.dir,
        fsync: init.journal?.fsync === true,
      },
      init.clock.now(),
    );
    this.#store = store;
    this.#threads = threads;
    if (threads.size > 0) init.logger.info('comments loaded', { notebookId: init.notebookId, threads: threads.size });
  }

  public async handle(peer: RoomPeer, request: CommentRequest): Promise<Record<string, unknown>> {
    const at = new Date(this.#init.clock.now()).toISOString();
    switch (request.type) {
      case 'list_comments':
        return this.list(request.cell_id ?? undefined, request.include_resolved === true);
      case 'add_comment': {
        const key = request.idempotency_key ?? undefined;
        const again = this.#threads.threadOfKey(key);
        if (again !== undefined) return { thread: this.wire(again) };
        const source = this.#init.document.has(request.cell_id)
          ? this.#init.document.cell(request.cell_id).source
          : undefined;
        if (source === undefined) {
          throw new DaemonError(
            'cellNotFound',
            `This notebook has no cell '${request.cell_id}': no comment was added.`,
          );
        }
        const range = request.range ?? undefined;
        if (range && range.end > source.length) {
          throw new DaemonError(
            'badRequest',
            `The range ${range.start}..${range.end} is past the end of cell ${request.cell_id}'s source (${source.length} characters): no comment was added.`,
          );
        }
        return this.change(peer, 'added', {
          op: 'add',
          thread_id: `t-${randomUUID().slice(0, 8)}`,
          message_id: randomUUID(),
          cell_id: request.cell_id,
          ...(range
            ? { range: { start: range.start, end: range.end, quote: source.slice(range.start, range.end) } }
            : {}),
          author: peer.label,
          text: request.text,
          at,
          ...(key === undefined ? {} : { key }),
        });
      }
      case 'reply_comment': {
        const key = request.idempotency_key ?? undefined;
        if (this.#threads.threadOfKey(key) === request.thread_id) return { thread: this.wire(request.thread_id) };
        return this.change(peer, 'replied', {
          op: 'reply',
          thread_id: request.thread_id,
          message_id: randomUUID(),
          author: peer.label,
          text: request.text,
          at,
          ...(key === undefined ? {} : { key }),
        });
      }
      case 'resolve_comment':
      case 'reopen_comment': {
        const resolve = request.type === 'resolve_comment';
        // Already so: answered as it is, nobody told again.
        if (this.#threads.thread(request.thread_id).resolved === resolve)
          return { thread: this.wire(request.thread_id) };
        const op = resolve ? 'resolve' : 'reopen';
        return this.change(peer, resolve ? 'resolved' : 'reopened', {
          op,
          thread_id: request.thread_id,
          by: peer.label,
          at,
        });
      }
    }
  }

  /** Writes the sidecar now (the room flushes: a save, a teardown, a close). */
  public flush(): Promise<void> {
    this.#timer?.cancel();
    this.#timer = undefined;
    return this.#store.flush(this.#threads);
  }

  /** Stops the delayed write (the room goes away; {@link flush} first). */
  public dispose(): void {
    this.#timer?.cancel();
    this.#timer = undefined;
  }

  private list(cellId: string | undefined, includeResolved: boolean): WireNotebookAnswer<'list_comments'> {
    const all = this.#threads.all();
    const threads = all
      .filter((thread) => (cellId === undefined || thread.cell_id === cellId) && (includeResolved || !thread.resolved))
      .map((thread) => wireThreadOf(thread, this.sourceReader()));
    return { threads, total: all.length, resolved: all.filter((thread) => thread.resolved).length };
  }

  /** Applies `record`, makes it durable, tells the peers; the thread as it is now. */
  private async change(
    peer: RoomPeer,
    action: WireCommentAction,
    record: CommentRecord,
  ): Promise<Record<string, unknown>> {
    this.#threads.apply(record);
    try {
      await this.#store.append(record, this.#threads);
    } catch (error) {
      throw new DaemonError(
        'notDurable',
        `The comment change was applied but could not be made durable (${(error as Error).message}): it may be lost if the daemon stops.`,
      );
    } finally {
      this.tell(peer, action, this.wire(record.thread_id));
      this.scheduleWrite();
    }
    return { thread: this.wire(record.thread_id) };
  }

  private tell(peer: RoomPeer, action: WireCommentAction, thread: WireCommentThread): void {
    const frame = {
      type: 'broadcast',
      event: 'comment_thread',
      action,
      peer_id: peer.id,
      peer_label: peer.label,
      thread,
    };
    // The asking peer has the thread in its answer: the others are told.
    for (const other of this.#init.peers()) if (other !== peer && other.readsComments === true) other.send(frame);
  }

  private scheduleWrite(): void {
    if (this.#timer !== undefined) return;
    this.#timer = this.#init.clock.setTimer(commentSidecarDelayMs, () => {
      this.#timer = undefined;
      this.#store.flush(this.#threads).catch((error: unknown) =>
        this.#init.logger.warn('could not write the comments file; the journal keeps the comments', {
          notebookId: this.#init.notebookId,
          error,
        }),
      );
    });
  }

  private wire(threadId: string): WireCommentThread {
    return wireThreadOf(this.#threads.thread(threadId), this.sourceReader());
  }

  private sourceReader(): { sourceOf(cellId: string): string | undefined } {
    const { document } = this.#init;
    return { sourceOf: (cellId) => (document.has(cellId) ? document.cell(cellId).source : undefined) };
  }
}
