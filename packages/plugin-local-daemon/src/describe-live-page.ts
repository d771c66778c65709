import type { DaemonPort } from '@nteract-mcp/core';

/**
 * The sentence the local daemon's backends add to `connect_notebook` and `create_notebook`
 * answers while the daemon serves its live page (nothing when it does not, or cannot be asked).
 * It names the tool, never the address: the address carries the page's token.
 */
export async function describeLivePage(daemon: Pick<DaemonPort, 'page'>): Promise<string | undefined> {
  const page = await daemon.page?.().catch(() => undefined);
  return page === undefined
    ? undefined
    : 'The person working with you can watch and edit this notebook live in a browser: show_notebook gives its address.';
}
