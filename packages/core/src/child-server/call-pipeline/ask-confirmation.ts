import type { PersonConfirmations } from '../executions/person-confirmations.js';
import { withNote } from '../executions/person-confirmations.js';
import type { CallStep } from './call-step.js';
import { finalAnswer, toolResult } from './tool-call.js';

/**
 * Confirm: a tool that declared `confirm` asks the person first when the client can ask; a
 * refusal (or the native era's `input_required` question) is the answer, and a result of a call
 * nobody could be asked about says so. The handler of a confirmed call is told (`context.confirmed`).
 */
export function askConfirmation(confirmations: PersonConfirmations): CallStep {
  return async (call, next) => {
    const confirmation = await confirmations.check(call.name, call.policies?.confirm, call.sent, call.declared);
    if (confirmation.kind === 'answer') {
      call.release();
      return finalAnswer(confirmation.result);
    }
    const confirmed = confirmation.confirmed;
    const outcome = await next(
      confirmed === undefined ? undefined : { ...call, context: { ...call.context, confirmed } },
    );
    return outcome.kind === 'result' ? toolResult(withNote(outcome.result, confirmation.note)) : outcome;
  };
}
