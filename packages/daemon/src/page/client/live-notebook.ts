import type { CellHost } from './cell-view.js';
import { el } from './element.js';
import { NotebookView } from './notebook-view.js';
import { PageApi, type PageRequest } from './page-api.js';
import { followOutputFrameHeights } from './render-output.js';
import { RoomStream } from './room-stream.js';

/** How long a refused request's message stays on screen. */
const noticeMs = 8000;

/**
 * A notebook page, live: reads the notebook, follows the room's event stream (each broadcast reads
 * it again: one read at a time, and one more when something changed during a read, so the last
 * state always shows and reads never overtake each other), sends the person's requests and their
 * presence (the cell their caret is in) as the page's own peer of the room.
 */
export class LiveNotebook implements CellHost {
  readonly #api: PageApi;
  readonly #view: NotebookView;
  readonly #notice = document.getElementById('notice') as HTMLElement;
  #reading = false;
  #again = false;
  #noticeTimer: ReturnType<typeof setTimeout> | undefined;
  #focused: string | null = null;
  #presenceSent: string | null = null;

  public constructor(
    private readonly notebookId: string,
    content: HTMLElement,
  ) {
    this.#api = new PageApi(notebookId);
    this.#view = new NotebookView(content, this);
  }

  public start(): void {
    followOutputFrameHeights();
    const params = new URLSearchParams(location.search);
    const name = params.get('name') ?? localStorage.getItem('runtimed-name') ?? 'human';
    const stream = new RoomStream(`/api/notebooks/${this.notebookId}/events?name=${encodeURIComponent(name)}`, {
      onHello: (peer) => {
        this.#api.peerId = peer.peer_id;
        this.#view.myPeerId = peer.peer_id;
        this.#presenceSent = null;
        if (this.#focused !== null) this.sendPresence();
      },
      onChange: () => this.refresh(),
      onState: (state) => this.#view.connection(state),
    });
    stream.open();
    this.refresh();
  }

  /** Reads the notebook and shows it; coalesces calls made during a read into one more read. */
  public refresh(): void {
    if (this.#reading) {
      this.#again = true;
      return;
    }
    this.#reading = true;
    this.#again = false;
    this.#api
      .snapshot()
      .then((snapshot) => this.#view.apply(snapshot))
      .catch((error: unknown) => this.notify(`Could not read the notebook: ${(error as Error).message ?? error}`))
      .finally(() => {
        this.#reading = false;
        if (this.#again) this.refresh();
      });
  }

  /**
   * Sends a person's request; its answer, or `undefined` when it was refused (the page says why).
   * The room tells the other peers of an edit, not the peer that made it, so the page reads the
   * notebook again itself once the edit is done. What the answer says the person should know (their
   * edit replaced another peer's change, a warning) is shown.
   */
  public async send(request: PageRequest): Promise<unknown> {
    const result = await this.#api.send(request);
    if (!result.ok) {
      this.notify(`Not done (${request.type.replace('_', ' ')}): ${result.message}`);
      return undefined;
    }
    this.refresh();
    const answer = result.answer as { replaced?: { by?: unknown }; warning?: unknown } | null;
    if (typeof answer?.replaced?.by === 'string') {
      this.notify(`Your edit replaced a change ${answer.replaced.by} made to the cell meanwhile.`);
    } else if (typeof answer?.warning === 'string') this.notify(answer.warning);
    return result.answer;
  }

  public focusChanged(cellId: string, focused: boolean): void {
    if (focused) this.#focused = cellId;
    else if (this.#focused === cellId) this.#focused = null;
    // A caret moving from one cell to another passes through "no cell": say only where it ends.
    setTimeout(() => this.sendPresence(), 0);
  }

  public outputFrameUrl(cellId: string, index: number, version: string): string {
    return this.#api.outputFrameUrl(cellId, index, version);
  }

  private sendPresence(): void {
    if (this.#focused === this.#presenceSent || this.#api.peerId === undefined) return;
    this.#presenceSent = this.#focused;
    void this.#api.presence(this.#focused);
  }

  private notify(message: string): void {
    clearTimeout(this.#noticeTimer);
    this.#notice.replaceChildren(el('span', { textContent: message }));
    this.#notice.hidden = false;
    this.#noticeTimer = setTimeout(() => {
      this.#notice.hidden = true;
    }, noticeMs);
  }
}
