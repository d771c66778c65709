import { createHash } from 'node:crypto';
import {
  closeSync,
  fdatasyncSync,
  fstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  renameSync,
  rmSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import type { WireExecutionState } from '@nteract-mcp/runtimed-protocol';
import type { DocumentChange } from '../document/notebook-document.js';
import { serializeBlobTextsAs } from './blob-text.js';
import { OutputBlobStore } from './output-blob-store.js';

/** Where a room's journal lives and how hard it writes. */
export interface JournalSettings {
  /** `<dataDir>/journal`, created 0700. */
  readonly dir: string;
  /** fdatasync after every appended edit (survives power loss, not only a process crash). */
  readonly fsync: boolean;
  /** Above this many bytes the room saves at once, which rotates the journal. */
  readonly maxBytes: number;
  /**
   * Where strings over its threshold (large outputs) go instead of into the journal's lines: each
   * line holds a reference. Without it the journal holds every output inline.
   */
  readonly blobs?: OutputBlobStore;
}

/** The file a journal starts from: what the `.ipynb` (or untitled store file) held when it began. */
export interface JournalBase {
  readonly path: string;
  readonly size: number;
  readonly mtime_ms: number;
  readonly sha256: string;
}

/** An idempotency-ledger entry kept in the journal, so a replayed request key still dedupes. */
export interface LedgerRecord {
  readonly key: string;
  readonly operation: string;
  readonly result: unknown;
}

interface JournalHeader {
  readonly journal: 1;
  readonly notebook_id: string;
  readonly base: JournalBase;
  readonly ledger: readonly LedgerRecord[];
  /** The executions kept for `get_execution` when the journal (re)started (absent in older journals). */
  readonly executions?: readonly WireExecutionState[];
}

/**
 * One line after the header: an edit (with its ledger entry), the state of an execution (queued,
 * or finished with its outputs), or the mark of a save about to be written.
 */
export interface JournalRecord {
  readonly seq: number;
  readonly change?: DocumentChange;
  readonly ledger?: LedgerRecord;
  readonly execution?: WireExecutionState;
  /** sha256 of the text a save is writing; every record before this one is in it. */
  readonly saving?: string;
}

/** A line after the header: where it is in the file (not its text, which may hold large outputs). */
interface JournalLine {
  readonly seq: number;
  /** Byte offset of the line in the journal file. */
  readonly offset: number;
  /** Bytes of the line, its newline included. */
  readonly bytes: number;
  readonly saving: boolean;
}

/** A line to write again at a rotation: its text, read back from the file. */
interface RewrittenLine {
  readonly seq: number;
  readonly text: string;
  readonly saving: boolean;
}

export interface JournalContents {
  readonly file: string;
  readonly header: JournalHeader;
  readonly records: readonly JournalRecord[];
}

/** What replaying a journal onto the file as it is now means. */
export interface JournalReplay {
  readonly changes: readonly DocumentChange[];
  readonly ledger: readonly LedgerRecord[];
  /** The last journaled state of each execution, oldest first. */
  readonly executions: readonly WireExecutionState[];
}

/**
 * `value` as one journal line's JSON: a value the room keeps in a blob (a {@link BlobText}) as its
 * reference, a string over the threshold stored as a blob and referenced.
 */
function journalLine(value: unknown, blobs: OutputBlobStore | undefined): string {
  return serializeBlobTextsAs(
    (blob) => blob.reference(),
    () => JSON.stringify(value, blobs?.replacer),
  );
}

export function sha256(text: string | Buffer): string {
  return createHash('sha256').update(text).digest('hex');
}

/**
 * A room's append-only journal, `<dir>/<notebookId>.jsonl` (0600 in a 0700 dir): a header naming
 * the base file (size, mtime, sha256) and the idempotency ledger at that point, then one JSON line
 * per acknowledged edit (and one per execution queued or ended: its state, so `get_execution`
 * answers a finished execution after a daemon restart; the header keeps the most recent ones across
 * a rotation), written with one synchronous `write` before the room answers (the page
 * cache survives a killed process; with `fsync` also a lost machine). After a save the journal is
 * rotated: rewritten (temp file, rename) from the new base with only the edits the save missed.
 *
 * Guarantees: an edit whose `append` returned is in the file; a torn last line is ignored on read.
 * Does not guarantee anything once the base file was changed by someone else: {@link planReplay}
 * then refuses, and the caller sets the journal aside.
 */
export class RoomJournal {
  readonly #settings: JournalSettings;
  readonly #notebookId: string;
  readonly #file: string;
  #fd: number | undefined;
  #seq: number;
  #bytes = 0;
  /**
   * Where the lines after the header are, for rotation (bounded by `maxBytes`, since a save
   * rotates). Their text is read back from the file then: holding it here would keep a second copy
   * of every journaled output in memory until the next save.
   */
  #lines: JournalLine[] = [];
  /** The blobs this journal's file references (its header and lines). */
  #references = new Set<string>();

  private constructor(settings: JournalSettings, notebookId: string, seq: number) {
    this.#settings = settings;
    this.#notebookId = notebookId;
    this.#file = RoomJournal.fileOf(settings.dir, notebookId);
    this.#seq = seq;
  }

  public static fileOf(dir: string, notebookId: string): string {
    return join(dir, `${notebookId}.jsonl`);
  }

  /** The notebook ids that have a journal in `dir`. */
  public static list(dir: string): string[] {
    try {
      return readdirSync(dir)
        .filter((name) => /^[0-9a-f-]{36}\.jsonl$/.test(name))
        .map((name) => name.slice(0, -'.jsonl'.length));
    } catch {
      return [];
    }
  }

  /**
   * The journal of `notebookId`, `undefined` when there is none, `'corrupt'` when its header is
   * unreadable. The large strings its lines reference are read from `blobs`.
   */
  public static read(
    dir: string,
    notebookId: string,
    blobs?: OutputBlobStore,
  ): JournalContents | 'corrupt' | undefined {
    const file = RoomJournal.fileOf(dir, notebookId);
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
    const lines = text.split('\n');
    let header: JournalHeader;
    try {
      header = JSON.parse(lines[0] ?? '', blobs?.reviver) as JournalHeader;
    } catch {
      return 'corrupt';
    }
    if (header?.journal !== 1 || typeof header.base?.sha256 !== 'string' || !Array.isArray(header.ledger))
      return 'corrupt';
    const records: JournalRecord[] = [];
    for (const line of lines.slice(1)) {
      if (line.length === 0) continue;
      try {
        const record = JSON.parse(line, blobs?.reviver) as JournalRecord;
        if (typeof record.seq === 'number') records.push(record);
      } catch {
        // A torn last line (a write cut short by a lost machine): everything before it stands.
        break;
      }
    }
    return { file, header, records };
  }

  /**
   * Which of `contents`' edits the file (whose sha256 is `fileSha`) lacks: all of them when it is
   * still the base, those after the last save mark whose text it holds when that save landed but
   * the rotation did not. `undefined` when the file is neither (someone else changed it).
   */
  public static planReplay(contents: JournalContents, path: string, fileSha: string): JournalReplay | undefined {
    const { header, records } = contents;
    const ledger = [...header.ledger, ...records.flatMap((record) => (record.ledger ? [record.ledger] : []))];
    let after: number | undefined;
    if (header.base.path === path && header.base.sha256 === fileSha) after = -1;
    else {
      // The save it marks landed (the file holds its text) but the rotation after it did not.
      for (const record of records) if (record.saving === fileSha) after = record.seq;
    }
    if (after === undefined) return undefined;
    const from = after;
    return {
      changes: records.flatMap((record) => (record.seq > from && record.change ? [record.change] : [])),
      ledger,
      executions: RoomJournal.executionsOf(contents),
    };
  }

  /** The last journaled state of each execution in `contents` (header, then records), oldest first. */
  public static executionsOf(contents: JournalContents): WireExecutionState[] {
    const latest = new Map<string, WireExecutionState>();
    const states = [
      ...(contents.header.executions ?? []),
      ...contents.records.flatMap((r) => (r.execution ? [r.execution] : [])),
    ];
    for (const state of states) {
      latest.delete(state.execution_id);
      latest.set(state.execution_id, state);
    }
    return [...latest.values()];
  }

  /** Whether `contents` holds edits beyond its base (a journal without any can be dropped safely). */
  public static hasEdits(contents: JournalContents): boolean {
    return contents.records.some((record) => record.change !== undefined);
  }

  /** Renames a journal that cannot be replayed to `<id>.<stamp>.unmatched.jsonl`; returns the new path. */
  public static setAside(dir: string, notebookId: string, stamp: number): string {
    const target = join(dir, `${notebookId}.${stamp}.unmatched.jsonl`);
    renameSync(RoomJournal.fileOf(dir, notebookId), target);
    return target;
  }

  /**
   * Removes the blobs no journal in `settings.dir` references (set-aside journals included): of
   * `candidates` when given (what a rotation or removal dropped), else all of them and the temp
   * files a crash left (at daemon start). Returns how many it removed.
   */
  public static sweepBlobs(settings: JournalSettings, candidates?: ReadonlySet<string>): number {
    const { blobs } = settings;
    if (!blobs || candidates?.size === 0) return 0;
    const referenced = new Set<string>();
    let names: string[] = [];
    try {
      names = readdirSync(settings.dir).filter((name) => name.endsWith('.jsonl'));
    } catch {
      // No journal directory yet: nothing references a blob.
    }
    for (const name of names) {
      for (const sha of RoomJournal.referencesOf(join(settings.dir, name), blobs)) referenced.add(sha);
    }
    return blobs.sweep(referenced, candidates);
  }

  /** The blobs journal `file` references (none without a blob store, or without the file). */
  private static referencesOf(file: string, blobs: OutputBlobStore | undefined): Set<string> {
    if (!blobs) return new Set();
    try {
      return OutputBlobStore.referencesIn(readFileSync(file, 'utf8'));
    } catch {
      return new Set();
    }
  }

  /** Starts (or restarts) the journal of `notebookId` from `base`, replacing any journal there. */
  public static begin(
    settings: JournalSettings,
    notebookId: string,
    base: JournalBase,
    ledger: readonly LedgerRecord[],
    executions: readonly WireExecutionState[] = [],
  ): RoomJournal {
    const journal = new RoomJournal(settings, notebookId, 0);
    journal.rewrite(base, ledger, executions, []);
    return journal;
  }

  public get file(): string {
    return this.#file;
  }

  public get bytes(): number {
    return this.#bytes;
  }

  /** Whether the journal outgrew its cap (the room should save now, which rotates it). */
  public get overCap(): boolean {
    return this.#bytes > this.#settings.maxBytes;
  }

  /** Appends one acknowledged edit (and/or its ledger entry). Throws when the write fails. */
  public append(change: DocumentChange | undefined, ledger: LedgerRecord | undefined): void {
    if (change === undefined && ledger === undefined) return;
    this.write({ seq: this.#seq + 1, ...(change ? { change } : {}), ...(ledger ? { ledger } : {}) }, false);
  }

  /** Appends the state of an execution (kept until a rotation, whose header then holds the room's). Throws when the write fails. */
  public appendExecution(execution: WireExecutionState): void {
    this.write({ seq: this.#seq + 1, execution }, false);
  }

  /** Marks that a save of text with hash `sha` is being written; returns the mark's sequence number. */
  public markSaving(sha: string): number {
    this.write({ seq: this.#seq + 1, saving: sha }, true);
    return this.#seq;
  }

  /**
   * After a save: the journal restarts from `base`, keeping only edits made after mark `savedSeq`;
   * its header holds `ledger` and `executions` (the room's, now).
   */
  public rotate(
    base: JournalBase,
    ledger: readonly LedgerRecord[],
    savedSeq: number,
    executions: readonly WireExecutionState[] = [],
  ): void {
    this.rewrite(
      base,
      ledger,
      executions,
      this.readBack(this.#lines.filter((line) => line.seq > savedSeq && !line.saving)),
    );
  }

  /** The text of `lines`, read from the journal file. */
  private readBack(lines: readonly JournalLine[]): RewrittenLine[] {
    if (lines.length === 0) return [];
    const fd = openSync(this.#file, 'r');
    try {
      return lines.map((line) => {
        const buffer = Buffer.allocUnsafe(line.bytes);
        let read = 0;
        while (read < line.bytes) {
          const got = readSync(fd, buffer, read, line.bytes - read, line.offset + read);
          if (got === 0) throw new Error(`journal ${this.#file} ends before its line ${line.seq}`);
          read += got;
        }
        return { seq: line.seq, text: buffer.toString('utf8'), saving: line.saving };
      });
    } finally {
      closeSync(fd);
    }
  }

  public close(): void {
    if (this.#fd === undefined) return;
    closeSync(this.#fd);
    this.#fd = undefined;
  }

  /** Closes and deletes the journal (the room is gone and its document saved). */
  public discard(): void {
    this.close();
    rmSync(this.#file, { force: true });
    RoomJournal.sweepBlobs(this.#settings, this.#references);
  }

  private write(record: JournalRecord, saving: boolean): void {
    if (this.#fd === undefined) throw new Error(`journal ${this.#file} is closed`);
    const text = `${journalLine(record, this.#settings.blobs)}\n`;
    const bytes = Buffer.byteLength(text);
    if (this.#settings.blobs) for (const sha of OutputBlobStore.referencesIn(text)) this.#references.add(sha);
    writeSync(this.#fd, text);
    if (this.#settings.fsync) fdatasyncSync(this.#fd);
    this.#seq = record.seq;
    this.#lines.push({ seq: record.seq, offset: this.#bytes, bytes, saving });
    this.#bytes += bytes;
  }

  private rewrite(
    base: JournalBase,
    ledger: readonly LedgerRecord[],
    executions: readonly WireExecutionState[],
    keep: readonly RewrittenLine[],
  ): void {
    mkdirSync(this.#settings.dir, { recursive: true, mode: 0o700 });
    const header: JournalHeader = {
      journal: 1,
      notebook_id: this.#notebookId,
      base,
      ledger,
      ...(executions.length > 0 ? { executions } : {}),
    };
    const headerText = `${journalLine(header, this.#settings.blobs)}\n`;
    const text = `${headerText}${keep.map((line) => line.text).join('')}`;
    const temp = `${this.#file}.${process.pid}.tmp`;
    writeFileSync(temp, text, { mode: 0o600 });
    if (this.#settings.fsync) {
      const fd = openSync(temp, 'r');
      try {
        fdatasyncSync(fd);
      } finally {
        closeSync(fd);
      }
    }
    const fd = openSync(temp, 'a', 0o600);
    try {
      renameSync(temp, this.#file);
    } catch (error) {
      closeSync(fd);
      rmSync(temp, { force: true });
      throw error;
    }
    this.close();
    this.#fd = fd;
    this.#bytes = fstatSync(fd).size;
    const before = this.#references;
    this.#references = this.#settings.blobs ? OutputBlobStore.referencesIn(text) : new Set();
    const dropped = new Set([...before].filter((sha) => !this.#references.has(sha)));
    RoomJournal.sweepBlobs(this.#settings, dropped);
    let offset = Buffer.byteLength(headerText);
    this.#lines = keep.map((line) => {
      const bytes = Buffer.byteLength(line.text);
      const placed = { seq: line.seq, offset, bytes, saving: line.saving };
      offset += bytes;
      return placed;
    });
  }

  /** Reopens an existing journal for appending, after its edits were replayed (keeps its lines). */
  public static resume(settings: JournalSettings, contents: JournalContents): RoomJournal {
    const last = contents.records.at(-1)?.seq ?? 0;
    const journal = new RoomJournal(settings, contents.header.notebook_id, last);
    const lines = contents.records.map((record) => ({
      seq: record.seq,
      text: `${journalLine(record, settings.blobs)}\n`,
      saving: record.saving !== undefined,
    }));
    // Rewritten rather than appended to: a torn last line must not precede the next edit.
    journal.rewrite(contents.header.base, contents.header.ledger, contents.header.executions ?? [], lines);
    return journal;
  }
}
