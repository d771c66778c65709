import type { Logger } from '@nteract-mcp/foundation';
import type { WireExecutionState } from '@nteract-mcp/runtimed-protocol';
import type { DocumentChange } from '../document/notebook-document.js';
import type { NotebookFileState } from '../persistence/notebook-file-state.js';
import { type JournalSettings, type LedgerRecord, RoomJournal } from '../persistence/room-journal.js';

export interface RoomJournalWriterInit {
  readonly notebookId: string;
  /** Where journals go; `undefined` turns journaling off. */
  readonly settings: JournalSettings | undefined;
  /** The room's journal when it already has one (replayed by the catalog). */
  readonly journal: RoomJournal | undefined;
  /** Whether the document is kept anywhere (a file, or the untitled store): only then is it journaled. */
  readonly isPersistent: () => boolean;
  /** The room's idempotency entries now (a restarted journal begins with them). */
  readonly ledgerSnapshot: () => readonly LedgerRecord[];
  /** The executions to keep across a daemon restart, now (a restarted journal begins with them). */
  readonly executionSnapshot: () => readonly WireExecutionState[];
  readonly logger: Logger;
}

/**
 * The journal of one room, as the room writes it: acknowledged edits (with their idempotency
 * entries) between saves, the mark of a save under way, and its restart after each save. A
 * journal that cannot be written is logged, never thrown: the caller saves at once instead.
 */
export class RoomJournalWriter {
  readonly #init: RoomJournalWriterInit;
  #journal: RoomJournal | undefined;

  public constructor(init: RoomJournalWriterInit) {
    this.#init = init;
    this.#journal = init.journal;
  }

  /** The journal grew over its cap: the room saves (which restarts it). */
  public get overCap(): boolean {
    return this.#journal?.overCap === true;
  }

  /** Writes to the journal; `false` when it could not (logged) although the document needs it. */
  public append(change: DocumentChange | undefined, ledger: LedgerRecord | undefined): boolean {
    if (!this.#journal) return this.#init.settings === undefined || !this.#init.isPersistent();
    try {
      this.#journal.append(change, ledger);
      return true;
    } catch (error) {
      this.#init.logger.error('could not append to the journal; saving at once', {
        notebookId: this.#init.notebookId,
        error,
      });
      return false;
    }
  }

  /**
   * Journals the state of an execution, so that `get_execution` answers it after a daemon restart
   * (a queued one then as aborted). Logged, never thrown, when it cannot be written.
   */
  public appendExecution(execution: WireExecutionState): void {
    if (!this.#journal) return;
    try {
      this.#journal.appendExecution(execution);
    } catch (error) {
      this.#init.logger.warn('could not journal an execution', { notebookId: this.#init.notebookId, error });
    }
  }

  /** Marks a save of text hashed `sha` under way; the mark's sequence number (infinity without a journal). */
  public markSaving(sha: string): number {
    try {
      if (this.#journal) return this.#journal.markSaving(sha);
    } catch (error) {
      this.#init.logger.warn('could not mark the save in the journal', { notebookId: this.#init.notebookId, error });
    }
    return Number.POSITIVE_INFINITY;
  }

  /** After a save (or reload) of `state`: the journal restarts from it, keeping edits after `savedSeq`. */
  public rotate(state: NotebookFileState, savedSeq: number): void {
    const { settings, notebookId } = this.#init;
    if (!settings || !this.#init.isPersistent()) return;
    const base = { path: state.path, size: state.size, mtime_ms: state.mtimeMs, sha256: state.sha256 };
    try {
      const executions = this.#init.executionSnapshot();
      if (this.#journal) this.#journal.rotate(base, this.#init.ledgerSnapshot(), savedSeq, executions);
      else this.#journal = RoomJournal.begin(settings, notebookId, base, this.#init.ledgerSnapshot(), executions);
    } catch (error) {
      this.#init.logger.error('could not rotate the journal', { notebookId, error });
    }
  }

  /** Closes the journal; with `discard` (the document is saved and the room goes away) it is deleted. */
  public close(discard: boolean): void {
    try {
      if (discard) this.#journal?.discard();
      else this.#journal?.close();
    } catch (error) {
      this.#init.logger.warn('could not close the journal', { notebookId: this.#init.notebookId, error });
    }
    this.#journal = undefined;
  }
}
