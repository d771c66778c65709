import type { WireNotebookAnswer, WireNotebookRequest, WireRoomEvent } from '@nteract-mcp/runtimed-protocol';
import type { DocumentChange, NotebookDocument } from '../document/notebook-document.js';

/** The requests that edit the document. */
export type DocumentEditRequest = Extract<
  WireNotebookRequest,
  { type: 'insert_cell' | 'update_cell' | 'delete_cell' | 'move_cell' | 'clear_outputs' }
>;

/** What one edit did: the answer, the change to journal, the event for the other peers. */
export interface DocumentEdit {
  readonly result: Record<string, unknown>;
  readonly change?: DocumentChange;
  readonly event?: WireRoomEvent;
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
        change: { op: 'insert', index, cell },
        event: { event: 'cell_inserted', document_version: document.version, index, cell },
      };
    }
    case 'update_cell': {
      const cell = document.update(request.cell_id, {
        source: request.source ?? undefined,
        cellType: request.cell_type,
        author,
      });
      return {
        result: { cell, document_version: document.version } satisfies WireNotebookAnswer<'update_cell'>,
        change: { op: 'set', cell },
        event: { event: 'cell_updated', document_version: document.version, cell },
      };
    }
    case 'delete_cell': {
      const cellId = request.cell_id;
      document.delete(cellId);
      return {
        result: { document_version: document.version } satisfies WireNotebookAnswer<'delete_cell'>,
        change: { op: 'delete', cell_id: cellId },
        event: { event: 'cell_deleted', document_version: document.version, cell_id: cellId },
      };
    }
    case 'move_cell': {
      const cellId = request.cell_id;
      const index = document.move(cellId, request.after_cell_id ?? null);
      return {
        result: { index, document_version: document.version } satisfies WireNotebookAnswer<'move_cell'>,
        change: { op: 'move', cell_id: cellId, index },
        event: { event: 'cell_moved', document_version: document.version, cell_id: cellId, index },
      };
    }
    case 'clear_outputs': {
      const cell = document.clearOutputs(request.cell_id);
      return {
        result: { cell, document_version: document.version } satisfies WireNotebookAnswer<'update_cell'>,
        change: { op: 'set', cell },
        event: { event: 'cell_updated', document_version: document.version, cell },
      };
    }
  }
}
