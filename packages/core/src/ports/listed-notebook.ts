/**
 * A notebook a backend has open now, as `list_active_notebooks` shows it (for the local daemon:
 * one of its rooms).
 */
export interface ListedNotebook {
  readonly notebookId: string;
  readonly activePeers: number;
  readonly hasKernel: boolean;
  readonly kernelStatus: string | undefined;
  readonly ephemeral: boolean;
  readonly notebookPath: string | undefined;
  /** Where the room's kernel runs (its file's directory, or the creating client's); `undefined` from older daemons. */
  readonly workingDir?: string;
  /** The program running the room's kernel (for Python, the interpreter), once one was started. */
  readonly kernelInterpreter?: string;
  /** Who takes part now (labels), the cell each is on and the cell each runs; absent from older daemons. */
  readonly peers?: readonly ListedPeer[];
}

/** A peer of an open notebook: its label, the cell it is on and the cell its execution runs in. */
export interface ListedPeer {
  readonly label: string;
  readonly cellId: string | null;
  readonly runningCellId: string | null;
}
