import {
  closeSync,
  fdatasyncSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { type CommentRecord, CommentThreads, type StoredCommentThread } from '../room/comment-threads.js';
import { writeFileAtomic } from './write-file-atomic.js';

/** Where a notebook's comments are kept now. */
export interface CommentSidecar {
  /** `<notebook>.ipynb.comments.json`: beside the notebook's file, or beside its untitled store file. */
  readonly path: string;
  /** File mode of a new sidecar (an untitled notebook's stays private). */
  readonly mode: number;
}

export interface CommentStoreInit {
  readonly notebookId: string;
  /** Where the comments are kept now (it follows a save to another path); `undefined`: nowhere (an ephemeral notebook). */
  readonly sidecar: () => CommentSidecar | undefined;
  /** The journal directory (the rooms' journals'); `undefined`: no journal, each change is written to the sidecar before it is answered. */
  readonly journalDir: string | undefined;
  readonly fsync: boolean;
}

/** The sidecar file's contents. */
interface SidecarFile {
  readonly nteract_comments: 1;
  readonly notebook_id: string;
  /** The last journal record the file holds. */
  readonly seq: number;
  readonly threads: StoredCommentThread[];
  readonly keys: Record<string, string>;
}

interface JournalLine {
  readonly seq: number;
  readonly record: CommentRecord;
}

/** The sidecar path of a notebook whose document is kept at `documentPath`. */
export function commentSidecarPath(documentPath: string): string {
  return `${documentPath}.comments.json`;
}

/**
 * Where one notebook's comment threads are kept: a sidecar JSON file beside the notebook (never the
 * notebook's cells or metadata: the `.ipynb` is the same with or without comments), and between
 * writes of it a journal, `<journalDir>/<notebookId>.comments.jsonl`, one line per change appended
 * with one synchronous write before the change is answered (as the room journals its edits), so a
 * comment acknowledged to a peer survives a killed daemon. The sidecar is written (temp file, fsync,
 * rename: {@link writeFileAtomic}) a moment after a change and when the room flushes; the journal
 * then restarts with only the changes the sidecar missed. Reading it back is the sidecar, then the
 * journal's records after the sidecar's `seq` (a torn last line is ignored).
 */
export class CommentStore {
  readonly #init: CommentStoreInit;
  #seq: number;
  /** Journal lines the sidecar does not hold yet. */
  #pending: JournalLine[] = [];
  /** Where the last sidecar was written (a sidecar left behind by a save to another path is removed). */
  #written: string | undefined;
  #flushing: Promise<void> = Promise.resolve();
  #dirty = false;

  private constructor(init: CommentStoreInit, seq: number, written: string | undefined, pending: JournalLine[]) {
    this.#init = init;
    this.#seq = seq;
    this.#written = written;
    this.#pending = pending;
  }

  /** The journal file of `notebookId`'s comments in `journalDir`. */
  public static journalOf(journalDir: string, notebookId: string): string {
    return join(journalDir, `${notebookId}.comments.jsonl`);
  }

  /**
   * Reads the notebook's comments: the sidecar (a missing one is none; an unreadable one is set
   * aside as `.corrupt-<time>` and counts as none), then the journal's changes after it.
   */
  public static load(init: CommentStoreInit, now: number): { store: CommentStore; threads: CommentThreads } {
    const sidecar = init.sidecar();
    let file: SidecarFile | undefined;
    if (sidecar) {
      try {
        const parsed = JSON.parse(readFileSync(sidecar.path, 'utf8')) as SidecarFile;
        if (parsed?.nteract_comments !== 1 || !Array.isArray(parsed.threads)) throw new Error('not a comments file');
        file = parsed;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') {
          renameSync(sidecar.path, `${sidecar.path}.corrupt-${now}`);
        }
      }
    }
    const threads = new CommentThreads(file?.threads ?? [], file?.keys ?? {});
    let seq = file?.seq ?? 0;
    const pending: JournalLine[] = [];
    if (init.journalDir !== undefined) {
      for (const line of readJournal(CommentStore.journalOf(init.journalDir, init.notebookId))) {
        if (line.seq <= seq) continue;
        try {
          threads.apply(line.record);
        } catch {
          // A change that no longer applies (its thread gone with a sidecar set aside): skipped.
        }
        seq = line.seq;
        pending.push(line);
      }
    }
    const store = new CommentStore(init, seq, file ? sidecar?.path : undefined, pending);
    if (pending.length > 0) store.#dirty = true;
    return { store, threads };
  }

  /**
   * Makes `record` (applied to `threads` already) durable before it is answered: appended to the journal (one synchronous write),
   * or, without a journal, by writing the sidecar now (awaited). Throws when it could not be made
   * durable; with nowhere to keep comments (an ephemeral notebook) it resolves at once.
   */
  public async append(record: CommentRecord, threads: CommentThreads): Promise<void> {
    const line: JournalLine = { seq: this.#seq + 1, record };
    this.#seq = line.seq;
    this.#dirty = true;
    const { journalDir } = this.#init;
    if (this.#init.sidecar() === undefined) return;
    if (journalDir === undefined) {
      this.#pending.push(line);
      await this.flush(threads);
      return;
    }
    const file = CommentStore.journalOf(journalDir, this.#init.notebookId);
    mkdirSync(journalDir, { recursive: true, mode: 0o700 });
    const fd = openSync(file, 'a', 0o600);
    try {
      writeSync(fd, `${JSON.stringify(line)}\n`);
      if (this.#init.fsync) fdatasyncSync(fd);
    } finally {
      closeSync(fd);
    }
    this.#pending.push(line);
  }

  /**
   * Writes the sidecar with `threads` as they are now (when anything changed since the last write),
   * then restarts the journal with the changes made meanwhile. Writes run one after another.
   */
  public flush(threads: CommentThreads): Promise<void> {
    const next = this.#flushing.then(() => this.write(threads));
    this.#flushing = next.catch(() => undefined);
    return next;
  }

  private async write(threads: CommentThreads): Promise<void> {
    const sidecar = this.#init.sidecar();
    if (!this.#dirty || sidecar === undefined) return;
    // Nothing ever commented: no sidecar is made beside the notebook.
    if (threads.size === 0 && this.#written === undefined) {
      this.#dirty = false;
      this.restartJournal(this.#seq);
      return;
    }
    const seq = this.#seq;
    this.#dirty = false;
    const file: SidecarFile = { nteract_comments: 1, notebook_id: this.#init.notebookId, seq, ...threads.snapshot() };
    try {
      await writeFileAtomic(sidecar.path, `${JSON.stringify(file, null, 1)}\n`, sidecar.mode);
    } catch (error) {
      this.#dirty = true;
      throw error;
    }
    if (this.#written !== undefined && this.#written !== sidecar.path) rmSync(this.#written, { force: true });
    this.#written = sidecar.path;
    this.restartJournal(seq);
  }

  /** The journal with only the changes after `seq` (none: it is removed). */
  private restartJournal(seq: number): void {
    this.#pending = this.#pending.filter((line) => line.seq > seq);
    const { journalDir, notebookId } = this.#init;
    if (journalDir === undefined) return;
    const file = CommentStore.journalOf(journalDir, notebookId);
    if (this.#pending.length === 0) {
      rmSync(file, { force: true });
      return;
    }
    const temp = `${file}.${process.pid}.tmp`;
    writeFileSync(temp, this.#pending.map((line) => `${JSON.stringify(line)}\n`).join(''), { mode: 0o600 });
    renameSync(temp, file);
  }
}

/** The records of a comments journal, in order; a missing file is none, a torn last line is ignored. */
function readJournal(file: string): JournalLine[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  const lines: JournalLine[] = [];
  for (const line of text.split('\n')) {
    if (line.length === 0) continue;
    try {
      const parsed = JSON.parse(line) as JournalLine;
      if (typeof parsed.seq === 'number' && parsed.record) lines.push(parsed);
    } catch {
      break;
    }
  }
  return lines;
}
