import { CoreError } from '../errors/core-error.js';
import type { NotebookHandle } from '../ports/notebook-handle.js';

/**
 * The result of one attempt to reach a lost notebook again.
 * - `connected`: a ready handle; the coordinator decides whether to publish it.
 * - `retry-later`: transient failure; the target is kept for a later attempt.
 * - `evicted`: definitive (the daemon refused the id, the saved file is gone); recorded as an
 *   `evicted` drop and never retried.
 */
export type RejoinOutcome =
  | { readonly kind: 'connected'; readonly handle: NotebookHandle }
  | { readonly kind: 'retry-later'; readonly reason: string }
  | { readonly kind: 'evicted'; readonly reason: string };

/** What {@link rejoinByOpening} waits for before it calls the session back. */
export interface RejoinByOpeningOptions {
  /**
   * `settled` (default): document ready and runtime settled (`waitUntilReady`). `document`: the
   * notebook's document is ready (the agent can read and edit it) while its kernel may still be
   * starting; tools that need the kernel wait for it themselves. A handle whose document is still
   * pending is waited for as `settled` (the port has no document-only wait).
   */
  readonly until?: 'settled' | 'document';
}

/**
 * One rejoin attempt: opens a handle (`resolver.reopen(target, context)`), waits for readiness (background rejoin promises a ready
 * session: see {@link RejoinByOpeningOptions.until}), and classifies the failure. The handle is
 * closed when the wait fails.
 * - `CoreError('notebookUnavailable')` (the notebook is definitively gone) ⇒ `evicted`;
 * - any other `CoreError` (daemon down, load failure, lost connection, aborted) ⇒ `retry-later`;
 * - anything else is a bug and is thrown.
 */
export async function rejoinByOpening(
  open: () => Promise<NotebookHandle>,
  signal: AbortSignal,
  options: RejoinByOpeningOptions = {},
): Promise<RejoinOutcome> {
  let handle: NotebookHandle | undefined;
  try {
    handle = await open();
    const readiness = handle.readiness();
    if (readiness.document === 'failed') {
      throw new CoreError(
        'sourceDegraded',
        `Notebook ${handle.notebookId} could not be loaded: ${readiness.reason ?? 'unknown reason'}`,
      );
    }
    if (options.until !== 'document' || readiness.document !== 'ready') await handle.waitUntilReady(signal);
    return { kind: 'connected', handle };
  } catch (error) {
    await handle?.close().catch(() => undefined);
    if (CoreError.is(error, 'notebookUnavailable')) return { kind: 'evicted', reason: error.message };
    if (CoreError.is(error)) return { kind: 'retry-later', reason: error.message };
    throw error;
  }
}
