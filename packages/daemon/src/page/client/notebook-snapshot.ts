import type { WireCell, WireRoomCondition, WireRoomInfo, WireRuntimeState } from '@nteract-mcp/runtimed-protocol';

/** A peer of the room as the page shows it. */
export interface SnapshotPeer {
  /** `null` when the daemon gives labels only. */
  readonly peerId: string | null;
  /** `human:Ada`, `agent:<slug>:<session>`, … */
  readonly label: string;
  /** The cell the peer is on (its presence), if it said. */
  readonly cellId: string | null;
  /** The cell whose execution the peer started and that runs now. */
  readonly runningCellId: string | null;
}

/** A cell, with the label of the peer that last inserted or edited its source (when the daemon says). */
export type SnapshotCell = WireCell & { readonly edited_by?: string };

/** The notebook as `GET /api/notebooks/<id>` gives it, read into what the page needs. */
export interface NotebookSnapshot {
  readonly notebookId: string;
  readonly path: string | null;
  readonly documentVersion: number;
  readonly runtime: WireRuntimeState;
  readonly conditions: readonly WireRoomCondition[];
  readonly peers: readonly SnapshotPeer[];
  readonly cells: readonly SnapshotCell[];
  /** The cell running now, and those queued behind it (empty when the daemon does not say). */
  readonly running: string | null;
  readonly queued: readonly string[];
  /** What lets this page's frames and images load the notebook's outputs (the `cap` query value). */
  readonly outputCapability: string;
}

interface SnapshotBody {
  readonly notebook_id: string;
  readonly output_capability?: string;
  readonly path: string | null;
  readonly document_version: number;
  readonly runtime: WireRuntimeState;
  readonly conditions?: readonly WireRoomCondition[];
  readonly peers?: readonly (
    | string
    | { peer_id: string; label: string; cell_id?: string | null; running_cell_id?: string | null }
  )[];
  readonly cells: readonly SnapshotCell[];
  readonly executions?: { readonly running: string | null; readonly queued: readonly string[] };
}

/**
 * Reads a snapshot body. Peers come as label strings (older daemons) or as objects with the
 * peer's id, its presence and the cell it runs; both read the same way.
 */
export function readSnapshot(body: unknown): NotebookSnapshot {
  const raw = body as SnapshotBody;
  return {
    notebookId: raw.notebook_id,
    path: raw.path,
    documentVersion: raw.document_version,
    runtime: raw.runtime,
    conditions: raw.conditions ?? [],
    cells: raw.cells,
    outputCapability: raw.output_capability ?? '',
    ...readActivity(raw),
  };
}

/** Who is in the room and what runs, as `GET /api/notebooks/<id>/activity` gives it (and the snapshot). */
export interface NotebookActivityBody {
  readonly peers?: SnapshotBody['peers'];
  readonly executions?: SnapshotBody['executions'];
}

/** Reads an activity body (the peers and executions of a snapshot body). */
export function readActivity(body: unknown): Pick<NotebookSnapshot, 'peers' | 'running' | 'queued'> {
  const raw = body as NotebookActivityBody;
  return {
    peers: (raw.peers ?? []).map((peer) =>
      typeof peer === 'string'
        ? { peerId: null, label: peer, cellId: null, runningCellId: null }
        : {
            peerId: peer.peer_id,
            label: peer.label,
            cellId: peer.cell_id ?? null,
            runningCellId: peer.running_cell_id ?? null,
          },
    ),
    running: raw.executions?.running ?? null,
    queued: raw.executions?.queued ?? [],
  };
}

/** One entry of `GET /api/rooms`. */
export type RoomListing = WireRoomInfo;
