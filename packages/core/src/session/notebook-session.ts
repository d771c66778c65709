import {
  identityOfTarget,
  isSameNotebookTarget,
  type NotebookTarget,
  type TargetSessionView,
} from '../notebook-target/notebook-target.js';
import type { NotebookHandle } from '../ports/notebook-handle.js';

/** How a session came to be installed. */
export type SessionOrigin = 'connect' | 'create' | 'rejoin';

/**
 * One connected notebook as the child holds it: the handle (our peer in the room), the target it
 * was reached by, and the activation that installed it. The notebook id, path and daemon
 * incarnation are the handle's. A session is not a readiness guarantee: ask the handle.
 */
export interface NotebookSession {
  readonly handle: NotebookHandle;
  readonly target: NotebookTarget;
  /** Unique per installation; tools compare it after async work to detect a replaced session. */
  readonly activation: number;
  readonly origin: SessionOrigin;
  readonly installedAt: number;
}

/**
 * The best target to bring this session back, by the rules of its target's backend: for local
 * notebooks the saved file when there is one (it survives a daemon restart), else the notebook
 * id; a kind without a rule keeps the target it was reached by (hosted sessions keep their URL).
 */
export function sessionRecoveryTarget(session: NotebookSession): NotebookTarget {
  return identityOfTarget(session.target).recoveryTarget?.(sessionView(session)) ?? session.target;
}

/**
 * Whether `session` is the notebook `target` names, by the rules of `target`'s backend (for local
 * notebooks: the same notebook id, or the same file, the handle's or the one it was opened by);
 * else whether the session was reached by the same target. Pure.
 */
export function isSessionFor(session: NotebookSession, target: NotebookTarget): boolean {
  const identity = identityOfTarget(target);
  if (identity.isSessionFor) return identity.isSessionFor(sessionView(session), target);
  return isSameNotebookTarget(session.target, target);
}

function sessionView(session: NotebookSession): TargetSessionView {
  return {
    target: session.target,
    notebookId: session.handle.notebookId,
    notebookPath: session.handle.notebookPath,
  };
}
