import type { WireRoomEvent } from '@nteract-mcp/runtimed-protocol';
import { applyOutputEdit, type EditableOutput, outputEditOf } from '@nteract-mcp/runtimed-protocol/output-edit';
import { applyCellSource } from '@nteract-mcp/runtimed-protocol/source-edit';
import type { SnapshotCell } from './notebook-snapshot.js';

/** The room events that change the document, each naming the version it made. */
export type DocumentEvent = Extract<
  WireRoomEvent,
  {
    event:
      | 'cell_inserted'
      | 'cell_updated'
      | 'cell_source_set'
      | 'cell_deleted'
      | 'cell_moved'
      | 'output_set'
      | 'stream_appended'
      | 'outputs_cleared'
      | 'execution_done';
  }
>;

/**
 * What applying an event did: `applied` (with the cell it changed, or `order` when cells came,
 * went or moved), `stale` (the page has that version already), `ahead` (a version is missing
 * before it), `misfit` (it does not fit the page's copy: a cell it names is not there).
 */
export type ApplyResult =
  | { readonly kind: 'applied'; readonly change: { readonly cellId: string } | 'order' }
  | { readonly kind: 'stale' | 'ahead' | 'misfit' };

/**
 * The page's copy of the notebook at one document version: the cells in order, changed by the
 * room's events one version at a time (each event must make the next version; the caller reads a
 * fresh snapshot when one does not fit). No DOM here: the view follows what it reports.
 */
export class LiveDocument {
  #version: number;
  #cells: SnapshotCell[];
  #order: string[] | undefined;
  #at: Map<string, number> | undefined;

  public constructor(version: number, cells: readonly SnapshotCell[]) {
    this.#version = version;
    this.#cells = cells.slice();
  }

  public get version(): number {
    return this.#version;
  }

  public get length(): number {
    return this.#cells.length;
  }

  /** The cell ids in order (the same array until the order changes). */
  public get order(): readonly string[] {
    this.#order ??= this.#cells.map((cell) => cell.id);
    return this.#order;
  }

  public indexOf(cellId: string): number {
    this.#at ??= new Map(this.#cells.map((cell, index) => [cell.id, index]));
    return this.#at.get(cellId) ?? -1;
  }

  public cell(cellId: string): SnapshotCell | undefined {
    const index = this.indexOf(cellId);
    return index < 0 ? undefined : this.#cells[index];
  }

  public cellAt(index: number): SnapshotCell | undefined {
    return this.#cells[index];
  }

  /** The cells in order, as they are now (a copy of the list). */
  public cells(): readonly SnapshotCell[] {
    return this.#cells.slice();
  }

  /** Applies `event` when it makes the next version (an `execution_done` without a version changes nothing). */
  public apply(event: DocumentEvent): ApplyResult {
    const version = event.document_version;
    if (version === undefined || version <= this.#version) return { kind: 'stale' };
    if (version > this.#version + 1) return { kind: 'ahead' };
    const result = this.change(event);
    if (result.kind === 'applied') this.#version = version;
    return result;
  }

  private change(event: DocumentEvent): ApplyResult {
    switch (event.event) {
      case 'cell_inserted': {
        if (this.indexOf(event.cell.id) >= 0 || event.index > this.#cells.length) return { kind: 'misfit' };
        this.#cells.splice(event.index, 0, event.cell);
        this.orderChanged();
        return { kind: 'applied', change: 'order' };
      }
      case 'cell_updated':
        return this.replace(event.cell.id, () => event.cell);
      case 'cell_source_set':
        // The source changed, nothing else: the outputs the page holds stay (they did not travel).
        return this.replace(event.cell.id, (cell) => applyCellSource(cell, event.cell));
      case 'cell_deleted': {
        const index = this.indexOf(event.cell_id);
        if (index < 0) return { kind: 'misfit' };
        this.#cells.splice(index, 1);
        this.orderChanged();
        return { kind: 'applied', change: 'order' };
      }
      case 'cell_moved': {
        const index = this.indexOf(event.cell_id);
        if (index < 0 || event.index >= this.#cells.length) return { kind: 'misfit' };
        const [cell] = this.#cells.splice(index, 1) as [SnapshotCell];
        this.#cells.splice(event.index, 0, cell);
        this.orderChanged();
        return { kind: 'applied', change: 'order' };
      }
      case 'execution_done':
        return this.replace(event.cell_id, (cell) => ({ ...cell, execution_count: event.execution_count }));
      default:
        return this.replace(event.cell_id, (cell) => {
          const outputs = applyOutputEdit(cell.outputs as readonly EditableOutput[], outputEditOf(event));
          return outputs === undefined ? undefined : { ...cell, outputs: outputs as SnapshotCell['outputs'] };
        });
    }
  }

  private replace(cellId: string, next: (cell: SnapshotCell) => SnapshotCell | undefined): ApplyResult {
    const index = this.indexOf(cellId);
    const cell = index < 0 ? undefined : next(this.#cells[index] as SnapshotCell);
    if (cell === undefined) return { kind: 'misfit' };
    this.#cells[index] = cell;
    return { kind: 'applied', change: { cellId } };
  }

  private orderChanged(): void {
    this.#order = undefined;
    this.#at = undefined;
  }
}
