import type {
  WireCommentThreadEvent,
  WireInputRequestEvent,
  WireNotebookAnswer,
  WireRoomCondition,
  WireRuntimeState,
} from '@nteract-mcp/runtimed-protocol';
import { answerEvent } from './answer-event.js';
import type { CellHost } from './cell-view.js';
import { DocumentFollower } from './document-follower.js';
import { el } from './element.js';
import type { DocumentEvent } from './live-document.js';
import { NotebookView } from './notebook-view.js';
import { PageApi, type PageRequest } from './page-api.js';
import { PageComments } from './page-comments.js';
import { followOutputFrameHeights } from './render-output.js';
import { RoomStream, type StreamFrame } from './room-stream.js';
import type { SourceSendOutcome } from './source-sync.js';

/** How long a refused request's message stays on screen. */
const noticeMs = 8000;

/** The broadcasts that change the document (each names the version it made). */
const documentEvents: ReadonlySet<string> = new Set<DocumentEvent['event']>([
  'cell_inserted',
  'cell_updated',
  'cell_source_set',
  'cell_deleted',
  'cell_moved',
  'output_set',
  'stream_appended',
  'outputs_cleared',
  'execution_done',
]);

/** The requests whose answer is an edit of the document the room does not tell this page of. */
const editRequests: ReadonlySet<string> = new Set([
  'undo',
  'insert_cell',
  'update_cell',
  'delete_cell',
  'move_cell',
  'clear_outputs',
]);

/**
 * A notebook page, live. It reads the notebook as it opens its event stream (again when the read
 * is older than the stream's start, and after each reconnect), then applies the room's events in
 * place, by cell id, one document version at a time (see {@link DocumentFollower}): what the page
 * shows never silently differs from the room. It sends the person's requests and their presence
 * (the cell their caret is in) as the page's own peer of the room.
 */
export class LiveNotebook implements CellHost {
  readonly #api: PageApi;
  readonly #view: NotebookView;
  readonly #notice = document.getElementById('notice') as HTMLElement;
  readonly #follower: DocumentFollower;
  readonly #comments: PageComments;
  #activityReading = false;
  #activityAgain = false;
  #noticeTimer: ReturnType<typeof setTimeout> | undefined;
  #focused: string | null = null;
  #presenceSent: string | null = null;

