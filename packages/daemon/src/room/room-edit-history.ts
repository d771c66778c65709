import type { WireCell, WireCellChange, WireNotebookAnswer, WireNotebookRequest } from '@nteract-mcp/runtimed-protocol';
import { DaemonError } from '../daemon-error.js';
import type { DocumentChange, NotebookDocument } from '../document/notebook-document.js';
import { type DocumentEdit, type DocumentEditRequest, sourceChangeOf } from './document-edit.js';
import { RoomChangeLog } from './room-change-log.js';
import type { RoomEvent } from './room-peers.js';

/** How many of its own edits a peer (by label) can undo. */
export const undoDepth = 50;

/** One edit a peer made, as much as it takes to revert it. */
interface UndoEntry {
  readonly kind: 'inserted' | 'edited' | 'deleted' | 'moved' | 'cleared';
  readonly cellId: string;
  /** The cell before the edit (edited, deleted, cleared). */
  readonly before?: WireCell;
  /** Where the cell was before (deleted, moved). */
  readonly indexBefore?: number;
  /** The cell's content version right after the edit (inserted, edited, cleared). */
  readonly versionAfter?: string;
}

const changeKinds = {
  insert_cell: 'inserted',
  update_cell: 'edited',
  delete_cell: 'deleted',
  move_cell: 'moved',
  clear_outputs: 'cleared',
} as const satisfies Record<DocumentEditRequest['type'], WireCellChange['kind']>;

/**
 * What the room's peers did to its cells, for three things: refusing a request written against a
 * cell's older version (`expected_version`) and telling a peer when its edit replaced another's
 * (`seen_version`); the change log of `get_changes`; and `undo` of a peer's own edits. Peers are
 * known by label, which an agent keeps across its reconnections. Kept for the room's life.
 */
export class RoomEditHistory {
  readonly #document: NotebookDocument;
  readonly #now: () => number;
  #log: RoomChangeLog;
  readonly #undo = new Map<string, UndoEntry[]>();

  public constructor(document: NotebookDocument, now: () => number) {
    this.#document = document;
    this.#now = now;
    this.#log = new RoomChangeLog(document.version);
  }

  /**
   * Throws `staleCell` (nothing changed) when `request` names an `expected_version` its cell no
   * longer has, saying who changed it and what its source is now.
   */
  public checkExpected(request: WireNotebookRequest): void {
    if (!('expected_version' in request) || !request.expected_version) return;
    const cell = this.#document.cell(request.cell_id);
    if (cell.version === request.expected_version) return;
    const who = cell.edited_by ?? 'another program (the file was reloaded)';
    throw new DaemonError(
      'staleCell',
      `Cell ${cell.id} has changed since version ${request.expected_version}: ${who} edited it (its version is now ${cell.version}). Nothing was changed. Its source now:\n${cell.source}`,
    );
  }

