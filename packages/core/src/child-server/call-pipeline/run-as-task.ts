import type { ExecutionTasks } from '../execution-tasks.js';
import type { CallStep } from './call-step.js';
import { finalAnswer } from './tool-call.js';

/**
 * Task: a call of a tool that declared `task`, from a client that asked for a task (legacy: the
 * call's `task`; native: the tasks extension declared), is started as one and answered with the
 * task (or, native, the result of a run that ended within the grace). The code's `input()` asks
 * the person whenever the client declared elicitation.
 */
export function runAsTask(tasks: ExecutionTasks, era: () => string | undefined): CallStep {
  return async (call, next) => {
    const task = call.policies?.task;
    const mode = tasks.modeOf(task, call.params, call.declared, era());
    if (task === undefined || mode === undefined) return next();
    call.release();
    const context = { ...call.context, allowInput: call.declared?.elicitation !== undefined };
    return finalAnswer(await tasks.start(task, call.args, context, mode));
  };
}