  public constructor(
    private readonly notebookId: string,
    content: HTMLElement,
  ) {
    this.#api = new PageApi(notebookId);
    this.#comments = new PageComments({
      sendComment: (request) => this.#api.send(request),
      notice: (message) => this.notify(message),
    });
    this.#view = new NotebookView(content, this);
    this.#follower = new DocumentFollower({
      snapshot: () => this.#api.snapshot(),
      showSnapshot: (snapshot, document) => {
        this.#view.title(snapshot.path, snapshot.notebookId);
        this.#view.runtime(snapshot.runtime);
        this.#view.conditions(snapshot.conditions);
        this.#view.activity(snapshot);
        this.#view.showDocument(document);
      },
      readFailed: (error) => this.notify(`Could not read the notebook: ${(error as Error).message ?? error}`),
      orderChanged: () => this.#view.orderChanged(),
      cellChanged: (cellId) => this.#view.cellChanged(cellId),
    });
  }

  public start(): void {
    followOutputFrameHeights();
    // Leaving the page with a person's text not in the room yet asks first (the browser's own prompt).
    addEventListener('beforeunload', (event) => {
      if (this.#view.hasUnsavedText()) event.preventDefault();
    });
    const params = new URLSearchParams(location.search);
    const name = params.get('name') ?? localStorage.getItem('runtimed-name') ?? 'human';
    const stream = new RoomStream(
      `/api/notebooks/${this.notebookId}/events`,
      { name },
      {
        onHello: (peer) => {
          this.#api.peerId = peer.peer_id;
          this.#view.myPeerId = peer.peer_id;
          this.#presenceSent = null;
          if (this.#focused !== null) this.sendPresence();
          this.#follower.joined(peer.document_version);
          // The room has this page among its peers from now on (a read made before did not).
          this.readActivity();
          void this.#comments.load();
        },
        onReopen: () => this.read(),
        onFrame: (frame) => this.receive(frame),
        onState: (state) => this.#view.connection(state),
        onRefused: (message) => {
          this.#view.connection('closed');
          this.notify(message);
        },
      },
    );
    // The first read and the stream at once: a change between the two makes the read older than
    // the stream's start (its `hello` says), and the page reads again.
    this.read();
    stream.open();
  }

  /**
   * Reads the notebook and shows it, then the events that came meanwhile beyond its version; calls
   * made during a read make one more read after it.
   */
  public read(): void {
    this.#follower.read();
  }

  /**
   * Sends a person's request; its answer, or `undefined` when it was refused (the page says why).
   * The room tells the other peers of an edit, not the peer that made it: the answer's cell and
   * version are applied here like an event. What the answer says the person should know (their
   * edit replaced another peer's change, a warning) is shown.
   */
  public async send(request: PageRequest): Promise<unknown> {
    const edit = editRequests.has(request.type);
    const result = await (edit ? this.#follower.editing(() => this.#api.send(request)) : this.#api.send(request));
    if (!result.ok) {
      this.notify(`Not done (${request.type.replace('_', ' ')}): ${result.message}`);
      this.#follower.catchUp();
      return undefined;
    }
    const event = answerEvent(request, result.answer);
    if (event) this.#follower.take(event);
    // What an undo reverted is told to the other peers only: this page reads the notebook again.
    else if (request.type === 'undo') this.read();
    else this.#follower.catchUp();
    if (!edit) this.readActivity();
    const answer = result.answer as { replaced?: { by?: unknown }; warning?: unknown } | null;
    if (typeof answer?.replaced?.by === 'string') {
      this.notify(`Your edit replaced a change ${answer.replaced.by} made to the cell meanwhile.`);
    } else if (typeof answer?.warning === 'string') this.notify(answer.warning);
    return result.answer;
  }

  /**
   * Sends the person's text of a cell over the version it was written on; the answer's cell is
   * applied like an event (before this resolves). Only a refusal for good is said here: the cell
   * shows the rest.
   */
  public async sendSource(
    cellId: string,
    text: string,
    expectedVersion: string | undefined,
    key: string,
  ): Promise<SourceSendOutcome> {
    const request: PageRequest = {
      type: 'update_cell',
      cell_id: cellId,
      source: text,
      idempotency_key: key,
      ...(expectedVersion === undefined ? {} : { expected_version: expectedVersion }),
    };
    const result = await this.#follower.editing(() => this.#api.send(request));
    if (result.ok) {
      const event = answerEvent(request, result.answer);
      if (event) this.#follower.take(event);
      const answer = result.answer as WireNotebookAnswer<'update_cell'>;
      return { kind: 'applied', version: 'cell_source' in answer ? answer.cell_source.version : answer.cell.version };
    }
    this.#follower.catchUp();
    if (result.code === 'stale_cell') return { kind: 'stale' };
    if (result.unanswered) return { kind: 'unknown', message: result.message };
    this.notify(`Your edit of cell ${cellId} was not saved: ${result.message}`);
    return { kind: 'refused', message: result.message };
  }

  public notice(message: string): void {
    this.notify(message);
  }

  public async answerInput(request: WireInputRequestEvent, value: string): Promise<void> {
    const answer = (await this.send({
      type: 'input_reply',
      execution_id: request.execution_id,
      input_id: request.input_id,
      value,
    })) as { accepted?: boolean } | undefined;
    if (answer && answer.accepted === false) this.notify('The code no longer waited for that input.');
    this.#view.inputDone(request.execution_id);
  }

  public focusAfter(cellId: string): Promise<void> {
    return this.#view.focusAfter(cellId);
  }

  public commandMode(cellId: string): void {
    this.#view.select(cellId);
  }

  public focusChanged(cellId: string, focused: boolean): void {
    if (focused) {
      this.#focused = cellId;
      // The cell being edited is the selected one (Escape leaves it selected for the command keys).
      this.#view.select(cellId);
    } else if (this.#focused === cellId) this.#focused = null;
    // A caret moving from one cell to another passes through "no cell": say only where it ends.
    setTimeout(() => {
      this.sendPresence();
      // A cell far from the viewport was kept drawn while the person was on it.
      this.#view.schedule(true);
    }, 0);
  }

  public outputFrameUrl(cellId: string, index: number, version: string): string {
    return this.#api.outputFrameUrl(cellId, index, version);
  }

  public fileUrl(path: string): string {
    return this.#api.fileUrl(path);
  }

  public commentsOf(cellId: string): HTMLElement {
    return this.#comments.elementOf(cellId);
  }

  /** One broadcast of the room: a document event in version order, any other to its part of the page. */
  private receive(frame: StreamFrame): void {
    if (frame.type !== 'broadcast' || frame.event === undefined) return;
    if (documentEvents.has(frame.event)) {
      const event = frame as unknown as DocumentEvent;
      if (event.event === 'execution_done') this.#view.inputDone(event.execution_id);
      // A cell updated with its source as it was is a run beginning (its outputs cleared); a run
      // ending changes what runs: the page reads who runs what (the room sends no event for a queue).
      if (
        event.event === 'execution_done' ||
        (event.event === 'cell_updated' && this.#follower.document?.cell(event.cell.id)?.source === event.cell.source)
      ) {
        this.readActivity();
      }
      this.#follower.take(event);
      return;
    }
    switch (frame.event) {
      case 'runtime':
        this.#view.runtime(frame.runtime as WireRuntimeState);
        return;
      case 'conditions':
        this.#view.conditions(frame.conditions as WireRoomCondition[]);
        return;
      case 'presence':
        this.#view.presence(String(frame.peer_id), String(frame.peer_label), (frame.cell_id as string | null) ?? null);
        return;
      case 'peer_joined':
      case 'peer_left':
        this.readActivity();
        return;
      case 'saved':
        this.#view.title(String(frame.notebook_path), this.notebookId);
        return;
      case 'input_request':
        this.#view.inputRequest(frame as unknown as WireInputRequestEvent);
        return;
      case 'comment_thread':
        this.#comments.show((frame as unknown as WireCommentThreadEvent).thread);
        return;
    }
  }

  /** Reads who is where and what runs; coalesced like {@link read}. */
  private readActivity(): void {
    if (this.#activityReading) {
      this.#activityAgain = true;
      return;
    }
    this.#activityReading = true;
    this.#activityAgain = false;
    this.#api
      .activity()
      .then((activity) => this.#view.activity(activity))
      .catch(() => undefined)
      .finally(() => {
        this.#activityReading = false;
        if (this.#activityAgain) this.readActivity();
      });
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
