/**
 * How a source edit of a cell travels and is applied: the room tells its peers that declared
 * `source_edits` the cell's source fields (a `cell_source_set` broadcast, or the `cell_source` of
 * the editing peer's answer), and each such peer (the child's copy, the page) applies them to the
 * cell it holds, keeping the rest. An edit is the size of the source, not of the cell's outputs.
 *
 * No schema library here, so that the live page's bundle can use it (`/source-edit` subpath).
 */

import type { WireCell, WireCellSource } from './schemas/wire-cell.js';

/** The fields of a cell that a source edit names or sets; a holder's cell may have any others. */
export type SourceEditableCell = WireCellSource;

/** What a source edit of `cell` tells (its source fields), from the cell as the edit left it. */
export function cellSourceOf(cell: WireCell): WireCellSource {
  return {
    id: cell.id,
    cell_type: cell.cell_type,
    source: cell.source,
    ...(cell.version === undefined ? {} : { version: cell.version }),
    ...(cell.edited_by === undefined ? {} : { edited_by: cell.edited_by }),
  };
}

/**
 * `held` (a peer's copy of the cell) with the source edit `edit` applied: its source, `version` and
 * `edited_by` those of the edit (absent when the edit has none), everything else kept. `undefined`
 * when the edit does not fit the copy: another cell, or a copy of another type (out of step: the
 * holder reads the cell again). Returns a new object; `held` is not changed.
 */
export function applyCellSource<T extends SourceEditableCell>(held: T, edit: WireCellSource): T | undefined {
  if (held.id !== edit.id || held.cell_type !== edit.cell_type) return undefined;
  const { version: _version, edited_by: _editedBy, ...rest } = held;
  return {
    ...rest,
    source: edit.source,
    ...(edit.version === undefined ? {} : { version: edit.version }),
    ...(edit.edited_by === undefined ? {} : { edited_by: edit.edited_by }),
  } as T;
}
