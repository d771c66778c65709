import type { ExecutionResult, ExecutionState } from './notebook-handle.js';

/** An execution as it is now, answered as a result with `status` (what a backend's wait ended with). */
export function executionResultOf(state: ExecutionState, status: ExecutionResult['status']): ExecutionResult {
  return {
    executionId: state.executionId,
    cellId: state.cellId,
    status,
    outputs: state.outputs,
    executionCount: state.executionCount,
    ...(state.kernelNotice === undefined ? {} : { kernelNotice: state.kernelNotice }),
    ...(state.note === undefined ? {} : { note: state.note }),
  };
}
