import type { ExecutionRecord } from './execution-store.js';

/** The status of a task, as both eras name it. */
export type TaskStatus = 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled';

/** One poll of a task: its status, what to say of it, and whether it ended. */
export interface TaskState {
  readonly status: TaskStatus;
  readonly statusMessage: string;
  readonly terminal: boolean;
}

/**
 * The state the executions of a task make, as the daemon reports them: queued or running ⇒
 * `working`; ended (`done`, or `error` for an exception in the cell) ⇒ `completed`; dequeued by a
 * cancel ⇒ `cancelled`; otherwise aborted (the kernel died, the daemon stopped under it) ⇒
 * `failed` with the reason. A run of several ends at the first that did not end ok (the daemon
 * runs none after it: `run_after`).
 */
export function taskStateOf(records: readonly ExecutionRecord[]): TaskState {
  const failedAt = records.findIndex((record) => record.status === 'error' || record.status === 'aborted');
  const unfinished = records.filter((record) => record.status === 'queued' || record.status === 'running');
  if (failedAt >= 0 && records.slice(0, failedAt).every((record) => record.status === 'done'))
    return endState(records[failedAt] as ExecutionRecord);
  const running = unfinished[0];
  if (running) {
    const done = records.length - unfinished.length;
    const where = records.length > 1 ? ` (${done} of ${records.length} cells done)` : '';
    return {
      status: 'working',
      statusMessage: `Cell ${running.cellId} is ${running.status}${where}; ${running.outputs.length} output(s) so far.`,
      terminal: false,
    };
  }
  return endState(records.find((record) => record.status !== 'done') ?? (records.at(-1) as ExecutionRecord));
}

function endState(record: ExecutionRecord): TaskState {
  if (record.status !== 'aborted')
    return { status: 'completed', statusMessage: `Ended ${record.status}.`, terminal: true };
  const error = record.outputs.find((output) => output.output_type === 'error') as
    | { ename?: unknown; evalue?: unknown }
    | undefined;
  if (error?.ename === 'ExecutionCancelled')
    return { status: 'cancelled', statusMessage: String(error.evalue), terminal: true };
  const reason = error ? `${String(error.ename)}: ${String(error.evalue)}` : 'aborted';
  return { status: 'failed', statusMessage: `Aborted (${reason})`, terminal: true };
}
