import type { WireNotebookAnswer } from '@nteract-mcp/runtimed-protocol';
import type { DocumentEvent } from './live-document.js';
import type { PageRequest } from './page-api.js';

/**
 * The edit an answer to the page's own request made, as the event the room told the other peers
 * (the room does not send it to the peer that made it); `undefined` for a request that is not such
 * an edit, or whose answer names no single change (an undo).
 */
export function answerEvent(request: PageRequest, answer: unknown): DocumentEvent | undefined {
  switch (request.type) {
    case 'insert_cell': {
      const { cell, index, document_version } = answer as WireNotebookAnswer<'insert_cell'>;
      return { event: 'cell_inserted', document_version, index, cell };
    }
    case 'update_cell': {
      const told = answer as WireNotebookAnswer<'update_cell'>;
      // A source edit is answered with the cell's source fields (the page declared source edits).
      return 'cell_source' in told
        ? { event: 'cell_source_set', document_version: told.document_version, cell: told.cell_source }
        : { event: 'cell_updated', document_version: told.document_version, cell: told.cell };
    }
    case 'clear_outputs': {
      const { cell, document_version } = answer as WireNotebookAnswer<'clear_outputs'>;
      return { event: 'cell_updated', document_version, cell };
    }
    case 'delete_cell': {
      const { document_version } = answer as WireNotebookAnswer<'delete_cell'>;
      return { event: 'cell_deleted', document_version, cell_id: request.cell_id };
    }
    case 'move_cell': {
      const { document_version, index } = answer as WireNotebookAnswer<'move_cell'>;
      return { event: 'cell_moved', document_version, cell_id: request.cell_id, index };
    }
    default:
      return undefined;
  }
}
