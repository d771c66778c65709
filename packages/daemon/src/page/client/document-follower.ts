import { type DocumentEvent, LiveDocument } from './live-document.js';
import type { NotebookSnapshot } from './notebook-snapshot.js';

/** What the {@link DocumentFollower} asks of the page: its reads, and what to show. */
export interface DocumentFollowerHost {
  /** Reads the notebook as it is now. */
  snapshot(): Promise<NotebookSnapshot>;
  /** A fresh read: the page shows it whole (`document` is the page's copy from now on). */
  showSnapshot(snapshot: NotebookSnapshot, document: LiveDocument): void;
  /** A read failed (the page keeps what it showed). */
  readFailed(error: unknown): void;
  /** Cells came, went or moved. */
  orderChanged(): void;
  /** One cell changed (its content, outputs or execution count). */
  cellChanged(cellId: string): void;
}

/**
 * How the page follows the room's document: it reads the notebook, then applies the room's events
 * in place, one document version at a time. An event is applied when it makes the page's version
 * + 1; one further ahead waits for the versions before it (the page's own edits come back as
 * answers to its requests, not as events), and when none of the page's edits is on its way the gap
 * is closed by reading the notebook again, as is an event that does not fit, and a copy older than
 * the version the page's stream joined at. Reads are coalesced: calls during a read make one more
 * read after it. No DOM here: the host shows what it reports.
 */
export class DocumentFollower {
  #document: LiveDocument | undefined;
  /** Events that came ahead of the page's version (or during a read), by the version they make. */
  readonly #waiting = new Map<number, DocumentEvent[]>();
  /** The page's edit requests not answered yet. */
  #editing = 0;
  #reading = false;
  #readAgain = false;
  /** The document's version when the page's stream joined the room: the page must have it at least. */
  #joinedAt = 0;

  public constructor(private readonly host: DocumentFollowerHost) {}

  /** The page's copy of the notebook (none before the first read). */
  public get document(): LiveDocument | undefined {
    return this.#document;
  }

  /** The page's stream joined the room at `version`: the page reads again if its copy is older. */
  public joined(version: number): void {
    this.#joinedAt = version;
    this.catchUp();
  }

  /** Reads the notebook and shows it, then the events that came meanwhile beyond its version. */
  public read(): void {
    if (this.#reading) {
      this.#readAgain = true;
      return;
    }
    this.#reading = true;
    this.#readAgain = false;
    this.host
      .snapshot()
      .then((snapshot) => {
        this.#document = new LiveDocument(snapshot.documentVersion, snapshot.cells);
        this.host.showSnapshot(snapshot, this.#document);
      })
      .catch((error: unknown) => this.host.readFailed(error))
      .finally(() => {
        this.#reading = false;
        if (this.#readAgain) this.read();
        else this.catchUp();
      });
  }

  /**
   * Runs one of the page's edit requests: while it is on its way, a gap in the versions waits for
   * its answer (which fills it) instead of reading the notebook again.
   */
  public async editing<T>(send: () => Promise<T>): Promise<T> {
    this.#editing++;
    try {
      return await send();
    } finally {
      this.#editing--;
    }
  }

  /** Applies `event` when it makes the next version, keeps it when it is ahead, reads again when it does not fit. */
  public take(event: DocumentEvent): void {
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
      if (result.change === 'order') this.host.orderChanged();
      else this.host.cellChanged(result.change.cellId);
    }
    this.catchUp();
  }

  /**
   * Applies the events kept for the versions that now follow; when some are still ahead and no
   * edit of the page's is on its way (whose answer would fill the gap), reads the notebook again.
   */
  public catchUp(): void {
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

  private wait(event: DocumentEvent): void {
    const version = event.document_version;
    if (version === undefined) return;
    const waiting = this.#waiting.get(version);
    if (waiting) waiting.push(event);
    else this.#waiting.set(version, [event]);
  }
}
