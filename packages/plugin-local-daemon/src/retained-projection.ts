import type { CellOutput, NotebookCell } from '@nteract-mcp/core';
import { applyOutputEdit, type OutputEdit } from '@nteract-mcp/runtimed-protocol';

/**
 * What a source edit of a cell tells: the cell's id and type (unchanged by the edit) and its new
 * source, version and author; the rest of the cell is as the copy holds it.
 */
export type CellSource = Pick<NotebookCell, 'id' | 'cellType' | 'source' | 'version' | 'editedBy'>;

/**
 * One change to a notebook's cell list, named by the document version it produced: a cell
 * inserted, replaced, deleted or moved; a cell's source edited; a running cell's outputs edited; a
 * run's execution count set.
 */
export type CellChange =
  | { readonly kind: 'insert'; readonly cell: NotebookCell; readonly index: number; readonly version: number }
  | { readonly kind: 'update'; readonly cell: NotebookCell; readonly version: number }
  | { readonly kind: 'source'; readonly cell: CellSource; readonly version: number }
  | { readonly kind: 'delete'; readonly cellId: string; readonly version: number }
  | { readonly kind: 'move'; readonly cellId: string; readonly index: number; readonly version: number }
  | { readonly kind: 'outputs'; readonly cellId: string; readonly edit: OutputEdit; readonly version: number }
  | {
      readonly kind: 'count';
      readonly cellId: string;
      readonly executionCount: number | null;
      readonly version: number;
    };

/**
 * What became of a change or a snapshot: `applied` (the copy now reflects it), `reflected` (the
 * copy already reflects that version or a newer one, e.g. a replayed answer; nothing changed), or
 * `refetch` (the copy cannot be trusted any more: fetch the whole list again and hand it to
 * {@link RetainedProjection.applySnapshot}).
 */
export type ProjectionOutcome = 'applied' | 'reflected' | 'refetch';

/**
 * The child's retained copy of one notebook's cells (its "retained projection"), kept in step with
 * the document version the daemon names on every snapshot, answer and broadcast. Pure: no socket,
 * no clock, no I/O; the owner feeds it what it read and asks for the cells.
 *
 * Guarantees:
 * - A change is applied only when it is the next version (`version === current + 1`) and fits the
 *   copy (an insert at a whole index `0..length` of an id not held, an update/delete of a held id, a
 *   source edit of a held id of the same type (its outputs, count and metadata kept),
 *   a move of a held id to a whole index `0..length-1`, an output edit that fits the held cell's
 *   outputs, a count of a held id). A change at or below the current version is ignored.
 * - A gap in versions, a change that does not fit, or {@link RetainedProjection.markStale} makes
 *   the copy stale: later changes are only counted, {@link RetainedProjection.find} answers
 *   nothing, and only a snapshot makes it trusted again.
 * - A snapshot replaces the copy unless the copy is trusted and already at that version or newer;
 *   the copy stays stale when a newer version was named before the snapshot came (those changes
 *   were not kept).
 * - The lists it returns are copies; the lists it is given are copied.
 * - {@link RetainedProjection.othersChangeCount} grows with every change it is given as not the
 *   owner's own, every snapshot that changed the copy, and every {@link RetainedProjection.markStale}
 *   (who made what the copy missed is not known), before the copy shows that change.
 *
 * Does not guarantee that a trusted copy is the daemon's current document (changes it has not yet
 * been told of exist), nor anything about cells' contents beyond what it was given.
 */
export class RetainedProjection {
  #cells: NotebookCell[];
  /** The document version `#cells` reflects. */
  #version: number;
  /** The newest document version any snapshot or change has named. */
  #newestSeenVersion: number;
  #stale = false;
  #othersChangeCount = 0;

  public constructor(version: number, cells: readonly NotebookCell[]) {
    this.#cells = [...cells];
    this.#version = version;
    this.#newestSeenVersion = version;
  }

  /** The document version the copy reflects. */
  public get version(): number {
    return this.#version;
  }

  /** How many changes it was given that were not the owner's own, or of no known author; see the class guarantees. */
  public get othersChangeCount(): number {
    return this.#othersChangeCount;
  }

  /** Whether the copy cannot be trusted (fetch the whole list and apply it as a snapshot). */
  public get isStale(): boolean {
    return this.#stale;
  }

