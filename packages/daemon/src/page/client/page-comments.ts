import type { WireCommentThread } from '@nteract-mcp/runtimed-protocol';
import { el } from './element.js';
import type { PageRequestResult } from './page-api.js';

/** What the comments of a page need of it: sending a comment request, and saying why one was refused. */
export interface CommentsHost {
  sendComment(
    request:
      | { type: 'add_comment'; cell_id: string; text: string }
      | { type: 'reply_comment'; thread_id: string; text: string }
      | { type: 'resolve_comment'; thread_id: string }
      | { type: 'reopen_comment'; thread_id: string }
      | { type: 'list_comments'; include_resolved: true },
  ): Promise<PageRequestResult>;
  notice(message: string): void;
}

/** One thread as drawn: its element and the parts that change (the reply box keeps what the person typed). */
interface DrawnThread {
  readonly element: HTMLElement;
  readonly status: HTMLElement;
  readonly messages: HTMLElement;
  readonly resolve: HTMLButtonElement;
  readonly reopen: HTMLButtonElement;
  readonly reply: HTMLFormElement;
}

/** One cell's comments as drawn: the badge button, the panel it opens, its threads. */
interface CellComments {
  readonly element: HTMLElement;
  readonly toggle: HTMLButtonElement;
  readonly panel: HTMLElement;
  readonly list: HTMLElement;
  readonly threads: Map<string, DrawnThread>;
}

/**
 * The comment threads of the notebook on its page: under each cell a button with the count of its
 * open threads, which opens the cell's threads (messages with author and time; reply, resolve,
 * reopen) and a box to start one. Kept by thread id from the room's `comment_thread` broadcasts and
 * the answers to the person's requests, so an agent's comment shows as it is made. Each cell's
 * element is this object's, handed to the cell's view (see {@link PageComments.elementOf}): it
 * outlives a view drawn again.
 */
export class PageComments {
  readonly #threads = new Map<string, WireCommentThread>();
  readonly #cells = new Map<string, CellComments>();

  public constructor(private readonly host: CommentsHost) {}

  /** Reads every thread again (the page joined, or joined again after a reconnect). */
  public async load(): Promise<void> {
    const result = await this.host.sendComment({ type: 'list_comments', include_resolved: true });
    if (!result.ok) return;
    for (const thread of (result.answer as { threads: WireCommentThread[] }).threads) this.show(thread);
  }

  /** A thread as the room has it now (a broadcast, or an answer). */
  public show(thread: WireCommentThread): void {
    this.#threads.set(thread.id, thread);
    this.draw(thread.cell_id);
  }

  /** The element of `cellId`'s comments (made on first ask; kept up to date from then on). */
  public elementOf(cellId: string): HTMLElement {
    return this.cell(cellId).element;
  }

  private cell(cellId: string): CellComments {
    const known = this.#cells.get(cellId);
    if (known) return known;
    const toggle = el('button', {
      type: 'button',
      className: 'comment-toggle',
      attrs: { 'aria-expanded': 'false' },
    });
    const list = el('div', { className: 'comment-threads' });
    const box = el('textarea', {
      className: 'comment-text',
      rows: 2,
      placeholder: 'Comment on this cell…',
      attrs: { 'aria-label': 'New comment on this cell' },
    });
    const start = el('form', { className: 'comment-new' }, [
      box,
      el('button', { type: 'submit', className: 'comment-button primary', textContent: 'Comment' }),
    ]);
    start.addEventListener('submit', (event) => {
      event.preventDefault();
      const text = box.value.trim();
      if (text === '') return;
      void this.send({ type: 'add_comment', cell_id: cellId, text }).then((ok) => {
        if (ok) box.value = '';
      });
    });
    const panel = el('div', { className: 'comment-panel', hidden: true }, [list, start]);
    const element = el('div', { className: 'cell-comments' }, [toggle, panel]);
    const comments: CellComments = { element, toggle, panel, list, threads: new Map() };
    toggle.addEventListener('click', () => this.open(comments, panel.hidden));
    this.#cells.set(cellId, comments);
    this.draw(cellId);
    return comments;
  }

  private open(comments: CellComments, open: boolean): void {
    comments.panel.hidden = !open;
    comments.toggle.setAttribute('aria-expanded', String(open));
    comments.element.classList.toggle('open', open);
  }

