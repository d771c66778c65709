import { createHash, randomBytes } from 'node:crypto';
import {
  closeSync,
  fdatasyncSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { blobFilePath, blobReferenceKey, lostBlobText } from '@nteract-mcp/runtimed-protocol';
import { BlobText } from './blob-text.js';

/** An nbformat output, as far as spilling its large values needs to know it. */
export interface SpillableOutput {
  readonly output_type: string;
  readonly [field: string]: unknown;
}

/** Where blobs live and from what size a text goes there. */
export interface OutputBlobSettings {
  /** `<dataDir>/blobs`, created 0700. */
  readonly dir: string;
  /** A string of more UTF-16 characters than this is stored as a blob. */
  readonly thresholdChars: number;
  /** fdatasync each blob before it is referenced (as the journal's `fsync` does for its lines). */
  readonly fsync: boolean;
}

/** Default {@link OutputBlobSettings.thresholdChars}: 1 MiB of an output's text or data value. */
export const defaultBlobThresholdChars = 1024 * 1024;

/** How a reference to a blob looks in JSON text (what {@link OutputBlobStore.referencesIn} finds). */
const referencePattern = /"\$nteract_blob":"([0-9a-f]{64})"/g;

const isSha = (name: string): boolean => /^[0-9a-f]{64}$/.test(name);

/**
 * A content-addressed store of large texts (outputs' text and data values), `<dir>/<sha256>`
 * (0600 in a 0700 dir): what the daemon writes to disk instead of inlining it in its journal, so a
 * large output is not serialized into every journal line and rotation that carries it.
 *
 * - `put` writes a blob once (a temp file renamed into place, fsynced first with `fsync`), so a
 *   reader never sees a torn blob; the same text is one blob however often it is put.
 * - `replacer`/`reviver` turn the large strings of a value into references and back, for
 *   `JSON.stringify`/`JSON.parse`.
 * - `spillOutputs` puts an output's large values (a stream's text, a MIME type's data) into
 *   blobs and gives the output with a {@link BlobText} in their place: what a room keeps.
 * - `sweep(referenced)` removes every blob not in `referenced` and not held (see `hold`: what open
 *   rooms reference) and every temp file left by a crash; the caller passes what every journal
 *   still references.
 *
 * Synchronous, as the journal that uses it: a blob is on disk before the line naming it is
 * written. One daemon owns the directory (the data dir's lock).
 */
export class OutputBlobStore {
  readonly #settings: OutputBlobSettings;

  public constructor(settings: OutputBlobSettings) {
    this.#settings = settings;
    const store = this;
    // A function, not an arrow: JSON.stringify passes the object holding `key` as `this`.
    this.replacer = function (this: unknown, key: string, value: unknown): unknown {
      if (typeof value !== 'string' || value.length <= settings.thresholdChars) return value;
      // The reference's own sha (visited next, as a member of the reference) stays as it is.
      if (key === blobReferenceKey) return value;
      return store.#reference(this, key, value);
    };
  }

  public get dir(): string {
    return this.#settings.dir;
  }

  public get thresholdChars(): number {
    return this.#settings.thresholdChars;
  }

  /** Where blob `sha` is (whether or not it is there). */
  public pathOf(sha: string): string {
    return blobFilePath(this.#settings.dir, sha);
  }

  /** What stands for the value of a blob that is gone (removed by hand, or a disk that lost it). */
  public lostText(sha: string): string {
    return lostBlobText(this.#settings.dir, sha);
  }

  /** A {@link BlobText} of `text`, stored now (unless a blob of it is there already). */
  public blobText(text: string): BlobText {
    return new BlobText(this, this.put(text), text.length);
  }

  /**
   * `outputs` with each value over the threshold (a stream's `text`, a `data` value, a list of
   * strings counted joined) stored as a blob and replaced by its {@link BlobText}: new objects
   * where something was stored, the same array when nothing was (so a caller can tell). Values
   * already {@link BlobText}s stay as they are.
   */
  public spillOutputs<T extends SpillableOutput>(outputs: readonly T[]): readonly T[] {
    let changed: T[] | undefined;
    outputs.forEach((output, index) => {
      // Outputs are never changed in place: one spilled before (as a running cell told it) is not
      // hashed again when its run ends.
      const spilled = (this.#spilled.get(output) as T | undefined) ?? this.#spillOutput(output);
      if (spilled !== output) this.#spilled.set(output, spilled);
      if (spilled === output) return;
      changed ??= outputs.slice();
      changed[index] = spilled;
    });
    return changed ?? outputs;
  }

  #spillOutput<T extends SpillableOutput>(output: T): T {
    let copy: Record<string, unknown> | undefined;
    const text = this.#large(output.text);
    if (text !== undefined) copy = { ...output, text: this.blobText(text) };
    const data = output.data;
    if (data !== null && typeof data === 'object' && !Array.isArray(data)) {
      let spilledData: Record<string, unknown> | undefined;
      for (const [mime, value] of Object.entries(data)) {
        const large = this.#large(value);
        if (large === undefined) continue;
        spilledData ??= { ...(data as Record<string, unknown>) };
        spilledData[mime] = this.blobText(large);
      }
      if (spilledData !== undefined) copy = { ...(copy ?? output), data: spilledData };
    }
    return (copy as T | undefined) ?? output;
  }

  /** `value`'s text when it is a string (or a list of strings) over the threshold. */
  #large(value: unknown): string | undefined {
    const limit = this.#settings.thresholdChars;
    if (typeof value === 'string') return value.length > limit ? value : undefined;
    if (!Array.isArray(value) || !value.every((part) => typeof part === 'string')) return undefined;
    let chars = 0;
    for (const part of value as string[]) chars += part.length;
    return chars > limit ? (value as string[]).join('') : undefined;
  }

  /** What hold a blob against {@link OutputBlobStore.sweep}: each gives the shas it references now. */
  readonly #holders = new Set<() => Iterable<string>>();

  /**
   * Keeps every blob `referenced()` names (asked at each sweep) from being swept, until the
   * returned function is called: an open room holds what its document and executions reference.
   */
  public hold(referenced: () => Iterable<string>): () => void {
    this.#holders.add(referenced);
    return () => {
      this.#holders.delete(referenced);
    };
  }

  /** Stores `text` (unless a blob of it is there already) and returns its sha256. */
  public put(text: string): string {
    const sha = createHash('sha256').update(text, 'utf8').digest('hex');
    const path = this.pathOf(sha);
    if (this.has(sha)) return sha;
    mkdirSync(this.#settings.dir, { recursive: true, mode: 0o700 });
    const temp = join(this.#settings.dir, `${sha}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
    const fd = openSync(temp, 'wx', 0o600);
    try {
      writeSync(fd, text, null, 'utf8');
      if (this.#settings.fsync) fdatasyncSync(fd);
    } catch (error) {
      closeSync(fd);
      rmSync(temp, { force: true });
      throw error;
    }
    closeSync(fd);
    renameSync(temp, path);
    return sha;
  }

  public has(sha: string): boolean {
    try {
      return statSync(this.pathOf(sha)).isFile();
    } catch {
      return false;
    }
  }

  /** The text of blob `sha`; throws (ENOENT) when there is none. */
  public read(sha: string): string {
    return readFileSync(this.pathOf(sha), 'utf8');
  }

  /** What {@link OutputBlobStore.spillOutputs} made of each output it spilled. */
  readonly #spilled = new WeakMap<object, object>();

  /** For `JSON.stringify`: a string over the threshold becomes a reference to its blob. */
  public readonly replacer: (this: unknown, key: string, value: unknown) => unknown;

  /**
   * The blob of each large string already stored, by the object holding it and its key: outputs
   * are never changed in place, so the executions a journal's header carries again at every
   * rotation are not hashed again (the blob is checked to be there still).
   */
  readonly #stored = new WeakMap<object, Map<string, { readonly text: string; readonly sha: string }>>();

  #reference(holder: unknown, key: string, text: string): Record<string, unknown> {
    const known = typeof holder === 'object' && holder !== null ? this.#stored.get(holder)?.get(key) : undefined;
    let sha = known !== undefined && known.text === text && this.has(known.sha) ? known.sha : undefined;
    if (sha === undefined) {
      sha = this.put(text);
      if (typeof holder === 'object' && holder !== null) {
        const byKey = this.#stored.get(holder) ?? new Map();
        byKey.set(key, { text, sha });
        this.#stored.set(holder, byKey);
      }
    }
    return { [blobReferenceKey]: sha, chars: text.length };
  }

  /** For `JSON.parse`: a reference becomes a {@link BlobText} of its blob (its text read when needed). */
  public readonly reviver = (_key: string, value: unknown): unknown => {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return value;
    const sha = (value as Record<string, unknown>)[blobReferenceKey];
    if (typeof sha !== 'string' || Object.keys(value).length !== 2) return value;
    const chars = (value as Record<string, unknown>).chars;
    // Left in its blob: read when its bytes are needed (a missing one then says it is lost).
    if (isSha(sha) && typeof chars === 'number' && this.has(sha)) return new BlobText(this, sha, chars);
    try {
      return this.read(sha);
    } catch {
      // Removed by hand, or a disk that lost it: the rest of the record stands, saying so.
      return this.lostText(sha);
    }
  };

  /** The blobs that JSON `text` references. */
  public static referencesIn(text: string): Set<string> {
    const found = new Set<string>();
    for (const match of text.matchAll(referencePattern)) found.add(match[1] as string);
    return found;
  }

  /**
   * Removes the blobs not in `referenced` (only those in `candidates` when given) and, without
   * `candidates`, the temp files a crash left; returns how many blobs it removed.
   */
  public sweep(referenced: ReadonlySet<string>, candidates?: ReadonlySet<string>): number {
    let names: string[];
    try {
      names = candidates ? [...candidates] : readdirSync(this.#settings.dir);
    } catch {
      return 0;
    }
    const held = new Set<string>();
    for (const referencedNow of this.#holders) for (const sha of referencedNow()) held.add(sha);
    let removed = 0;
    for (const name of names) {
      if (name.endsWith('.tmp') && !candidates) {
        rmSync(join(this.#settings.dir, name), { force: true });
        continue;
      }
      if (!isSha(name) || referenced.has(name) || held.has(name)) continue;
      rmSync(join(this.#settings.dir, name), { force: true });
      removed += 1;
    }
    return removed;
  }
}
