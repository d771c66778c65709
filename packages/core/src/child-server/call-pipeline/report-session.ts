import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { withSessionReport } from '../../handoff/session-report.js';
import type { SessionRecoveryState } from '../../session/session-recovery-state.js';
import type { SessionSlot } from '../../session/session-slot.js';
import type { PeerAwareness } from '../awareness/peer-awareness.js';
import { type SessionNews, withSessionNews } from '../awareness/session-news.js';
import type { CallStep } from './call-step.js';

export interface ReportSessionInit {
  readonly slot: SessionSlot;
  readonly recovery: SessionRecoveryState;
  readonly awareness: PeerAwareness;
  readonly news: SessionNews;
  /** The peer label as of now. */
  readonly peerLabel: () => string;
}

/**
 * Report: the one place every tool result (success or tool error) gets the session report, as
 * of the moment the result was produced, with the session's news and what the other peers did
 * since the previous call (after the tool ran). An answer that is not the tool's result (a task,
 * an `input_required`, the person's refusal) goes as it is.
 */
export function reportSession(init: ReportSessionInit): CallStep {
  const { slot, recovery, awareness, news, peerLabel } = init;
  return async (call, next) => {
    const outcome = await next();
    call.release();
    if (outcome.kind === 'answer') return outcome;
    const changes = await awareness.changeNote(slot.active?.handle, peerLabel());
    const lines = [...news.take(slot.active?.handle), ...changes];
    const cursor = slot.active ? awareness.cursorOf(slot.active.handle.notebookId) : undefined;
    const report = cursor === undefined ? recovery.report() : { ...recovery.report(), changeCursor: cursor };
    const result: CallToolResult = withSessionReport(withSessionNews(outcome.result, lines), report);
    return { kind: 'result', result };
  };
}
