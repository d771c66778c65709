import { basename } from 'node:path';
import type { ReadResourceResult, Resource } from '@modelcontextprotocol/sdk/types.js';
import type { NotebookCell } from '../ports/notebook-handle.js';
import type { NotebookSession } from '../session/notebook-session.js';
import type { SessionSlot } from '../session/session-slot.js';
import { InvalidParamsError } from './to-tool-failure.js';

/** The URI prefix of notebook resources: `nteract://notebook/<notebook_id>`. */
export const notebookResourceUriPrefix = 'nteract://notebook/';

/** The MIME type of a notebook resource's contents (nbformat 4 JSON). */
export const notebookResourceMimeType = 'application/x-ipynb+json';

/**
 * One resource per connected (active) or parked notebook. Reading one returns the notebook as
 * nbformat 4 JSON (cells with id, type, source; code cells with outputs and execution count) from
 * that session's own handle, so parked notebooks are readable without switching.
 */
export class NotebookResources {
  public constructor(private readonly slot: SessionSlot) {}

  /** Active first, then parked ones (least recently used first). */
  public list(): Resource[] {
    const sessions = [this.slot.active, ...this.slot.parked].filter(
      (session): session is NotebookSession => session !== undefined,
    );
    return sessions.map((session) => {
      const { notebookId, notebookPath } = session.handle;
      return {
        uri: `${notebookResourceUriPrefix}${notebookId}`,
        name: notebookPath !== undefined ? basename(notebookPath) : `Untitled ${notebookId.slice(0, 8)}`,
        mimeType: notebookResourceMimeType,
        description:
          session === this.slot.active
            ? `Active notebook ${notebookId}${notebookPath ? ` (${notebookPath})` : ''}`
            : `Parked notebook ${notebookId}${notebookPath ? ` (${notebookPath})` : ''}`,
      };
    });
  }

  /** Throws invalid params `Unknown resource: <uri>` for a URI naming no active or parked notebook. */
  public async read(uri: string): Promise<ReadResourceResult> {
    const notebookId = uri.startsWith(notebookResourceUriPrefix)
      ? uri.slice(notebookResourceUriPrefix.length).toLowerCase()
      : undefined;
    const session = notebookId ? this.slot.find(notebookId) : undefined;
    if (!session) throw new InvalidParamsError(`Unknown resource: ${uri}`);
    const cells = await session.handle.listCells();
    const notebook = {
      cells: cells.map(nbformatCell),
      metadata: {
        nteract: { notebook_id: session.handle.notebookId, path: session.handle.notebookPath ?? null },
      },
      nbformat: 4,
      nbformat_minor: 5,
    };
    return { contents: [{ uri, mimeType: notebookResourceMimeType, text: JSON.stringify(notebook, null, 2) }] };
  }
}

function nbformatCell(cell: NotebookCell): Record<string, unknown> {
  const common = { id: cell.id, cell_type: cell.cellType, source: cell.source, metadata: cell.metadata };
  return cell.cellType === 'code' ? { ...common, outputs: cell.outputs, execution_count: cell.executionCount } : common;
}
