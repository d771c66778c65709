import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { InputRounds } from '../executions/input-rounds.js';
import type { CallStep } from './call-step.js';
import { type CallOutcome, finalAnswer, toolResult } from './tool-call.js';

/**
 * Input: in a call that can be answered `input_required` (a tool that declared `inputRounds`, see
 * `InputRounds`), the retry carrying the person's answer goes on with its execution, and a call
 * whose code asks for input first is answered `input_required` (the run goes on meanwhile).
 */
export function answerInputRounds(rounds: InputRounds): CallStep {
  return async (call, next) => {
    if (!call.inputRounds) return next();
    const resumed = await rounds.resume(call.sent, call.signal);
    if (resumed !== undefined) {
      call.release();
      return finalAnswer(resumed);
    }
    const run = next().then((outcome) => resultOf(outcome));
    const answered = await rounds.run(run, call.startedRuns, call.signal);
    if (answered.resultType === 'input_required') {
      call.release();
      return finalAnswer(answered);
    }
    return toolResult(answered as CallToolResult);
  };
}

/** The run's result (the steps after this one add no answer of their own). */
function resultOf(outcome: CallOutcome): CallToolResult {
  return outcome.kind === 'result' ? outcome.result : (outcome.answer as CallToolResult);
}
