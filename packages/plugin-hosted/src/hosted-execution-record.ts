import type { CellOutput, ExecutionState } from '@nteract-mcp/core';

/** One execution of a hosted notebook's cell, from its start to its end; kept for `getExecution`. */
export interface ExecutionRecord {
  readonly executionId: string;
  readonly cellId: string;
  status: ExecutionState['status'];
  outputs: CellOutput[];
  executionCount: number | null;
  readonly kernelNotice?: string;
  /** Set when it ended without the kernel's word (the connection was lost while it ran). */
  note?: string;
  /** Settles when it ended and its outputs are saved (or could not be). */
  readonly done: Promise<void>;
}

/** The execution as core's port answers it. */
export function stateOf(record: ExecutionRecord): ExecutionState {
  return {
    executionId: record.executionId,
    cellId: record.cellId,
    status: record.status,
    outputs: record.outputs,
    executionCount: record.executionCount,
    ...(record.kernelNotice === undefined ? {} : { kernelNotice: record.kernelNotice }),
    ...(record.note === undefined ? {} : { note: record.note }),
  };
}
