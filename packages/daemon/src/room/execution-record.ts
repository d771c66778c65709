import type { WireExecutionState, WireRoomEvent } from '@nteract-mcp/runtimed-protocol';
import type { NotebookOutput } from '../document/notebook-document.js';
import { outputHoldsBlob } from '../persistence/blob-text.js';

/** One execution of a cell, from queued to its end; kept for `get_execution` (see `RoomExecutions`). */
export interface ExecutionRecord {
  readonly executionId: string;
  readonly cellId: string;
  status: 'queued' | 'running' | 'ok' | 'error' | 'aborted';
  outputs: readonly NotebookOutput[];
  executionCount: number | null;
  /** Said to the agent with this execution: it runs in a new kernel, and why the old one is gone. */
  kernelNotice?: string;
  /** The peer that asked for it, and its label (absent: one restored from the journal). */
  readonly peerId?: string;
  readonly peerLabel?: string;
  /** The peer answers the code's `input()` (its `execute_cell` said `allow_input`). */
  readonly allowInput?: boolean;
  /** Runs only when this execution ended `ok` (else it ends `aborted`, not run). */
  readonly runAfter?: string;
  /** A scratch run kept as an execution (`start_code`): no cell (its `cellId` is `scratch`), no broadcast. */
  readonly scratch?: boolean;
  /**
   * How many output edits were broadcast; absent when its outputs are not told as edits (it never
   * ran in its cell, or the cell was deleted while it ran): then its end carries them.
   */
  outputEvents?: number;
  /** The document version that put its end (outputs, execution count) into its cell. */
  endVersion?: number;
}

/** The `cell_id` of a scratch run kept as an execution. */
export const scratchCellId = 'scratch';

// What peers and agents are told about an execution is built here, and only here: the
// `get_execution` answer (also the answer of `execute_cell` and a retried one's ledger entry) and
// the `execution_done` broadcast that ends it.

/** An execution as `get_execution` (and `execute_cell`) answers it. */
export function executionState(record: ExecutionRecord): WireExecutionState {
  return {
    execution_id: record.executionId,
    cell_id: record.cellId,
    status: record.status,
    outputs: [...record.outputs],
    execution_count: record.executionCount,
    ...(record.kernelNotice === undefined ? {} : { kernel_notice: record.kernelNotice }),
  };
}

/**
 * For peers that read blob references (the connection drops it for the others): the outputs of a
 * run told as edits that ended holding blobs, by index, so such a peer can hold references instead
 * of the texts the edits built.
 */
function blobOutputsOf(record: ExecutionRecord): { blob_outputs?: { index: number; output: NotebookOutput }[] } {
  if (record.outputEvents === undefined || record.endVersion === undefined) return {};
  const blobOutputs = record.outputs.flatMap((output, index) => (outputHoldsBlob(output) ? [{ index, output }] : []));
  return blobOutputs.length === 0 ? {} : { blob_outputs: blobOutputs };
}

/**
 * The `execution_done` broadcast of a finished execution (one still queued or running ends
 * `aborted`): how it ended, not its outputs, which its output edits told, unless it never ran in
 * its cell (cancelled, not run, no kernel): then the outputs saying why are in it.
 */
export function executionDoneEvent(record: ExecutionRecord): WireRoomEvent {
  return {
    event: 'execution_done',
    execution_id: record.executionId,
    cell_id: record.cellId,
    status: record.status === 'queued' || record.status === 'running' ? 'aborted' : record.status,
    execution_count: record.executionCount,
    ...(record.endVersion === undefined ? {} : { document_version: record.endVersion }),
    ...(record.outputEvents === undefined ? { outputs: [...record.outputs] } : { output_events: record.outputEvents }),
    ...(record.kernelNotice === undefined ? {} : { kernel_notice: record.kernelNotice }),
    ...blobOutputsOf(record),
  };
}
