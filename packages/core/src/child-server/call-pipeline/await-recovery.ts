import type { SessionRecoveryState } from '../../session/session-recovery-state.js';
import type { CallStep } from './call-step.js';

/**
 * Recovery: a tool that needs the active session (its `session` is not `'none'`), called while a
 * lost session is being brought back, waits for it (at most `waitMs`) instead of failing just
 * before it lands.
 */
export function awaitRecovery(recovery: SessionRecoveryState, waitMs: number): CallStep {
  return async (call, next) => {
    if (needsSession(call.policies?.session)) await recovery.whenRecovered(waitMs, call.signal);
    return next();
  };
}

/** The tool works on the active session (it declared a session access). */
export function needsSession(session: string | undefined): boolean {
  return session !== undefined && session !== 'none';
}