  /** The cells as held, in order, also when stale (then they may be wrong). */
  public cells(): NotebookCell[] {
    return [...this.#cells];
  }

  /** The held cell with this id; `undefined` when there is none or the copy is stale. */
  public find(cellId: string): NotebookCell | undefined {
    if (this.#stale) return undefined;
    return this.#cells.find((cell) => cell.id === cellId);
  }

  /** Stops trusting the copy (e.g. a broadcast that could not be read may have changed it). */
  public markStale(): void {
    this.#othersChangeCount += 1;
    this.#stale = true;
  }

  /**
   * Applies `change` when it is the next version and fits; see the class guarantees. `own`: the
   * owner made it (its answer, or its run's outputs), so it does not count as another's.
   */
  public apply(change: CellChange, own = false): ProjectionOutcome {
    if (!own) this.#othersChangeCount += 1;
    this.#newestSeenVersion = Math.max(this.#newestSeenVersion, change.version);
    if (this.#stale) return 'refetch';
    if (change.version <= this.#version) return 'reflected';
    if (change.version !== this.#version + 1 || !this.place(change)) {
      this.#stale = true;
      return 'refetch';
    }
    this.#version = change.version;
    return 'applied';
  }

  /** Takes the whole list at `version`; see the class guarantees. */
  public applySnapshot(version: number, cells: readonly NotebookCell[]): ProjectionOutcome {
    if (!this.#stale && version <= this.#version) return 'reflected';
    this.#othersChangeCount += 1;
    this.#cells = [...cells];
    this.#version = version;
    this.#newestSeenVersion = Math.max(this.#newestSeenVersion, version);
    // Changes newer than the snapshot that were named before it came were not kept.
    this.#stale = this.#newestSeenVersion > version;
    return this.#stale ? 'refetch' : 'applied';
  }

  /**
   * Puts each of `outputs` in place of the held cell's output at its index, when the copy is
   * trusted, at `version`, and holds that cell with those indexes: the same outputs told another
   * way (blob references for texts; the daemon vouches they are the same), so no version is taken
   * and nobody is told. Answers the outputs it replaced; `undefined`, changing nothing, otherwise
   * (also for no `outputs`).
   */
  public replaceOutputs(
    cellId: string,
    version: number,
    outputs: readonly { readonly index: number; readonly output: CellOutput }[] | undefined,
  ): CellOutput[] | undefined {
    const index = this.#stale || version !== this.#version || outputs === undefined ? -1 : this.indexOf(cellId);
    const cell = this.#cells[index];
    if (cell === undefined || !outputs?.every((replacement) => isIndex(replacement.index, cell.outputs.length))) {
      return undefined;
    }
    const replaced = [...cell.outputs];
    for (const { index: at, output } of outputs) replaced[at] = output;
    this.#cells[index] = { ...cell, outputs: replaced };
    return outputs.map(({ index: at }) => cell.outputs[at] as CellOutput);
  }

  /** Places `change` when it fits the copy (see the class guarantees); `false`, changing nothing, when not. */
  private place(change: CellChange): boolean {
    const length = this.#cells.length;
    switch (change.kind) {
      case 'insert':
        if (!isIndex(change.index, length + 1) || this.indexOf(change.cell.id) >= 0) return false;
        this.#cells.splice(change.index, 0, change.cell);
        return true;
      case 'update': {
        const index = this.indexOf(change.cell.id);
        if (index < 0) return false;
        this.#cells[index] = change.cell;
        return true;
      }
      case 'source': {
        const index = this.indexOf(change.cell.id);
        const cell = this.#cells[index];
        if (cell === undefined) return false;
        const edited = withCellSource(cell, change.cell);
        if (edited === undefined) return false;
        this.#cells[index] = edited;
        return true;
      }
      case 'delete': {
        const index = this.indexOf(change.cellId);
        if (index < 0) return false;
        this.#cells.splice(index, 1);
        return true;
      }
      case 'move': {
        const index = this.indexOf(change.cellId);
        if (!isIndex(change.index, length) || index < 0) return false;
        const [cell] = this.#cells.splice(index, 1) as [NotebookCell];
        this.#cells.splice(change.index, 0, cell);
        return true;
      }
      case 'outputs': {
        const index = this.indexOf(change.cellId);
        const cell = this.#cells[index];
        const outputs = cell === undefined ? undefined : applyOutputEdit(cell.outputs, change.edit);
        if (cell === undefined || outputs === undefined) return false;
        this.#cells[index] = { ...cell, outputs: outputs as CellOutput[] };
        return true;
      }
      case 'count': {
        const index = this.indexOf(change.cellId);
        const cell = this.#cells[index];
        if (cell === undefined) return false;
        this.#cells[index] = { ...cell, executionCount: change.executionCount };
        return true;
      }
    }
  }

  private indexOf(cellId: string): number {
    return this.#cells.findIndex((cell) => cell.id === cellId);
  }
}

/** Whether `index` is a whole number in `0..limit-1`. */
function isIndex(index: number, limit: number): boolean {
  return Number.isInteger(index) && index >= 0 && index < limit;
}

/**
 * `cell` with the source edit `edit` applied (its source, version and author those of the edit,
 * the rest kept); `undefined` when the edit does not fit it (another cell, or another type: the
 * copy is out of step).
 */
export function withCellSource(cell: NotebookCell, edit: CellSource): NotebookCell | undefined {
  if (cell.id !== edit.id || cell.cellType !== edit.cellType) return undefined;
  const { version: _version, editedBy: _editedBy, ...rest } = cell;
  return {
    ...rest,
    source: edit.source,
    ...(edit.version === undefined ? {} : { version: edit.version }),
    ...(edit.editedBy === undefined ? {} : { editedBy: edit.editedBy }),
  };
}

/**
 * The cell a source edit left, from `held` (the cell as read after the edit was applied to the copy,
 * or `undefined` when it is gone): the edit's source fields over the rest of it; without outputs
 * when the cell is gone or holds another type (the answer to a replayed edit).
 */
export function cellAfterSourceEdit(held: NotebookCell | undefined, edit: CellSource): NotebookCell {
  return (
    (held === undefined ? undefined : withCellSource(held, edit)) ?? {
      ...edit,
      outputs: [],
      executionCount: null,
      metadata: {},
    }
  );
}
