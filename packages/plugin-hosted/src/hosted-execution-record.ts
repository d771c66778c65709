import {
  type CellOutput,
  type Clock,
  type ExecutionResult,
  type ExecutionState,
  executionResultOf,
  type Timer,
} from '@nteract-mcp/core';

/** The `cellId` of a scratch run kept as an execution (as the local daemon names it). */
export const scratchCellId = 'scratch';

/**
 * One execution of a hosted notebook's cell, from its start to its end; kept for `getExecution`:
 * the port's {@link ExecutionState} with its status, outputs, count and note written as the run
 * goes ({@link stateOf} is what the port answers), and when it ended. The hosted handle's own
 * (mutable) record: core's `ExecutionRecord` is built from what the port answers.
 */
export interface HostedExecutionRecord extends Pick<ExecutionState, 'executionId' | 'cellId' | 'kernelNotice'> {
  status: ExecutionState['status'];
  outputs: CellOutput[];
  executionCount: ExecutionState['executionCount'];
  /** Set when it ended without the kernel's word (the connection was lost while it ran). */
  note?: string;
  /** Settles when it ended and its outputs are saved (or could not be). */
  readonly done: Promise<void>;
}

/** The execution as core's port answers it. */
export function stateOf(record: HostedExecutionRecord): ExecutionState {
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

/** At most this many executions are remembered for `getExecution` (the oldest finished ones go first). */
export const maxRememberedExecutions = 256;

/** Keeps `record` in `executions`, letting the oldest finished one go past {@link maxRememberedExecutions}. */
export function rememberExecution(executions: Map<string, HostedExecutionRecord>, record: HostedExecutionRecord): void {
  executions.set(record.executionId, record);
  if (executions.size <= maxRememberedExecutions) return;
  for (const [id, old] of executions) {
    if (old.status !== 'running' && old.status !== 'queued') {
      executions.delete(id);
      return;
    }
  }
}

/**
 * The result of `record` once it ended, or at `timeoutMs` (`timeout` while it still runs); an
 * execution that settled without the kernel's word is `aborted`.
 */
export async function resultWhenDone(
  record: HostedExecutionRecord,
  clock: Clock,
  timeoutMs: number | undefined,
): Promise<ExecutionResult> {
  let timedOut = false;
  if (timeoutMs === undefined) await record.done;
  else timedOut = !(await endsWithin(record, clock, timeoutMs));
  const state = stateOf(record);
  const running = state.status === 'running' || state.status === 'queued';
  const status: ExecutionResult['status'] = timedOut && running ? 'timeout' : running ? 'aborted' : state.status;
  return executionResultOf(state, status);
}

/** Whether `record` ends within `ms` (its timer cancelled once it did). */
export async function endsWithin(record: HostedExecutionRecord, clock: Clock, ms: number): Promise<boolean> {
  let timer: Timer | undefined;
  const ended = await Promise.race([
    record.done.then(() => true),
    new Promise<false>((resolve) => {
      timer = clock.setTimer(ms, () => resolve(false));
    }),
  ]);
  timer?.cancel();
  return ended;
}
