import { CoreError, type NotebookHandle, type RejoinOutcome } from '@nteract-mcp/core';

/**
 * Opens a handle and waits for readiness (background rejoin promises a ready session), closing it
 * if the wait fails. The daemon's definitive `notebookUnavailable` becomes `evicted`; any other
 * CoreError (daemon down, load failure, lost connection) is transient: `retry-later`.
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
