import { randomUUID } from 'node:crypto';
import {
  type CellType,
  CoreError,
  type InsertCellRequest,
  type NotebookCell,
  type NotebookCellChange,
  type Subscription,
} from '@nteract-mcp/core';

/**
 * One notebook kept in memory: its cells in order and the idempotency ledger of every change
 * made to it. It is the owner of the notebook: every connection (a {@link MemoryNotebookHandle})
 * edits this one object, so a change is seen by every peer at once, and a replayed key is applied
 * once whichever peer replays it. Its cells have no outputs (the kind has no kernel).
 */
export class MemoryNotebook {
  public readonly notebookId = randomUUID();
  #cells: NotebookCell[] = [];
  #nextCell = 1;
  readonly #ledger = new Map<string, unknown>();
  readonly #listeners = new Set<(change: NotebookCellChange) => void>();
  readonly #peerDrops = new Set<() => void>();

  public constructor(public readonly name: string) {}

  public cells(): readonly NotebookCell[] {
    return [...this.#cells];
  }

  /** The cell, or `cellNotFound`. */
  public cell(cellId: string): NotebookCell {
    return this.#cells[this.indexOf(cellId)] as NotebookCell;
  }

  /**
   * Applies `change` once per idempotency key: a key seen before answers the first result and
   * changes nothing (a failed change records nothing, so its replay is tried again).
   */
  public once<T>(key: string | undefined, change: () => T): T {
    if (key !== undefined && this.#ledger.has(key)) return this.#ledger.get(key) as T;
    const result = change();
    if (key !== undefined) this.#ledger.set(key, result);
    return result;
  }

  public insert(request: InsertCellRequest, by: string): NotebookCell {
    const cell: NotebookCell = {
      id: `cell-${this.#nextCell++}`,
      cellType: request.cellType,
      source: request.source,
      outputs: [],
      executionCount: null,
      metadata: {},
      editedBy: by,
    };
    const at =
      request.index === undefined ? this.#cells.length : Math.max(0, Math.min(request.index, this.#cells.length));
    this.#cells.splice(at, 0, cell);
    this.tell('inserted', cell.id);
    return cell;
  }

  public update(
    cellId: string,
    patch: { readonly source?: string; readonly cellType?: CellType },
    by: string,
  ): NotebookCell {
    const index = this.indexOf(cellId);
    const before = this.#cells[index] as NotebookCell;
    const cell: NotebookCell = {
      ...before,
      source: patch.source ?? before.source,
      cellType: patch.cellType ?? before.cellType,
      editedBy: by,
    };
    this.#cells[index] = cell;
    this.tell('updated', cellId);
    return cell;
  }

  public delete(cellId: string): void {
    this.#cells.splice(this.indexOf(cellId), 1);
    this.tell('deleted', cellId);
  }

  /** Moves the cell after `afterCellId`, or to the start. */
  public move(cellId: string, afterCellId: string | undefined): void {
    // Both must exist before anything moves; a cell moved after itself stays where it is.
    const from = this.indexOf(cellId);
    if (afterCellId !== undefined) this.indexOf(afterCellId);
    if (afterCellId === cellId) return;
    const [cell] = this.#cells.splice(from, 1);
    const at = afterCellId === undefined ? 0 : this.indexOf(afterCellId) + 1;
    this.#cells.splice(at, 0, cell as NotebookCell);
    this.tell('moved', cellId);
  }

  /** Its cells have no outputs; clearing checks the cell exists and changes nothing else. */
  public clearOutputs(cellId: string): void {
    this.indexOf(cellId);
  }

  /** Calls `listener` after every change, once the notebook shows it. */
  public onDidChange(listener: (change: NotebookCellChange) => void): Subscription {
    this.#listeners.add(listener);
    return { dispose: () => this.#listeners.delete(listener) };
  }

  /** Calls `listener` when the notebook drops its peers' connections ({@link dropPeers}). */
  public onDidDropPeers(listener: () => void): Subscription {
    this.#peerDrops.add(listener);
    return { dispose: () => this.#peerDrops.delete(listener) };
  }

  /** Drops every peer's connection, as a server restarting would; the cells stay. */
  public dropPeers(): void {
    for (const listener of [...this.#peerDrops]) listener();
  }

  private tell(kind: NotebookCellChange['kind'], cellId: string): void {
    for (const listener of [...this.#listeners]) listener({ kind, cellId });
  }

  private indexOf(cellId: string): number {
    const index = this.#cells.findIndex((cell) => cell.id === cellId);
    if (index < 0) throw new CoreError('cellNotFound', `Cell not found in memory:${this.name}: ${cellId}`);
    return index;
  }
}
