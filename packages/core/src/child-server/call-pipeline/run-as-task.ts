import type { ExecutionTasks } from '../executions/execution-tasks.js';
import type { CallStep } from './call-step.js';
import { finalAnswer } from './tool-call.js';

/**
 * Task: a call of a tool that declared `task`, from a client that asked for a task as its era has
 * it (legacy: the call's `task`; native: the tasks extension declared), is started as one and
 * answered with the task (or, where the server decides, the result of a run that ended in time).
 * The code's `input()` asks the person whenever the client declared elicitation.
 */
export function runAsTask(tasks: ExecutionTasks): CallStep {
  return async (call, next) => {
    const task = call.policies?.task;
    if (task === undefined || !tasks.requested(task, call.params, call.declared)) return next();
    call.release();
    const context = { ...call.context, allowInput: call.declared?.elicitation !== undefined };
    return finalAnswer(await tasks.start(task, call.args, context));
  };
}
