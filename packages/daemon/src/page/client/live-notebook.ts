import type {
  WireInputRequestEvent,
  WireNotebookAnswer,
  WireRoomCondition,
  WireRuntimeState,
} from '@nteract-mcp/runtimed-protocol';
import type { CellHost } from './cell-view.js';
import { el } from './element.js';
import { type DocumentEvent, LiveDocument } from './live-document.js';
import { NotebookView } from './notebook-view.js';
import { PageApi, type PageRequest } from './page-api.js';
import { followOutputFrameHeights } from './render-output.js';
import { RoomStream, type StreamFrame } from './room-stream.js';
import type { SourceSendOutcome } from './source-sync.js';

/** How long a refused request's message stays on screen. */
const noticeMs = 8000;

/** The broadcasts that change the document (each names the version it made). */
const documentEvents: ReadonlySet<string> = new Set<DocumentEvent['event']>([
  'cell_inserted',
  'cell_updated',
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
 * place, by cell id, one document version at a time: an event is applied when it makes the page's
 * version + 1; one further ahead waits for the versions before it (the page's own edits come back
 * as answers to its requests, not as events), and when none of the page's requests is on its way
 * the gap is closed by reading the notebook again, as is an event that does not fit. What the page
 * shows never silently differs from the room. It sends the person's requests and their presence
 * (the cell their caret is in) as the page's own peer of the room.
 */
export class LiveNotebook implements CellHost {
  readonly #api: PageApi;
  readonly #view: NotebookView;
  readonly #notice = document.getElementById('notice') as HTMLElement;
  #document: LiveDocument | undefined;
  /** Events that came ahead of the page's version (or during a read), by the version they make. */
  readonly #waiting = new Map<number, DocumentEvent[]>();
  /** The page's edit requests not answered yet. */
  #editing = 0;
  #reading = false;
  #readAgain = false;
  /** The document's version when the page's stream joined the room: the page must have it at least. */
  #joinedAt = 0;
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
    this.#view = new NotebookView(content, this);
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
          this.#joinedAt = peer.document_version;
          this.catchUp();
          // The room has this page among its peers from now on (a read made before did not).
          this.readActivity();
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
    if (this.#reading) {
      this.#readAgain = true;
      return;
    }
    this.#reading = true;
    this.#readAgain = false;
    this.#api
      .snapshot()
      .then((snapshot) => {
        this.#document = new LiveDocument(snapshot.documentVersion, snapshot.cells);
        this.#view.title(snapshot.path, snapshot.notebookId);
        this.#view.runtime(snapshot.runtime);
        this.#view.conditions(snapshot.conditions);
        this.#view.activity(snapshot);
        this.#view.showDocument(this.#document);
      })
      .catch((error: unknown) => this.notify(`Could not read the notebook: ${(error as Error).message ?? error}`))
      .finally(() => {
        this.#reading = false;
        if (this.#readAgain) this.read();
        else this.catchUp();
      });
  }

  /**
   * Sends a person's request; its answer, or `undefined` when it was refused (the page says why).
   * The room tells the other peers of an edit, not the peer that made it: the answer's cell and
   * version are applied here like an event. What the answer says the person should know (their
   * edit replaced another peer's change, a warning) is shown.
   */
  public async send(request: PageRequest): Promise<unknown> {
    const edit = editRequests.has(request.type);
    if (edit) this.#editing++;
    const result = await this.#api.send(request).finally(() => {
      if (edit) this.#editing--;
    });
    if (!result.ok) {
      this.notify(`Not done (${request.type.replace('_', ' ')}): ${result.message}`);
      this.catchUp();
      return undefined;
    }
    const event = answerEvent(request, result.answer);
    if (event) this.take(event);
    // What an undo reverted is told to the other peers only: this page reads the notebook again.
    else if (request.type === 'undo') this.read();
    else this.catchUp();
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
    this.#editing++;
    const result = await this.#api.send(request).finally(() => {
      this.#editing--;
    });
    if (result.ok) {
      const event = answerEvent(request, result.answer);
      if (event) this.take(event);
      return { kind: 'applied', version: (result.answer as WireNotebookAnswer<'update_cell'>).cell.version };
    }
    this.catchUp();
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
        (event.event === 'cell_updated' && this.#document?.cell(event.cell.id)?.source === event.cell.source)
      ) {
        this.readActivity();
      }
      this.take(event);
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
    }
  }

  /** Applies `event` when it makes the next version, keeps it when it is ahead, reads again when it does not fit. */
  private take(event: DocumentEvent): void {
    const document = this.#document;
    if (this.#reading || !document) {
      this.wait(event);
      return;
    }
    const result = document.apply(event);
    if (result.kind === 'misfit') {
      this.read();
      return;
    }
    if (result.kind === 'ahead') this.wait(event);
    if (result.kind === 'applied') {
      if (result.change === 'order') this.#view.orderChanged();
      else this.#view.cellChanged(result.change.cellId);
    }
    this.catchUp();
  }

  private wait(event: DocumentEvent): void {
    const version = event.document_version;
    if (version === undefined) return;
    const waiting = this.#waiting.get(version);
    if (waiting) waiting.push(event);
    else this.#waiting.set(version, [event]);
  }

  /**
   * Applies the events kept for the versions that now follow; when some are still ahead and no
   * edit of the page's is on its way (whose answer would fill the gap), reads the notebook again.
   */
  private catchUp(): void {
    const document = this.#document;
    if (this.#reading || !document) return;
    for (const version of this.#waiting.keys()) if (version <= document.version) this.#waiting.delete(version);
    const next = this.#waiting.get(document.version + 1);
    if (next) {
      this.#waiting.delete(document.version + 1);
      for (const event of next) this.take(event);
      return;
    }
    if ((this.#waiting.size > 0 && this.#editing === 0) || document.version < this.#joinedAt) this.read();
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

/** The edit an answer to the page's own request made, as the event the room told the other peers. */
function answerEvent(request: PageRequest, answer: unknown): DocumentEvent | undefined {
  switch (request.type) {
    case 'insert_cell': {
      const { cell, index, document_version } = answer as WireNotebookAnswer<'insert_cell'>;
      return { event: 'cell_inserted', document_version, index, cell };
    }
    case 'update_cell':
    case 'clear_outputs': {
      const { cell, document_version } = answer as WireNotebookAnswer<'update_cell'>;
      return { event: 'cell_updated', document_version, cell };
    }
    case 'delete_cell': {
      const { document_version } = answer as WireNotebookAnswer<'delete_cell'>;
      return { event: 'cell_deleted', document_version, cell_id: request.cell_id };
    }
    case 'move_cell': {
      const { document_version, index } = answer as WireNotebookAnswer<'move_cell'>;
      return { event: 'cell_moved', document_version, cell_id: request.cell_id, index };
    }
    default:
      return undefined;
  }
}
