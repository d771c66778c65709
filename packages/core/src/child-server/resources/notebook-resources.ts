import { basename } from 'node:path';
import {
  McpError,
  type ReadResourceResult,
  type Resource,
  type ResourceTemplate,
} from '@modelcontextprotocol/sdk/types.js';
import type { EraDialect } from '../../contributions/protocol-admission.js';
import { sdkDialect } from '../../contributions/sdk-dialect.js';
import { CoreError } from '../../errors/core-error.js';
import type { NotebookCell } from '../../ports/notebook-handle.js';
import type { NotebookSession } from '../../session/notebook-session.js';
import type { SessionSlot } from '../../session/session-slot.js';

/** The URI prefix of notebook resources: `nteract://notebook/<notebook_id>`. */
export const notebookResourceUriPrefix = 'nteract://notebook/';

/** The MIME type of a notebook resource's contents (nbformat 4 JSON). */
export const notebookResourceMimeType = 'application/x-ipynb+json';

/** The MIME type of a cell resource's contents (the cell as JSON). */
export const cellResourceMimeType = 'application/json';

/** The template of cell resources: any cell of any open notebook, by the two ids. */
export const cellResourceUriTemplate = `${notebookResourceUriPrefix}{notebook_id}/cells/{cell_id}`;

/** At most this many cells of the active notebook are listed as resources; the template reaches the others. */
export const maxListedCellResources = 100;

const cellsSegment = '/cells/';

/** What a resource URI of this server names: a notebook, or one cell of it. */
export interface NotebookResourceAddress {
  /** Lower case, as notebook ids are compared. */
  readonly notebookId: string;
  readonly cellId?: string;
}

/** `nteract://notebook/<notebook_id>`. Pure. */
export function notebookResourceUri(notebookId: string): string {
  return `${notebookResourceUriPrefix}${notebookId}`;
}

/** `nteract://notebook/<notebook_id>/cells/<cell_id>` (the cell id percent-encoded where it must be). Pure. */
export function cellResourceUri(notebookId: string, cellId: string): string {
  return `${notebookResourceUriPrefix}${notebookId}${cellsSegment}${encodeURIComponent(cellId)}`;
}

/**
 * What `uri` names when it has the shape of one of this server's resources (a notebook or cell
 * URI, whether that notebook is open or not); `undefined` otherwise. Pure.
 */
export function parseNotebookResourceUri(uri: string): NotebookResourceAddress | undefined {
  if (!uri.startsWith(notebookResourceUriPrefix)) return undefined;
  const rest = uri.slice(notebookResourceUriPrefix.length);
  const at = rest.indexOf(cellsSegment);
  const notebookId = (at < 0 ? rest : rest.slice(0, at)).toLowerCase();
  if (!/^[0-9a-z][0-9a-z._-]*$/.test(notebookId)) return undefined;
  if (at < 0) return { notebookId };
  let cellId: string;
  try {
    cellId = decodeURIComponent(rest.slice(at + cellsSegment.length));
  } catch {
    return undefined;
  }
  if (cellId.length === 0 || cellId.includes('/')) return undefined;
  return { notebookId, cellId };
}

/**
 * The refusal of a URI that names no resource of this server: the resource-not-found error with
 * the `code` of the protocol era the client speaks (`EraDialect.resourceNotFoundCode`: -32002 in
 * the `initialize` era, -32602 from 2026-07-28 on, SEP-2164), the URI as `data.uri` and the
 * message `Unknown resource: <uri>`. Pure.
 */
export function unknownResourceError(uri: string, code: number): McpError {
  const text = `Unknown resource: ${uri}`;
  const error = new McpError(code, text, { uri });
  // The SDK's McpError writes `MCP error <code>: ` into its message; the wire message is the text alone.
  error.message = text;
  return error;
}

/**
 * The resources of the child server: one per connected (active) or parked notebook, the cells of
 * the active notebook (at most {@link maxListedCellResources} listed; the template
 * {@link cellResourceUriTemplate} reaches every cell of every open notebook). Reading a notebook
 * returns it as nbformat 4 JSON (cells with id, type, source; code cells with outputs and
 * execution count); reading a cell returns that cell as JSON (`id`, `cell_type`, `source`,
 * `metadata`, for code cells `outputs` and `execution_count`; `edited_by` when its backend knows
 * who last edited it, and `version`, what an edit's `expected_version` is checked against, when
 * it keeps one). Both are read from the session's own handle, so parked notebooks are
 * readable without switching.
 */
export class NotebookResources {
  /** `dialect`: how the connection's era speaks, which decides the code of a resource-not-found error. */
  public constructor(
    private readonly slot: SessionSlot,
    private readonly dialect: () => EraDialect = () => sdkDialect,
  ) {}

