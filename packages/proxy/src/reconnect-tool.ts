import type { Clock, SessionReport, Timer } from '@nteract-mcp/core';
import type { ChildConnection } from './child-connection.js';
import type { ChildSupervisor } from './child-supervisor.js';
import { type ProxyWireError, toProxyWireError } from './to-proxy-wire-error.js';
import { type BannerQueue, restartBanner } from './version-banner.js';

/**
 * How long one `reconnect` call may take: stopping the old child, starting the new one and its
 * handshake all come out of this one bound (the session report asked afterwards has its own).
 */
export const reconnectWaitMs = 30_000;

export interface ReconnectToolOptions {
  readonly supervisor: ChildSupervisor;
  readonly banner: BannerQueue;
  readonly clock: Clock;
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
 * child's handshake (its readiness), asks it for its session report and answers with the restart
 * banner for that report, the same wording a forwarded result would carry, which it consumes.
 *
 * Guarantees: every call is answered within {@link reconnectWaitMs} (plus the bounded report
 * request), also before the first child is up and while no child can come up: the answer is then
 * a tool result with `isError: true` saying what happened and what to do (a restart that is still
 * under way goes on, and the next `reconnect` joins it). Only a proxy that is shutting down
 * answers with a JSON-RPC error.
 */
export class ReconnectTool {
  readonly #options: ReconnectToolOptions;

  public constructor(options: ReconnectToolOptions) {
    this.#options = options;
  }

  public async run(): Promise<ReconnectAnswer> {
    const { supervisor, banner: queue, clock } = this.#options;
    const before = supervisor.status().restartCount;
    const deadline = clock.now() + reconnectWaitMs;
    const counts = (): string => `Restart #${supervisor.status().restartCount} (was #${before}).`;
    const restarted = await this.#within(supervisor.restart('the reconnect tool'), reconnectWaitMs);
    if (restarted.kind === 'failed') {
      if (supervisor.status().stopped) return { error: toProxyWireError({ kind: 'shutting_down' }) };
      const why = restarted.error instanceof Error ? restarted.error.message : String(restarted.error);
      return failure(
        `Reconnect failed: the MCP server could not be started. ${why}\n\nCall reconnect again once the cause is fixed; session_status shows the last exit.\n\n${counts()}`,
      );
    }
    if (restarted.kind === 'timeout') {
      return failure(
        `Reconnect did not finish within ${reconnectWaitMs / 1000} s: starting the MCP server is still under way (the old process has not exited yet, or the new one has not started). It goes on by itself: call reconnect again in a moment to wait for it, or session_status to see what it is doing.\n\n${counts()}`,
      );
    }
    const child = this.#options.currentChild();
    const ready = child !== undefined && (await child.whenReady(Math.max(0, deadline - clock.now())));
    if (!child || !ready) {
      return failure(
        `The MCP server was restarted but is not ready: it exited during its start or did not finish it within ${reconnectWaitMs / 1000} s. Call reconnect again, or session_status to see what it is doing.\n\n${counts()}`,
      );
    }
    const report = await this.#options.askSessionReport(child);
    const notice = child.notice;
    if (notice === undefined) {
      // The first child that came up: nothing ran before it, so there is no session to rejoin.
      return {
        result: {
          content: [
            {
              type: 'text',
              text: `The MCP server is up and ready; it had not been running before, so there was no notebook session to reconnect. Use connect_notebook or create_notebook to start one.\n\n${counts()}`,
            },
          ],
        },
      };
    }
    const banner = queue.pending() === notice ? (queue.take(report) as string) : restartBanner(notice, report);
    return { result: { content: [{ type: 'text', text: `${banner}\n\n${counts()}` }] } };
  }

  /** How `work` settled within `timeoutMs` on the clock. */
  async #within<T>(
    work: Promise<T>,
    timeoutMs: number,
  ): Promise<{ kind: 'done'; value: T } | { kind: 'failed'; error: unknown } | { kind: 'timeout' }> {
    let timer: Timer | undefined;
    const timeout = new Promise<{ kind: 'timeout' }>((resolve) => {
      timer = this.#options.clock.setTimer(timeoutMs, () => resolve({ kind: 'timeout' }));
    });
    try {
      return await Promise.race([
        work.then(
          (value) => ({ kind: 'done' as const, value }),
          (error: unknown) => ({ kind: 'failed' as const, error }),
        ),
        timeout,
      ]);
    } finally {
      timer?.cancel();
    }
  }
}

/** A `reconnect` answer that failed: a tool result with `isError: true` and one text item. */
function failure(text: string): ReconnectAnswer {
  return { result: { isError: true, content: [{ type: 'text', text }] } };
}
