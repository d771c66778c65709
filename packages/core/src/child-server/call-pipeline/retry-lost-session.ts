import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import { describeNotebookTarget } from '../../notebook-target/notebook-target.js';
import type { Clock } from '../../ports/clock.js';
import type { Logger } from '../../ports/logger.js';
import type { NotebookSession } from '../../session/notebook-session.js';
import type { SessionRecoveryState } from '../../session/session-recovery-state.js';
import type { SessionSlot } from '../../session/session-slot.js';
import { withSessionNews } from '../awareness/session-news.js';
import type { UnsettledCalls } from '../executions/unsettled-calls.js';
import { errorResult } from '../tools/child-tool-registry.js';
import { needsSession } from './await-recovery.js';
import type { CallStep } from './call-step.js';
import { type CallOutcome, toolResult } from './tool-call.js';

/**
 * A call whose answer was lost with the daemon connection waits for the session to come back until
 * this long after it began (well under an MCP client's usual 60 s request timeout), and at least
 * {@link minLostAnswerWaitMs}; then it is answered with what is known.
 */
const lostAnswerDeadlineMs = 45_000;
const minLostAnswerWaitMs = 5_000;

export interface RetryLostSessionInit {
  readonly slot: SessionSlot;
  readonly recovery: SessionRecoveryState;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly unsettled: UnsettledCalls;
}

/**
 * Lost-session retry, for a tool that needs the active session. A call whose session was lost
 * under it (the daemon died or stopped answering; the watch loop removed the session to bring it
 * back) failed on the closed handle, but the daemon may have done it: the call waits for the
 * rejoin and runs once more (the steps after this one) on the new session, with the same
 * idempotency key, so a mutation that did land is answered from the daemon's ledger and not
 * applied twice. When the session is not back in time, the answer says the outcome is unknown,
 * never that the call failed. A call refused for want of a session while a lost one is being
 * brought back says it did nothing and that no reconnect is needed.
 */
export function retryLostSession(init: RetryLostSessionInit): CallStep {
  const { slot, recovery, clock, logger, unsettled } = init;
  /** `session` was removed under a call so that it be brought back (not by the agent's own disconnect or switch). */
  const lostUnderCall = (session: NotebookSession): boolean =>
    session.handle.isClosed &&
    recovery.watched &&
    (session.handle.closedReason === 'disconnected' || (slot.active !== session && recovery.recovering !== undefined));
  return async (call, next): Promise<CallOutcome> => {
    const { name, args, idempotencyKey: key, definition } = call;
    const onSession = needsSession(call.policies?.session);
    const before = onSession ? slot.active : undefined;
    const first = await next();
    if (first.kind === 'answer') return first;
    let result = first.result;
    if (result.isError === true && before !== undefined && lostUnderCall(before)) {
      const waitMs = Math.max(minLostAnswerWaitMs, lostAnswerDeadlineMs - (clock.now() - call.startedAt));
      logger.info('the session was lost under a call; running it again once the session is back', {
        tool: name,
        waitMs,
      });
      // From now until a call with this key is done, the same call (an agent retrying, its client
      // having given up on this one) goes with this call's key.
      if (key !== undefined && definition?.annotations?.readOnlyHint !== true) unsettled.remember(name, args, key);
      const back = await recovery.whenReplaced(before, waitMs, call.signal);
      const again = back ? slot.active : undefined;
      if (again) {
        const second = await next();
        if (second.kind === 'answer') return second;
        result = second.result;
      }
      if (!again || (result.isError === true && lostUnderCall(again))) {
        const waited = Math.round((clock.now() - call.startedAt) / 1000);
        result = lostAnswerResult(name, definition, key, waited);
      }
    }
    if (key !== undefined && result.isError !== true) unsettled.settle(name, args, key);
    // Refused for want of a session while a lost one is being brought back: it did nothing, and
    // the agent need not reconnect by hand.
    if (result.isError === true && onSession && before === undefined && !slot.active && recovery.watched) {
      const recovering = recovery.recovering;
      if (recovering) result = withSessionNews(result, [recoveringNote(name, describeNotebookTarget(recovering))]);
    }
    return toolResult(result);
  };
}

/**
 * The answer to a call whose session was lost under it and did not come back in time: what is
 * known. A read changed nothing; a tool that passes idempotency keys may have been applied, and
 * its retry with the same arguments is matched to it; any other may or may not have run.
 */
function lostAnswerResult(
  name: string,
  definition: Tool | undefined,
  key: string | undefined,
  waitedSecs: number,
): CallToolResult {
  const lost = `The connection to the notebook's daemon was lost while ${name} was in flight, and the session was not back after ${waitedSecs} s (it is being brought back).`;
  if (definition?.annotations?.readOnlyHint) return errorResult(`${lost} Nothing was changed; call ${name} again.`);
  if (key !== undefined) {
    return errorResult(
      `Outcome unknown: ${lost} The daemon may or may not have applied it. Calling ${name} again with the same arguments is safe: it is matched to this call and applied at most once (or answered with what this call did).`,
    );
  }
  return errorResult(
    `Outcome unknown: ${lost} It may or may not have taken effect: check the notebook (session_status, get_all_cells) before calling ${name} again.`,
  );
}

/** Said with a call refused for want of a session while the lost one is being brought back. */
function recoveringNote(name: string, target: string): string {
  return `This ${name} did nothing: the session on ${target} was lost (its daemon stopped answering or went away) and is being brought back by itself. Call ${name} again once session_status shows it active; no connect_notebook is needed.`;
}
