import type { NotebookHandle } from '@nteract-mcp/core';

/** Opens a handle and waits for readiness (background rejoin promises a ready session); closes it if waiting fails. */
export async function openReadyOrClose(
  open: () => Promise<NotebookHandle>,
  signal: AbortSignal,
): Promise<NotebookHandle> {
  const handle = await open();
  try {
    await handle.waitUntilReady(signal);
    return handle;
  } catch (error) {
    await handle.close().catch(() => undefined);
    throw error;
  }
}
