import {
  cellSourceOf,
  type WireCell,
  type WireNotebookAnswer,
  type WireNotebookRequest,
} from '@nteract-mcp/runtimed-protocol';
import type { DocumentChange, NotebookDocument } from '../document/notebook-document.js';
import type { RoomEvent } from './room-peers.js';

/** The requests that edit the document. */
export type DocumentEditRequest = Extract<
  WireNotebookRequest,
  { type: 'insert_cell' | 'update_cell' | 'delete_cell' | 'move_cell' | 'clear_outputs' }
>;

/**
 * What one request did to the document: the answer, the changes to journal and the events for the
 * other peers, in order (one of each for an edit; several for an undo; none for a request that
 * only queues something).
 */
export interface DocumentEdit {
  readonly result: Record<string, unknown>;
  readonly changes?: readonly DocumentChange[];
  readonly events?: readonly RoomEvent[];
}

/**
 * Applies one editing request to `document` (the room journals and broadcasts what it did);
 * `author`, the requesting peer's label, becomes the `edited_by` of a cell it inserts or edits.
 */
export function applyDocumentEdit(
  document: NotebookDocument,
  request: DocumentEditRequest,
  author: string,
): DocumentEdit {
  switch (request.type) {
    case 'insert_cell': {
      const { cell, index } = document.insert({
        source: request.source ?? '',
        cellType: request.cell_type ?? 'code',
        index: request.index ?? undefined,
        author,
      });
      return {
        result: { cell, index, document_version: document.version } satisfies WireNotebookAnswer<'insert_cell'>,
        changes: [{ op: 'insert', index, cell }],
        events: [{ event: 'cell_inserted', document_version: document.version, index, cell }],
      };
    }
    case 'update_cell': {
      const typeBefore = document.cell(request.cell_id).cell_type;
      const cell = document.update(request.cell_id, {
        source: request.source ?? undefined,
        cellType: request.cell_type,
        author,
      });
      if (cell.cell_type !== typeBefore) {
        // A new type clears the outputs: the whole cell is as small as its source.
        return {
          result: { cell, document_version: document.version } satisfies WireNotebookAnswer<'update_cell'>,
          changes: [{ op: 'set', cell }],
          events: [{ event: 'cell_updated', document_version: document.version, cell }],
        };
      }
      // The source changed, nothing else: journaled, answered and told without the outputs.
      return {
        result: {
          cell_source: cellSourceOf(cell),
          document_version: document.version,
        } satisfies WireNotebookAnswer<'update_cell'>,
        changes: [sourceChangeOf(cell)],
        events: [{ event: 'source_edit', document_version: document.version, cell }],
      };
    }
    case 'delete_cell': {
      const cellId = request.cell_id;
      document.delete(cellId);
      return {
        result: { document_version: document.version } satisfies WireNotebookAnswer<'delete_cell'>,
        changes: [{ op: 'delete', cell_id: cellId }],
        events: [{ event: 'cell_deleted', document_version: document.version, cell_id: cellId }],
      };
    }
    case 'move_cell': {
      const cellId = request.cell_id;
      const index = document.move(cellId, request.after_cell_id ?? null);
      return {
        result: { index, document_version: document.version } satisfies WireNotebookAnswer<'move_cell'>,
        changes: [{ op: 'move', cell_id: cellId, index }],
        events: [{ event: 'cell_moved', document_version: document.version, cell_id: cellId, index }],
      };
    }
    case 'clear_outputs': {
      const cell = document.clearOutputs(request.cell_id);
      return {
        result: { cell, document_version: document.version } satisfies WireNotebookAnswer<'clear_outputs'>,
        changes: [{ op: 'set', cell }],
        events: [{ event: 'cell_updated', document_version: document.version, cell }],
      };
    }
  }
}

/** The journal's record of a source edit that left `cell` as it is. */
export function sourceChangeOf(cell: WireCell): DocumentChange {
  return {
    op: 'source',
    cell_id: cell.id,
    cell_type: cell.cell_type,
    source: cell.source,
    ...(cell.edited_by === undefined ? {} : { edited_by: cell.edited_by }),
  };
}
