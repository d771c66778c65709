import type { RejoinOutcome } from '../contributions/rejoin-strategy.js';
import { CoreError } from '../errors/core-error.js';
import type { NotebookHandle } from '../ports/notebook-handle.js';

/**
 * The common body of a rejoin strategy: opens a handle (usually
 * `resolver.reopen(target, context)`), waits for readiness (background rejoin promises a ready
 * session), and classifies the failure. The handle is closed when the wait fails.
 * - `CoreError('notebookUnavailable')` (the notebook is definitively gone) ⇒ `evicted`;
 * - any other `CoreError` (daemon down, load failure, lost connection, aborted) ⇒ `retry-later`;
 * - anything else is a bug and is thrown.
 */
export async function rejoinByOpening(
  open: () => Promise<NotebookHandle>,
  signal: AbortSignal,
): Promise<RejoinOutcome> {
  let handle: NotebookHandle | undefined;
  try {
    handle = await open();
    await handle.waitUntilReady(signal);
    return { kind: 'connected', handle };
  } catch (error) {
    await handle?.close().catch(() => undefined);
    if (CoreError.is(error, 'notebookUnavailable')) return { kind: 'evicted', reason: error.message };
    if (CoreError.is(error)) return { kind: 'retry-later', reason: error.message };
    throw error;
  }
}
