import type { NotebookTarget } from '../notebook-target/notebook-target.js';
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

/** Hosted sessions are excluded from local daemon reconciliation. */
export function isLocalSession(session: NotebookSession): boolean {
  return session.target.kind !== 'hosted-url';
}

/**
 * The best target to bring this session back: the saved file when the notebook has one (it
 * survives a daemon restart), else the notebook id; hosted sessions keep their URL.
 */
export function sessionRecoveryTarget(session: NotebookSession): NotebookTarget {
  if (session.target.kind === 'hosted-url') return session.target;
  const path = session.handle.notebookPath;
  if (path !== undefined) return { kind: 'local-path', path, existed: true };
  return { kind: 'notebook-id', notebookId: session.handle.notebookId };
}

/**
 * Whether `session` is the notebook `target` names: the same notebook id, the same file (the
 * handle's path or the path it was opened by), or the same hosted URL. Pure.
 */
export function isSessionFor(session: NotebookSession, target: NotebookTarget): boolean {
  switch (target.kind) {
    case 'notebook-id':
      return session.handle.notebookId === target.notebookId;
    case 'local-path':
      return (
        session.handle.notebookPath === target.path ||
        (session.target.kind === 'local-path' && session.target.path === target.path)
      );
    case 'hosted-url':
      return session.target.kind === 'hosted-url' && session.target.url === target.url;
  }
}
