import type { MutationOptions, NotebookCell, ReplacedEdit } from '../../ports/notebook-handle.js';
import { toolParameters } from './tool-parameters.js';

/** The `expected_version` parameter of the tools that change one cell. */
export const expectedVersionParameter = toolParameters.optionalString(
  'The cell version your change is based on (from get_cell, get_all_cells json, or an earlier answer): the change is refused, doing nothing, if someone changed the cell since.',
);

/**
 * The version options of a write: the agent's `expected_version` (refused when stale), and the
 * version this session last saw (the answer then says when the write replaced another's change).
 */
export function writeVersions(
  expectedVersion: string | undefined,
  seenVersion: string | undefined,
): Pick<MutationOptions, 'expectedVersion' | 'seenVersion'> {
  return {
    ...(expectedVersion === undefined ? {} : { expectedVersion }),
    ...(seenVersion === undefined ? {} : { seenVersion }),
  };
}

/** What an answer says when the write replaced a change another peer made after this session's last read. */
export function replacedText(replaced: ReplacedEdit): string {
  return `This replaced an edit by ${replaced.by} made after you last read the cell (their version ${replaced.version}). If that edit mattered, undo restores yours, or read the cell and write again; give expected_version to be refused instead.`;
}

/** A run refused because the cell is no longer at the version the agent named. */
export function staleRunText(cell: NotebookCell): string {
  return `Cell ${cell.id} has changed: its version is ${cell.version}${cell.editedBy ? ` (last edited by ${cell.editedBy})` : ''}, not the expected_version given. Nothing was run. Its source now:\n${cell.source}`;
}