  /** Applies one edit request of `peerLabel` to the document, recording it (change log, undo). */
  public apply(
    request: DocumentEditRequest,
    peerLabel: string,
    edit: (request: DocumentEditRequest) => DocumentEdit,
  ): DocumentEdit {
    this.checkExpected(request);
    const cellId = request.type === 'insert_cell' ? undefined : request.cell_id;
    const before = cellId === undefined ? undefined : this.#document.cell(cellId);
    const indexBefore = cellId === undefined ? undefined : this.#document.indexOf(cellId);
    const seen = 'seen_version' in request ? request.seen_version : undefined;
    const replaced =
      before && seen && before.version !== seen && before.edited_by !== peerLabel
        ? { by: before.edited_by ?? 'another program (the file was reloaded)', version: before.version as string }
        : undefined;
    const done = edit(request);
    const result = done.result as { cell?: WireCell; index?: number };
    const id = cellId ?? (result.cell?.id as string);
    const after = this.#document.has(id) ? this.#document.cell(id) : undefined;
    this.record({
      kind: changeKinds[request.type],
      cell_id: id,
      by: peerLabel,
      ...(request.type === 'insert_cell' || request.type === 'move_cell' ? { index: this.#document.indexOf(id) } : {}),
    });
    this.remember(peerLabel, {
      kind: changeKinds[request.type],
      cellId: id,
      ...(before ? { before } : {}),
      ...(indexBefore === undefined ? {} : { indexBefore }),
      ...(after?.version ? { versionAfter: after.version } : {}),
    });
    return replaced ? { ...done, result: { ...done.result, replaced } } : done;
  }

  /**
   * The document was replaced by its file (changed by another program): cursors from before now
   * say their changes are unknown, and nobody's earlier edits can be undone.
   */
  public reloaded(): void {
    this.#log = new RoomChangeLog(this.#document.version);
    this.#undo.clear();
  }

  /** A run of the cell ended; `by` is the peer that asked for it. */
  public ran(cellId: string, by: string, status: string): void {
    this.record({ kind: 'ran', cell_id: cellId, by, status });
  }

  /** The `get_changes` answer. */
  public changes(since: string | undefined): WireNotebookAnswer<'get_changes'> {
    return this.#log.since(since, this.#document.version);
  }

  /**
   * Reverts the last `count` edits of `peerLabel`, newest first, each only when nobody changed its
   * cell since. Checks them all first: refused (`undoRefused`, nothing changed) when one cannot be
   * reverted, saying which and why.
   */
  public undo(peerLabel: string, count: number): DocumentEdit {
    const stack = this.#undo.get(peerLabel) ?? [];
    if (stack.length === 0) {
      throw new DaemonError(
        'undoRefused',
        'Nothing to undo: this notebook has no edits of yours since it was opened in this daemon run (undo history is not kept across daemon restarts).',
      );
    }
    if (count > stack.length) {
      throw new DaemonError(
        'undoRefused',
        `Only ${stack.length} edit${stack.length === 1 ? '' : 's'} of yours can be undone here; nothing was changed.`,
      );
    }
    const entries = stack.slice(-count).reverse();
    // Check every step against the document as the earlier steps will leave it: simple enough,
    // because each step touches one cell and a later step on the same cell is reverted first.
    const undone = new Set<string>();
    for (const entry of entries) {
      const why = undone.has(entry.cellId) ? undefined : this.whyNot(entry);
      if (why) throw new DaemonError('undoRefused', `Cannot undo: ${why} Nothing was changed.`);
      undone.add(entry.cellId);
    }
    stack.splice(stack.length - count, count);
    const changes: DocumentChange[] = [];
    const events: RoomEvent[] = [];
    const records: WireCellChange[] = [];
    for (const entry of entries) {
      const { change, event } = this.revert(entry, peerLabel);
      changes.push(change);
      events.push(event);
      records.push(
        this.record({
          kind: entry.kind === 'inserted' ? 'deleted' : entry.kind === 'deleted' ? 'inserted' : entry.kind,
          cell_id: entry.cellId,
          by: peerLabel,
          undo: true,
          ...(this.#document.has(entry.cellId) && (entry.kind === 'deleted' || entry.kind === 'moved')
            ? { index: this.#document.indexOf(entry.cellId) }
            : {}),
        }),
      );
    }
    return {
      result: { undone: records, document_version: this.#document.version } satisfies WireNotebookAnswer<'undo'>,
      changes,
      events,
    };
  }

  private whyNot(entry: UndoEntry): string | undefined {
    const exists = this.#document.has(entry.cellId);
    if (entry.kind === 'deleted') {
      return exists ? `cell ${entry.cellId} exists again.` : undefined;
    }
    if (!exists) return `cell ${entry.cellId} was deleted since.`;
    const cell = this.#document.cell(entry.cellId);
    if (entry.kind === 'moved') return undefined;
    if (entry.kind === 'cleared') {
      return cell.outputs.length > 0 ? `cell ${entry.cellId} has run again since its outputs were cleared.` : undefined;
    }
    return cell.version === entry.versionAfter
      ? undefined
      : `cell ${entry.cellId} was changed since by ${cell.edited_by ?? 'another program'}.`;
  }

  private revert(entry: UndoEntry, peerLabel: string): { change: DocumentChange; event: RoomEvent } {
    const document = this.#document;
    switch (entry.kind) {
      case 'inserted': {
        document.delete(entry.cellId);
        return {
          change: { op: 'delete', cell_id: entry.cellId },
          event: { event: 'cell_deleted', document_version: document.version, cell_id: entry.cellId },
        };
      }
      case 'deleted': {
        const cell = entry.before as WireCell;
        const index = Math.min(entry.indexBefore ?? 0, document.cellCount);
        document.apply({ op: 'insert', index, cell });
        return {
          change: { op: 'insert', index, cell },
          event: { event: 'cell_inserted', document_version: document.version, index, cell: document.cell(cell.id) },
        };
      }
      case 'moved': {
        const index = Math.min(entry.indexBefore ?? 0, document.cellCount - 1);
        document.apply({ op: 'move', cell_id: entry.cellId, index });
        return {
          change: { op: 'move', cell_id: entry.cellId, index },
          event: { event: 'cell_moved', document_version: document.version, cell_id: entry.cellId, index },
        };
      }
      case 'edited':
      case 'cleared': {
        const current = document.cell(entry.cellId);
        const before = entry.before as WireCell;
        if (entry.kind === 'edited' && before.cell_type === current.cell_type) {
          // The source back, nothing else: journaled and told without the outputs.
          const change = sourceChangeOf({ ...current, source: before.source, edited_by: peerLabel });
          document.apply(change);
          return {
            change,
            event: { event: 'source_edit', document_version: document.version, cell: document.cell(entry.cellId) },
          };
        }
        const cell: WireCell =
          entry.kind === 'edited'
            ? { ...current, cell_type: before.cell_type, source: before.source, edited_by: peerLabel }
            : { ...current, outputs: before.outputs, execution_count: before.execution_count };
        document.apply({ op: 'set', cell });
        const now = document.cell(entry.cellId);
        return {
          change: { op: 'set', cell: now },
          event: { event: 'cell_updated', document_version: document.version, cell: now },
        };
      }
    }
  }

  private record(change: Omit<WireCellChange, 'document_version' | 'at'>): WireCellChange {
    const full: WireCellChange = {
      document_version: this.#document.version,
      at: new Date(this.#now()).toISOString(),
      ...change,
    };
    this.#log.record(full);
    return full;
  }

  private remember(peerLabel: string, entry: UndoEntry): void {
    const stack = this.#undo.get(peerLabel) ?? [];
    stack.push(entry);
    if (stack.length > undoDepth) stack.shift();
    this.#undo.set(peerLabel, stack);
  }
}
