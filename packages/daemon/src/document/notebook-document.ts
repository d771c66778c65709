import { createHash, randomBytes } from 'node:crypto';
import { cellContentVersion } from '@nteract-mcp/foundation';
import type { WireCell, WireOutput } from '@nteract-mcp/runtimed-protocol';
import { DaemonError } from '../daemon-error.js';
import { BlobText, blobsOfOutputs, serializeBlobTextsAs } from '../persistence/blob-text.js';
import { IpynbText } from './ipynb-text.js';

export type CellKind = WireCell['cell_type'];
/** An nbformat output: what the wire carries (an object with a string `output_type`). */
export type NotebookOutput = WireOutput;

/**
 * One change to a document, stated by its result (the cell as it is afterwards), so that applying
 * the same changes to the same base gives the same document: what the room journals and replays.
 */
export type DocumentChange =
  | { readonly op: 'insert'; readonly index: number; readonly cell: WireCell }
  | { readonly op: 'set'; readonly cell: WireCell }
  /**
   * The cell's source (and its author) changed, nothing else: what a source edit journals instead of
   * the whole cell, so that editing a cell with large outputs does not write them again. Its type is
   * the cell's (a change that names another does not fit).
   */
  | {
      readonly op: 'source';
      readonly cell_id: string;
      readonly cell_type: CellKind;
      readonly source: string;
      readonly edited_by?: string;
    }
  | { readonly op: 'delete'; readonly cell_id: string }
  | { readonly op: 'move'; readonly cell_id: string; readonly index: number }
  | { readonly op: 'metadata'; readonly metadata: Readonly<Record<string, unknown>> };

interface MutableCell {
  readonly id: string;
  cellType: CellKind;
  source: string;
  outputs: NotebookOutput[];
  executionCount: number | null;
  metadata: Record<string, unknown>;
  /**
   * nbformat's `attachments` of a markdown or raw cell (files pasted into it, by name, as MIME
   * bundles), kept as read: written back for those cell types, kept (not written) while the cell is code.
   */
  attachments?: Record<string, unknown>;
  /** The peer label that last inserted the cell or changed its source or type (not in the file). */
  editedBy?: string;
  /** `cellContentVersion` of the type and source, computed when first asked after a change. */
  version?: string;
}

const cellKinds: ReadonlySet<string> = new Set(['code', 'markdown', 'raw']);
const cellIdPattern = /^[a-zA-Z0-9-_]{1,64}$/;

/**
 * The notebook a room holds: nbformat 4 cells and notebook metadata, with a version that grows
 * by one on every change. Reads and writes `.ipynb` (nbformat 4.5, cell ids, Jupyter's layout).
 * It does no I/O; the room decides when to load and save.
 */
export class NotebookDocument {
  #cells: MutableCell[] = [];
  /**
   * The cells by id, kept with `#cells`: an edit finds its cell and a new id is checked without a
   * scan of the notebook, so that an edit costs the same at 10 cells and at 10,000.
   */
  readonly #byId = new Map<string, MutableCell>();
  #metadata: Record<string, unknown>;
  #version = 0;
  /** Where large output values go (see {@link NotebookDocument.keepLargeOutputs}); none: kept as strings. */
  #spill: ((outputs: readonly NotebookOutput[]) => readonly NotebookOutput[]) | undefined;

  private constructor(metadata: Record<string, unknown>) {
    this.#metadata = metadata;
  }

  /** A new notebook with no cells, for the given kernel language. */
  public static empty(language = 'python'): NotebookDocument {
    return new NotebookDocument(
      language === 'python'
        ? {
            kernelspec: { name: 'python3', display_name: 'Python 3 (ipykernel)', language: 'python' },
            language_info: { name: 'python' },
          }
        : { language_info: { name: language } },
    );
  }

  /** A new notebook with no cells whose `metadata.kernelspec` names the kernel it runs in. */
  public static forKernel(kernelspec: {
    readonly name: string;
    readonly displayName: string;
    readonly language: string;
  }): NotebookDocument {
    return new NotebookDocument({
      kernelspec: { name: kernelspec.name, display_name: kernelspec.displayName, language: kernelspec.language },
      language_info: { name: kernelspec.language },
    });
  }

