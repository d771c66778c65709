/** One peer of a room as the live page shows it: who, the cell it is on, the cell it runs. */
export interface PeerActivity {
  readonly peer_id: string;
  /** `human:<name>`, or the agent's `agent:<slug>:<session>` label. */
  readonly label: string;
  /** The cell it last named or said it is on (`null`: none yet). */
  readonly cell_id: string | null;
  /** The cell of its execution running or queued now (`null`: none). */
  readonly running_cell_id: string | null;
}

/** Who is where in a room now, and what runs: part of the live page's snapshot of a notebook. */
export interface RoomActivity {
  readonly peers: readonly PeerActivity[];
  readonly executions: {
    /** The cell the kernel runs now. */
    readonly running: string | null;
    /** The cells waiting, in the order they will run. */
    readonly queued: readonly string[];
  };
}
