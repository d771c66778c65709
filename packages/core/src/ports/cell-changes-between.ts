import type { NotebookCell, NotebookCellChange } from './notebook-handle.js';

/**
 * The changes that turn the cell list `before` into `after`, by cell id: `deleted` (gone),
 * `inserted` (new), `updated` (source, type, outputs, execution count, metadata or editor
 * differ), `moved` (its place among the cells both lists hold changed). Pure.
 */
export function cellChangesBetween(
  before: readonly NotebookCell[],
  after: readonly NotebookCell[],
): NotebookCellChange[] {
  const earlier = new Map(before.map((cell) => [cell.id, cell]));
  const later = new Map(after.map((cell) => [cell.id, cell]));
  const changes: NotebookCellChange[] = [];
  for (const cell of before) if (!later.has(cell.id)) changes.push({ kind: 'deleted', cellId: cell.id });
  for (const cell of after) {
    const old = earlier.get(cell.id);
    if (!old) changes.push({ kind: 'inserted', cellId: cell.id });
    else if (!sameCell(old, cell)) changes.push({ kind: 'updated', cellId: cell.id });
  }
  const keptBefore = before.filter((cell) => later.has(cell.id)).map((cell) => cell.id);
  const keptAfter = after.filter((cell) => earlier.has(cell.id)).map((cell) => cell.id);
  keptAfter.forEach((id, index) => {
    if (keptBefore[index] !== id) changes.push({ kind: 'moved', cellId: id });
  });
  return changes;
}

function sameCell(a: NotebookCell, b: NotebookCell): boolean {
  return (
    a === b ||
    (a.source === b.source &&
      a.cellType === b.cellType &&
      a.executionCount === b.executionCount &&
      a.editedBy === b.editedBy &&
      JSON.stringify(a.outputs) === JSON.stringify(b.outputs) &&
      JSON.stringify(a.metadata) === JSON.stringify(b.metadata))
  );
}