  /** Notebooks (active first, then parked ones, least recently used first), then the active notebook's cells. */
  public async list(): Promise<Resource[]> {
    const active = this.slot.active;
    const sessions = [active, ...this.slot.parked].filter(
      (session): session is NotebookSession => session !== undefined,
    );
    const cells = active && !active.handle.isClosed ? await active.handle.listCells().catch(() => []) : [];
    const notebooks = sessions.map((session): Resource => {
      const { notebookId, notebookPath } = session.handle;
      const where = `${notebookId}${notebookPath ? ` (${notebookPath})` : ''}`;
      const description =
        session !== active
          ? `Parked notebook ${where}`
          : cells.length > maxListedCellResources
            ? `Active notebook ${where}. It has ${cells.length} cells; the first ${maxListedCellResources} are listed, read any cell as ${notebookResourceUri(notebookId)}${cellsSegment}{cell_id}.`
            : `Active notebook ${where}`;
      return {
        uri: notebookResourceUri(notebookId),
        name: notebookName(session),
        mimeType: notebookResourceMimeType,
        description,
      };
    });
    if (!active) return notebooks;
    const name = notebookName(active);
    const listed = cells.slice(0, maxListedCellResources).map(
      (cell, index): Resource => ({
        uri: cellResourceUri(active.handle.notebookId, cell.id),
        name: `${name} cell ${index + 1}`,
        title: cellTitle(cell, index),
        mimeType: cellResourceMimeType,
        description: `${cell.cellType} cell ${cell.id}, ${index + 1} of ${cells.length} in the active notebook ${name}`,
      }),
    );
    return [...notebooks, ...listed];
  }

  /** The template that names any cell of an open notebook. */
  public templates(): ResourceTemplate[] {
    return [
      {
        uriTemplate: cellResourceUriTemplate,
        name: 'notebook cell',
        title: 'A cell of an open notebook',
        mimeType: cellResourceMimeType,
        description:
          'One cell of a connected or parked notebook as JSON (id, cell_type, source, outputs, execution_count, edited_by, version); subscribe to it to be told when it changes.',
      },
    ];
  }

  /** Throws the resource-not-found error ({@link unknownResourceError}) for a URI naming no cell or notebook of an active or parked session. */
  public async read(uri: string): Promise<ReadResourceResult> {
    const address = parseNotebookResourceUri(uri);
    const session = address ? this.slot.find(address.notebookId) : undefined;
    if (!address || !session) throw this.unknownResource(uri);
    if (address.cellId !== undefined) {
      const cell = await this.cellOf(session, address.cellId, uri);
      return { contents: [{ uri, mimeType: cellResourceMimeType, text: JSON.stringify(cellJson(cell), null, 2) }] };
    }
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

  /**
   * Resolves when `uri` names a notebook of an active or parked session, or a cell of one; throws
   * the resource-not-found error ({@link unknownResourceError}) otherwise.
   */
  public async assertExists(uri: string): Promise<NotebookResourceAddress> {
    const address = parseNotebookResourceUri(uri);
    const session = address ? this.slot.find(address.notebookId) : undefined;
    if (!address || !session) throw this.unknownResource(uri);
    if (address.cellId !== undefined) await this.cellOf(session, address.cellId, uri);
    return address;
  }

  /** The resource-not-found error for `uri` ({@link unknownResourceError}), with the code of the connection's era. */
  public unknownResource(uri: string): McpError {
    return unknownResourceError(uri, this.dialect().resourceNotFoundCode);
  }

  private async cellOf(session: NotebookSession, cellId: string, uri: string): Promise<NotebookCell> {
    try {
      return await session.handle.getCell(cellId);
    } catch (error) {
      if (CoreError.is(error, 'cellNotFound')) throw this.unknownResource(uri);
      throw error;
    }
  }
}

function notebookName(session: NotebookSession): string {
  const { notebookId, notebookPath } = session.handle;
  return notebookPath !== undefined ? basename(notebookPath) : `Untitled ${notebookId.slice(0, 8)}`;
}

/** `Cell <n>: <first line of its source>`, at most 80 characters. */
function cellTitle(cell: NotebookCell, index: number): string {
  const firstLine = cell.source.split('\n', 1)[0]?.trim() ?? '';
  const title = firstLine.length > 0 ? `Cell ${index + 1}: ${firstLine}` : `Cell ${index + 1} (empty)`;
  return title.length > 80 ? `${title.slice(0, 79)}…` : title;
}

function nbformatCell(cell: NotebookCell): Record<string, unknown> {
  const common = { id: cell.id, cell_type: cell.cellType, source: cell.source, metadata: cell.metadata };
  return cell.cellType === 'code' ? { ...common, outputs: cell.outputs, execution_count: cell.executionCount } : common;
}

function cellJson(cell: NotebookCell): Record<string, unknown> {
  return {
    ...nbformatCell(cell),
    ...(cell.editedBy === undefined ? {} : { edited_by: cell.editedBy }),
    ...(cell.version === undefined ? {} : { version: cell.version }),
  };
}
