import type { SessionReport } from '@nteract-mcp/core';
import type { ChildConnection } from './child-connection.js';
import type { ChildSupervisor } from './child-supervisor.js';
import { type ProxyWireError, toProxyWireError } from './to-proxy-wire-error.js';
import { type BannerQueue, restartBanner } from './version-banner.js';

/** How long the `reconnect` tool waits for the new child to finish its handshake. */
const reconnectReadyWaitMs = 30_000;

export interface ReconnectToolOptions {
  readonly supervisor: ChildSupervisor;
  readonly banner: BannerQueue;
  /** The live child, if any. */
  readonly currentChild: () => ChildConnection | undefined;
  /** The child's session report, from a `session_status` call of the proxy's own; `undefined` if none came. */
  readonly askSessionReport: (child: ChildConnection) => Promise<SessionReport | undefined>;
}

/** What the `reconnect` tool answers: a JSON-RPC error, or a tool result. */
export type ReconnectAnswer =
  | { readonly error: ProxyWireError; readonly result?: undefined }
  | { readonly error?: undefined; readonly result: Record<string, unknown> };

/**
 * The proxy's own `reconnect` tool: restarts the child (an intended restart, which the supervisor
 * does not charge to the crash budget and which closes an open breaker), waits for the new
 * child's handshake (its readiness, bounded on the clock), asks it for its session report and
 * answers with the restart banner for that report, the same wording a forwarded result would
 * carry, which it consumes.
 */
export class ReconnectTool {
  readonly #options: ReconnectToolOptions;

  public constructor(options: ReconnectToolOptions) {
    this.#options = options;
  }

  public async run(): Promise<ReconnectAnswer> {
    const { supervisor, banner: queue } = this.#options;
    const before = supervisor.status().restartCount;
    try {
      await supervisor.restart('the reconnect tool');
    } catch (error) {
      return { error: toProxyWireError({ kind: 'restart_failed', error }) };
    }
    const child = this.#options.currentChild();
    const ready = child !== undefined && (await child.whenReady(reconnectReadyWaitMs));
    const counts = `Restart #${supervisor.status().restartCount} (was #${before}).`;
    if (!child || !ready) {
      const text = `The MCP server was restarted but is not ready: it exited during its start or did not finish it within ${reconnectReadyWaitMs / 1000} s. Call reconnect again, or session_status to see what it is doing.\n\n${counts}`;
      return { result: { isError: true, content: [{ type: 'text', text }] } };
    }
    const report = await this.#options.askSessionReport(child);
    const notice = child.notice;
    let banner = 'Child restarted.';
    if (notice !== undefined) {
      banner = queue.pending() === notice ? (queue.take(report) as string) : restartBanner(notice, report);
    }
    return { result: { content: [{ type: 'text', text: `${banner}\n\n${counts}` }] } };
  }
}
