import { randomUUID } from 'node:crypto';
import type { CellOutput, CellType, NotebookCell } from '@nteract-mcp/core';
import { cellContentVersion } from '@nteract-mcp/foundation';

/** A cell of a hosted notebook as the handle edits it: nbformat 4 fields, source as one string. */
export interface MutableCell {
  id: string;
  cellType: CellType;
  source: string;
  outputs: CellOutput[];
  executionCount: number | null;
  metadata: Record<string, unknown>;
  /** Other nbformat fields (attachments, …), written back as they were. */
  readonly rest: Record<string, unknown>;
}

/** A new empty cell with a fresh id. */
export function newCell(cellType: CellType, source: string): MutableCell {
  return { id: newCellId(), cellType, source, outputs: [], executionCount: null, metadata: {}, rest: {} };
}

/** A cell as read from the notebook file (a missing id gets a fresh one; a list source is joined). */
export function readCell(raw: Record<string, unknown>): MutableCell {
  const { id, cell_type, source, outputs, execution_count, metadata, ...rest } = raw;
  const cellType: CellType = cell_type === 'markdown' || cell_type === 'raw' ? cell_type : 'code';
  return {
    id: typeof id === 'string' && id !== '' ? id : newCellId(),
    cellType,
    source: Array.isArray(source) ? source.join('') : String(source ?? ''),
    outputs: Array.isArray(outputs) ? (outputs as CellOutput[]) : [],
    executionCount: typeof execution_count === 'number' ? execution_count : null,
    metadata: typeof metadata === 'object' && metadata !== null ? (metadata as Record<string, unknown>) : {},
    rest,
  };
}

/** A cell as written to the notebook file (outputs and execution count for code cells only). */
export function writeCell(cell: MutableCell): Record<string, unknown> {
  const base = { ...cell.rest, id: cell.id, cell_type: cell.cellType, metadata: cell.metadata, source: cell.source };
  return cell.cellType === 'code'
    ? { ...base, outputs: cell.outputs, execution_count: cell.executionCount }
    : { ...base };
}

/** The cell as core's port shows it (its own outputs array). */
export function toNotebookCell(cell: MutableCell): NotebookCell {
  return {
    id: cell.id,
    cellType: cell.cellType,
    source: cell.source,
    outputs: [...cell.outputs],
    executionCount: cell.executionCount,
    metadata: cell.metadata,
    version: cellContentVersion(cell.cellType, cell.source),
  };
}

function newCellId(): string {
  return randomUUID().replace(/-/g, '').slice(0, 16);
}
