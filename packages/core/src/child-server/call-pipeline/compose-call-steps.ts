import type { CallStep } from './call-step.js';
import type { CallOutcome, ToolCall } from './tool-call.js';

/** Runs `steps` in order around a call: the first is outermost; the last answers without calling `next`. */
export function composeCallSteps(steps: readonly CallStep[]): (call: ToolCall) => Promise<CallOutcome> {
  const run = (index: number, call: ToolCall): Promise<CallOutcome> => {
    const step = steps[index];
    if (!step) return Promise.reject(new Error('call pipeline: its last step called next'));
    return step(call, (changed) => run(index + 1, changed ?? call));
  };
  return (call) => run(0, call);
}