  /**
   * The kernel the notebook asks for: `metadata.kernelspec.name` (else `python3`), with its
   * language (`metadata.kernelspec.language`, else `metadata.language_info.name`).
   */
  public kernelRequest(): { readonly name: string; readonly language?: string } {
    const kernelspec = isRecord(this.#metadata.kernelspec) ? this.#metadata.kernelspec : {};
    const languageInfo = isRecord(this.#metadata.language_info) ? this.#metadata.language_info : {};
    const name =
      typeof kernelspec.name === 'string' && kernelspec.name.trim() !== '' ? kernelspec.name.trim() : undefined;
    const language =
      typeof kernelspec.language === 'string' && kernelspec.language.trim() !== ''
        ? kernelspec.language.trim()
        : typeof languageInfo.name === 'string' && languageInfo.name.trim() !== ''
          ? languageInfo.name.trim()
          : undefined;
    if (name === undefined && language !== undefined && language.toLowerCase() !== 'python')
      return { name: language.toLowerCase(), language };
    return { name: name ?? 'python3', ...(language === undefined ? {} : { language }) };
  }

  /**
   * Parses `.ipynb` text. Throws `notebookLoadFailed` naming `origin` and what is wrong; never
   * changes anything on disk.
   */
  public static fromIpynb(text: string, origin: string): NotebookDocument {
    function fail(reason: string): never {
      throw new DaemonError('notebookLoadFailed', `Cannot load ${origin}: ${reason}`);
    }
    let raw: unknown;
    try {
      raw = JSON.parse(text);
    } catch (error) {
      return fail(`not valid JSON (${(error as Error).message})`);
    }
    if (!isRecord(raw)) return fail('the top level is not a JSON object');
    if (raw.nbformat !== 4) return fail(`nbformat ${JSON.stringify(raw.nbformat)} is not supported (need 4)`);
    if (!Array.isArray(raw.cells)) return fail("'cells' is not a list");
    const document = new NotebookDocument(isRecord(raw.metadata) ? { ...raw.metadata } : {});
    const seen = new Set<string>();
    for (const [index, value] of (raw.cells as unknown[]).entries()) {
      if (!isRecord(value)) fail(`cell ${index} is not an object`);
      const cellType = value.cell_type;
      if (typeof cellType !== 'string' || !cellKinds.has(cellType))
        fail(`cell ${index} has cell_type ${JSON.stringify(cellType)}`);
      const source = joinText(value.source);
      if (source === undefined)
        return fail(`cell ${index} has a source that is neither a string nor a list of strings`);
      const outputs = cellType === 'code' ? value.outputs : [];
      if (!Array.isArray(outputs) || !outputs.every(isOutput))
        fail(`cell ${index} has outputs that are not a list of objects with a string output_type`);
      const count = cellType === 'code' ? value.execution_count : null;
      // A cell without a usable id gets one derived from the text, so that every load of the same
      // file gives the same ids (a journal replayed onto it names cells by id).
      const id =
        typeof value.id === 'string' && cellIdPattern.test(value.id) && !seen.has(value.id)
          ? value.id
          : derivedCellId(text, index, seen);
      seen.add(id);
      document.place(document.#cells.length, {
        id,
        cellType: cellType as CellKind,
        source,
        outputs: outputs.map(normaliseOutput),
        executionCount: typeof count === 'number' ? count : null,
        metadata: isRecord(value.metadata) ? { ...value.metadata } : {},
        ...(isRecord(value.attachments) ? { attachments: { ...value.attachments } } : {}),
      });
    }
    return document;
  }

  /**
   * From now on, the outputs of finished runs, of loaded and replayed cells and of every cell now go
   * through `spill` (which puts large values in a blob store and gives {@link BlobText}s in their
   * place); a running cell's outputs ({@link NotebookDocument.setRunningOutputs}) do not, until
   * its run ends. Not a change of the document: its version stays.
   */
  public keepLargeOutputs(spill: (outputs: readonly NotebookOutput[]) => readonly NotebookOutput[]): void {
    this.#spill = spill;
    for (const cell of this.#cells) cell.outputs = [...spill(cell.outputs)];
  }

  /** The blobs the cells' outputs hold (their shas), added to `into`. */
  public blobsHeld(into: Set<string>): void {
    for (const cell of this.#cells) blobsOfOutputs(cell.outputs, into);
  }

  /** The notebook as `.ipynb` text (nbformat 4.5, one-space indent, sources split into lines). */
  public toIpynb(): string {
    return this.ipynbText().text();
  }

  /**
   * {@link NotebookDocument.toIpynb}'s text as it is now, with the values kept in blobs left
   * there until the text is written (see {@link IpynbText}).
   */
  public ipynbText(): IpynbText {
    const cells = this.#cells.map((cell) => {
      const base = { cell_type: cell.cellType, id: cell.id, metadata: cell.metadata, source: splitLines(cell.source) };
      if (cell.cellType === 'code') return { ...base, execution_count: cell.executionCount, outputs: cell.outputs };
      return cell.attachments === undefined ? base : { attachments: cell.attachments, ...base };
    });
    const blobs: BlobText[] = [];
    const nonce = randomBytes(16).toString('hex');
    const skeleton = serializeBlobTextsAs(
      (blob) => `nteract-blob-${nonce}-${blobs.push(blob) - 1}`,
      () => `${JSON.stringify({ cells, metadata: this.#metadata, nbformat: 4, nbformat_minor: 5 }, null, 1)}\n`,
    );
    if (blobs.length === 0) return new IpynbText([skeleton]);
    // The skeleton split at its placeholders: the text between them, then a placeholder's index.
    const parts = skeleton.split(new RegExp(`"nteract-blob-${nonce}-(\\d+)"`));
    return new IpynbText(parts.map((part, index) => (index % 2 === 0 ? part : (blobs[Number(part)] as BlobText))));
  }

  public get version(): number {
    return this.#version;
  }

  public get cellCount(): number {
    return this.#cells.length;
  }

  public cells(): WireCell[] {
    return this.#cells.map(toWire);
  }

  /** Throws `cellNotFound` for an unknown id. */
  public cell(cellId: string): WireCell {
    return toWire(this.lookup(cellId));
  }

  /** Where the cell is; throws `cellNotFound` for an unknown id. */
  public indexOf(cellId: string): number {
    return this.find(cellId).index;
  }

  /** Whether the document has a cell of this id. */
  public has(cellId: string): boolean {
    return this.#byId.has(cellId);
  }

  /** Inserts a new cell; `author` (a peer label) becomes its `edited_by`. */
  public insert(request: {
    readonly source: string;
    readonly cellType: CellKind;
    readonly index?: number;
    readonly author?: string;
  }): {
    cell: WireCell;
    index: number;
  } {
    const cell: MutableCell = {
      id: this.newCellId(),
      cellType: request.cellType,
      source: request.source,
      outputs: [],
      executionCount: null,
      metadata: {},
      ...(request.author === undefined ? {} : { editedBy: request.author }),
    };
    const index = request.index === undefined ? this.#cells.length : clamp(request.index, 0, this.#cells.length);
    this.place(index, cell);
    this.#version += 1;
    return { cell: toWire(cell), index };
  }

  /** Changes a cell's source or type; `author` (a peer label) becomes its `edited_by`. */
  public update(
    cellId: string,
    patch: { readonly source?: string; readonly cellType?: CellKind; readonly author?: string },
  ): WireCell {
    const cell = this.lookup(cellId);
    if (patch.author !== undefined) cell.editedBy = patch.author;
    cell.version = undefined;
    if (patch.source !== undefined) cell.source = patch.source;
    if (patch.cellType !== undefined && patch.cellType !== cell.cellType) {
      cell.cellType = patch.cellType;
      cell.outputs = [];
      cell.executionCount = null;
    }
    this.#version += 1;
    return toWire(cell);
  }

  public delete(cellId: string): void {
    this.remove(cellId);
    this.#version += 1;
  }

  /** Moves the cell after `afterCellId`, or to the start for `null`; returns its new index. */
  public move(cellId: string, afterCellId: string | null): number {
    if (afterCellId !== null) this.find(afterCellId);
    if (afterCellId === cellId) throw new DaemonError('badRequest', 'A cell cannot be moved after itself');
    const [cell] = this.#cells.splice(this.find(cellId).index, 1) as [MutableCell];
    const index = afterCellId === null ? 0 : this.find(afterCellId).index + 1;
    this.#cells.splice(index, 0, cell);
    this.#version += 1;
    return index;
  }

  public clearOutputs(cellId: string): WireCell {
    const cell = this.lookup(cellId);
    cell.outputs = [];
    cell.executionCount = null;
    this.#version += 1;
    return toWire(cell);
  }

  /** Replaces a code cell's outputs (and count) as an execution progresses. */
  /**
   * Sets a running cell's outputs (taken as they are, not copied: the caller hands over a new
   * array) as the result of `changes` successive changes (its output edits, each a document
   * version); answers the newest version.
   */
  public setRunningOutputs(cellId: string, outputs: NotebookOutput[], changes: number): number {
    const cell = this.lookup(cellId);
    cell.outputs = outputs;
    this.#version += changes;
    return this.#version;
  }

  public setExecutionState(
    cellId: string,
    outputs: readonly NotebookOutput[],
    executionCount: number | null,
  ): WireCell {
    const cell = this.lookup(cellId);
    cell.outputs = [...(this.#spill?.(outputs) ?? outputs)];
    cell.executionCount = executionCount;
    this.#version += 1;
    return toWire(cell);
  }

  /**
   * Applies a journaled change. Throws `badRequest` for one that does not fit this document (a
   * replay onto the wrong base); the document is unchanged then.
   */
  public apply(change: DocumentChange): void {
    switch (change.op) {
      case 'insert': {
        if (this.#byId.has(change.cell.id))
          throw new DaemonError('badRequest', `Cannot insert cell ${change.cell.id}: it exists`);
        this.place(clamp(change.index, 0, this.#cells.length), this.spilled(fromWire(change.cell)));
        break;
      }
      case 'set': {
        const { index } = this.find(change.cell.id);
        const cell = this.spilled(fromWire(change.cell));
        this.#cells[index] = cell;
        this.#byId.set(cell.id, cell);
        break;
      }
      case 'source': {
        const cell = this.lookup(change.cell_id);
        if (cell.cellType !== change.cell_type) {
          throw new DaemonError(
            'badRequest',
            `Cannot set the source of cell ${change.cell_id}: it is a ${cell.cellType} cell, not ${change.cell_type}`,
          );
        }
        cell.source = change.source;
        if (change.edited_by !== undefined) cell.editedBy = change.edited_by;
        cell.version = undefined;
        break;
      }
      case 'delete':
        this.remove(change.cell_id);
        break;
      case 'move': {
        const [cell] = this.#cells.splice(this.find(change.cell_id).index, 1) as [MutableCell];
        this.#cells.splice(clamp(change.index, 0, this.#cells.length), 0, cell);
        break;
      }
      case 'metadata':
        this.#metadata = structuredClone({ ...change.metadata });
        break;
    }
    this.#version += 1;
  }

  /**
   * Makes this document equal to `other` (a reload from disk) and returns what happened to the
   * cells, one version each: every current cell deleted, then every cell of `other` inserted. The
   * notebook metadata is taken over as well, without a version of its own (peers do not track it).
   */
  public replaceWith(other: NotebookDocument): DocumentChange[] {
    const changes: DocumentChange[] = [
      ...this.#cells.map((cell): DocumentChange => ({ op: 'delete', cell_id: cell.id })),
      ...other.cells().map((cell, index): DocumentChange => ({ op: 'insert', index, cell })),
    ];
    for (const change of changes) this.apply(change);
    this.#metadata = structuredClone(other.#metadata);
    return changes;
  }

  private spilled(cell: MutableCell): MutableCell {
    if (this.#spill !== undefined) cell.outputs = [...this.#spill(cell.outputs)];
    return cell;
  }

  /** The cell of this id, without a scan; throws `cellNotFound` for an unknown id. */
  private lookup(cellId: string): MutableCell {
    const cell = this.#byId.get(cellId);
    if (!cell) throw new DaemonError('cellNotFound', `Cell not found: ${cellId}`);
    return cell;
  }

  /** The cell and where it is (one scan by identity, for the edits that need its position). */
  private find(cellId: string): { cell: MutableCell; index: number } {
    const cell = this.lookup(cellId);
    return { cell, index: this.#cells.indexOf(cell) };
  }

  private place(index: number, cell: MutableCell): void {
    this.#cells.splice(index, 0, cell);
    this.#byId.set(cell.id, cell);
  }

  private remove(cellId: string): MutableCell {
    const { cell, index } = this.find(cellId);
    this.#cells.splice(index, 1);
    this.#byId.delete(cellId);
    return cell;
  }

  private newCellId(): string {
    for (;;) {
      const id = randomBytes(4).toString('hex');
      if (!this.#byId.has(id)) return id;
    }
  }
}

function toWire(cell: MutableCell): WireCell {
  cell.version ??= cellContentVersion(cell.cellType, cell.source);
  return {
    id: cell.id,
    cell_type: cell.cellType,
    source: cell.source,
    outputs: cell.outputs,
    execution_count: cell.executionCount,
    metadata: cell.metadata,
    ...(cell.attachments === undefined ? {} : { attachments: cell.attachments }),
    version: cell.version,
    ...(cell.editedBy === undefined ? {} : { edited_by: cell.editedBy }),
  };
}

function derivedCellId(text: string, index: number, taken: ReadonlySet<string>): string {
  for (let attempt = 0; ; attempt++) {
    const id = createHash('sha256').update(`${index}:${attempt}:`).update(text).digest('hex').slice(0, 8);
    if (!taken.has(id)) return id;
  }
}

function fromWire(cell: WireCell): MutableCell {
  const copy = copyKeepingBlobs(cell) as WireCell;
  return {
    id: copy.id,
    cellType: copy.cell_type,
    source: copy.source,
    outputs: [...copy.outputs],
    executionCount: copy.execution_count,
    metadata: { ...copy.metadata },
    ...(copy.attachments === undefined ? {} : { attachments: { ...copy.attachments } }),
    ...(copy.edited_by === undefined ? {} : { editedBy: copy.edited_by }),
  };
}

/**
 * A deep copy of a JSON-like value (as `structuredClone` makes one) that keeps each {@link BlobText}
 * as it is: it is immutable, and a copy of it would lose its store.
 */
function copyKeepingBlobs(value: unknown): unknown {
  if (value === null || typeof value !== 'object' || value instanceof BlobText) return value;
  if (Array.isArray(value)) return value.map(copyKeepingBlobs);
  if (!hasBlob(value)) return structuredClone(value);
  return Object.fromEntries(Object.entries(value).map(([key, field]) => [key, copyKeepingBlobs(field)]));
}

function hasBlob(value: unknown): boolean {
  if (value instanceof BlobText) return true;
  if (value === null || typeof value !== 'object') return false;
  return (Array.isArray(value) ? value : Object.values(value)).some(hasBlob);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isOutput(value: unknown): value is NotebookOutput {
  return isRecord(value) && typeof value.output_type === 'string';
}

function joinText(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (Array.isArray(value) && value.every((part) => typeof part === 'string')) return value.join('');
  return undefined;
}

/** Multi-line text fields (`text`, `data[mime]` strings as lists) become plain strings in memory. */
function normaliseOutput(output: NotebookOutput): NotebookOutput {
  const copy: NotebookOutput = { ...output };
  const text = joinText(copy.text);
  if (text !== undefined) copy.text = text;
  if (isRecord(copy.data)) {
    copy.data = Object.fromEntries(Object.entries(copy.data).map(([mime, value]) => [mime, joinText(value) ?? value]));
  }
  return copy;
}

function splitLines(text: string): string[] {
  return text.length === 0 ? [] : (text.match(/[^\n]*\n|[^\n]+$/g) ?? []);
}

function clamp(value: number, low: number, high: number): number {
  return Math.max(low, Math.min(high, Math.trunc(value)));
}