  /** Draws the threads of `cellId` as they are now (only when its element was asked for). */
  private draw(cellId: string): void {
    const comments = this.#cells.get(cellId);
    if (!comments) return;
    const threads = [...this.#threads.values()].filter((thread) => thread.cell_id === cellId);
    const open = threads.filter((thread) => !thread.resolved).length;
    comments.toggle.textContent = threads.length === 0 ? 'Comment' : `Comments ${open}`;
    comments.toggle.title =
      threads.length === 0 ? 'Start a comment thread on this cell' : `${open} open, ${threads.length - open} resolved`;
    comments.toggle.setAttribute(
      'aria-label',
      threads.length === 0
        ? 'Comment on this cell'
        : `Comments: ${open} open thread${open === 1 ? '' : 's'}, ${threads.length - open} resolved`,
    );
    comments.element.classList.toggle('has-open', open > 0);
    const nodes = threads.map((thread) => {
      const drawn = comments.threads.get(thread.id) ?? this.makeThread(thread.id);
      comments.threads.set(thread.id, drawn);
      this.fill(drawn, thread);
      return drawn.element;
    });
    comments.list.replaceChildren(...nodes);
  }

  private makeThread(threadId: string): DrawnThread {
    const status = el('div', { className: 'comment-status' });
    const messages = el('ol', { className: 'comment-messages' });
    const resolve = el('button', { type: 'button', className: 'comment-button', textContent: 'Resolve' });
    const reopen = el('button', { type: 'button', className: 'comment-button', textContent: 'Reopen' });
    resolve.addEventListener('click', () => void this.send({ type: 'resolve_comment', thread_id: threadId }));
    reopen.addEventListener('click', () => void this.send({ type: 'reopen_comment', thread_id: threadId }));
    const box = el('textarea', {
      className: 'comment-text',
      rows: 1,
      placeholder: 'Reply…',
      attrs: { 'aria-label': 'Reply to this thread' },
    });
    const reply = el('form', { className: 'comment-reply' }, [
      box,
      el('button', { type: 'submit', className: 'comment-button primary', textContent: 'Reply' }),
      resolve,
      reopen,
    ]);
    reply.addEventListener('submit', (event) => {
      event.preventDefault();
      const text = box.value.trim();
      if (text === '') return;
      void this.send({ type: 'reply_comment', thread_id: threadId, text }).then((ok) => {
        if (ok) box.value = '';
      });
    });
    const element = el('article', { className: 'comment-thread', attrs: { 'aria-label': 'Comment thread' } }, [
      status,
      messages,
      reply,
    ]);
    element.dataset.threadId = threadId;
    return { element, status, messages, resolve, reopen, reply };
  }

  private fill(drawn: DrawnThread, thread: WireCommentThread): void {
    drawn.element.classList.toggle('resolved', thread.resolved);
    const parts: (Node | string)[] = [];
    if (thread.range) {
      const { quote, state } = thread.range;
      parts.push(el('q', { className: 'comment-quote', textContent: quote }));
      if (state !== 'intact') parts.push(el('span', { className: 'comment-range', textContent: `(range ${state})` }));
    }
    if (thread.resolved) {
      parts.push(
        el('span', { className: 'comment-resolved', textContent: `Resolved by ${thread.resolved_by ?? '?'}` }),
      );
    }
    if (thread.orphaned) parts.push(el('span', { className: 'comment-range', textContent: 'cell deleted' }));
    drawn.status.replaceChildren(...parts);
    drawn.status.hidden = parts.length === 0;
    drawn.messages.replaceChildren(
      ...thread.messages.map((message) =>
        el('li', { className: 'comment-message' }, [
          el('span', { className: 'comment-author', textContent: message.author }),
          el('time', { className: 'comment-at', dateTime: message.at, textContent: when(message.at) }),
          el('p', { className: 'comment-body', textContent: message.text }),
        ]),
      ),
    );
    drawn.resolve.hidden = thread.resolved;
    drawn.reopen.hidden = !thread.resolved;
  }

  /** Sends a change; the answer's thread is shown at once (the broadcast brings the same). True when done. */
  private async send(request: Parameters<CommentsHost['sendComment']>[0]): Promise<boolean> {
    const result = await this.host.sendComment(request);
    if (!result.ok) {
      this.host.notice(`Not done (${request.type.replace('_', ' ')}): ${result.message}`);
      return false;
    }
    const thread = (result.answer as { thread?: WireCommentThread }).thread;
    if (thread) this.show(thread);
    return true;
  }
}

/** A message's time as the person reads it (their locale's date and time). */
function when(at: string): string {
  const date = new Date(at);
  return Number.isNaN(date.getTime()) ? at : date.toLocaleString([], { dateStyle: 'short', timeStyle: 'short' });
}
