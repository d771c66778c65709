import type { WireNotebookRequest } from '@nteract-mcp/runtimed-protocol';
import { type NotebookSnapshot, type RoomListing, readActivity, readSnapshot } from './notebook-snapshot.js';
import { sessionFetch } from './page-session.js';

/** The requests a person makes from the page. */
export type PageRequest = Extract<
  WireNotebookRequest,
  {
    type:
      | 'insert_cell'
      | 'update_cell'
      | 'delete_cell'
      | 'move_cell'
      | 'execute_cell'
      | 'interrupt'
      | 'clear_outputs'
      | 'restart_kernel'
      | 'save'
      | 'input_reply'
      | 'undo'
      | 'add_comment'
      | 'reply_comment'
      | 'resolve_comment'
      | 'reopen_comment'
      | 'list_comments';
  }
>;

/** The requests that carry an idempotency key (an edit or a run: sent again, it applies once). */
const keyedRequests: ReadonlySet<PageRequest['type']> = new Set([
  'insert_cell',
  'update_cell',
  'delete_cell',
  'move_cell',
  'execute_cell',
  'clear_outputs',
  'undo',
  'add_comment',
  'reply_comment',
]);

/**
 * How a request ended: done, or not, with the server's reason and code; `unanswered` when nothing
 * says whether it was applied (no answer: the daemon down or restarting) or it was not applied and may
 * be asked again (the daemon stopping): the same request, with its key, may be sent again.
 */
export type PageRequestResult =
  | { readonly ok: true; readonly answer: unknown }
  | { readonly ok: false; readonly message: string; readonly code?: string; readonly unanswered: boolean };

/**
 * The page server's HTTP API for one page: reading the notebook, its activity and the room list, and a person's
 * requests, made as the page's own peer of the room (the id its event stream's `hello` gave), all
 * with the page's session ({@link sessionFetch}).
 */
export class PageApi {
  /** The page's peer id in the room (set from the stream's `hello`; new after a reconnect). */
  public peerId: string | undefined;
  /** What lets the page's output frames load (from the last snapshot). */
  #outputCapability = '';

  public constructor(private readonly notebookId: string | undefined) {}

  public static async rooms(): Promise<RoomListing[]> {
    const answer = await sessionFetch('/api/rooms');
    if (!answer.ok) throw new Error(await answer.text());
    return ((await answer.json()) as { rooms: RoomListing[] }).rooms;
  }

  public async snapshot(): Promise<NotebookSnapshot> {
    const answer = await sessionFetch(`/api/notebooks/${this.notebookId}`);
    if (!answer.ok) throw new Error(await answer.text());
    const snapshot = readSnapshot(await answer.json());
    this.#outputCapability = snapshot.outputCapability;
    return snapshot;
  }

  /** Who is in the room and what runs and waits (a small read, beside the events). */
  public async activity(): Promise<ReturnType<typeof readActivity>> {
    const answer = await sessionFetch(`/api/notebooks/${this.notebookId}/activity`);
    if (!answer.ok) throw new Error(await answer.text());
    return readActivity(await answer.json());
  }

  /**
   * Sends one request through the room, with an idempotency key (its own, or a new one): a request
   * sent again with its key applies once.
   */
  public async send(request: PageRequest): Promise<PageRequestResult> {
    const key = (request as { idempotency_key?: string | null }).idempotency_key ?? `page-${crypto.randomUUID()}`;
    const body = keyedRequests.has(request.type) ? { ...request, idempotency_key: key } : request;
    try {
      const answer = await sessionFetch(`/api/notebooks/${this.notebookId}/requests`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'X-Runtimed-Peer': this.peerId ?? '' },
        body: JSON.stringify(body),
      });
      if (!answer.ok) {
        const problem = await readProblem(answer);
        // Not applied, and may be asked again: the daemon stopping, or restarted and not yet joined by this page's stream.
        const unanswered =
          answer.status >= 502 || problem.code === 'shutting_down' || problem.code === 'page_not_joined';
        return { ok: false, message: problem.message, ...(problem.code ? { code: problem.code } : {}), unanswered };
      }
      return { ok: true, answer: await answer.json() };
    } catch (error) {
      return { ok: false, message: error instanceof Error ? error.message : String(error), unanswered: true };
    }
  }

  /** Tells the room which cell the person is on (`null`: none). Best effort: a failure changes nothing. */
  public async presence(cellId: string | null): Promise<void> {
    if (this.peerId === undefined) return;
    await sessionFetch(`/api/notebooks/${this.notebookId}/presence`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-Runtimed-Peer': this.peerId },
      body: JSON.stringify({ cell_id: cellId }),
    }).catch(() => undefined);
  }

  /** Where an image at `path` relative to the notebook's folder is served (with the page's capability). */
  public fileUrl(path: string): string {
    const encoded = path.split('/').map(encodeURIComponent).join('/');
    return `/notebooks/${this.notebookId}/files/${encoded}?cap=${this.#outputCapability}`;
  }

  /** Where a cell's HTML or SVG output is served for its sandboxed frame. */
  public outputFrameUrl(cellId: string, index: number, version: string): string {
    return `/notebooks/${this.notebookId}/outputs/${cellId}/${index}?v=${version}&cap=${this.#outputCapability}`;
  }
}

async function readProblem(answer: Response): Promise<{ message: string; code?: string }> {
  const text = await answer.text().catch(() => '');
  try {
    const parsed = JSON.parse(text) as { message?: unknown; code?: unknown };
    if (typeof parsed.message === 'string') {
      return { message: parsed.message, ...(typeof parsed.code === 'string' ? { code: parsed.code } : {}) };
    }
  } catch {
    // Plain text: said as it is.
  }
  return { message: text || `HTTP ${answer.status}` };
}
