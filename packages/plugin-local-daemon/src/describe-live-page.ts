import type { DaemonPort } from '@nteract-mcp/core';

/**
 * The sentence the local daemon's backends add to `connect_notebook` and `create_notebook`
 * answers while the daemon serves its live page (nothing when it does not, cannot be asked, or is
 * too old to give launch addresses).
 * It names the tool, never an address: a launch address opens the page once, for the person the
 * user gives it to, so it is given only when asked for (show_notebook).
 */
export async function describeLivePage(daemon: Pick<DaemonPort, 'page'>): Promise<string | undefined> {
  const page = await daemon.page?.().catch(() => undefined);
  // A daemon too old to give a launch address has nothing show_notebook can give.
  return page?.launchUrl === undefined
    ? undefined
    : 'The person working with you can watch and edit this notebook live in a browser: show_notebook gives its address.';
}
