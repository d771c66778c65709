import type { ToolCallContext } from '../tool-call-context.js';

/**
 * The runs a tool that declares task support can start as a task (`ExecutionTasks` implements
 * them). Each queues work in the daemon and answers the task id once the daemon accepted it; a
 * `ToolError` says what was wrong with the arguments or the session.
 */
export interface TaskRuns {
  /** One cell of the active notebook (`cell_id`, and `expected_version` when given). */
  cell(args: unknown, context: ToolCallContext): Promise<string>;
  /** Every code cell of the active notebook in order, each after the one before ended ok. */
  allCells(context: ToolCallContext): Promise<string>;
  /** `code` as a scratch run the daemon keeps as an execution. */
  code(args: unknown, context: ToolCallContext): Promise<string>;
}
