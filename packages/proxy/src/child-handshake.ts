import { declaresSupervisionStatus, type JsonRpcMessage } from '@nteract-mcp/core';
import type { ChildConnection } from './child-connection.js';
import type { ChildToolSync } from './child-tool-sync.js';
import type { ToolListCache } from './tool-list-cache.js';
import type { UpstreamHandshake } from './upstream-handshake.js';
import type { BannerQueue } from './version-banner.js';

export interface ChildHandshakeOptions {
  /** The client's side: what its era says to replay to every new child, and how it reads the answers. */
  readonly upstream: UpstreamHandshake;
  /** Where the server a child describes is kept (and shown to the client from then on). */
  readonly tools: ToolListCache;
  readonly toolSync: ChildToolSync<ChildConnection>;
  readonly banner: BannerQueue;
  /** Whether `child` is still the live child. */
  readonly isCurrent: (child: ChildConnection) => boolean;
  /** The id for the next message written to a child (unique across children). */
  readonly nextId: () => number;
  /** The daemon version the children reported last (their session reports), if any did. */
  readonly daemonVersion: () => string | undefined;
  /** `child` is ready and its tool list compatible: what is pending goes to it now. */
  readonly onReady: (child: ChildConnection) => void;
}

/**
 * What happens with every child after it is spawned, before it serves: the era's replay (legacy:
 * the client's `initialize` and `notifications/initialized`; native: nothing but the streams the
 * client holds), the server the child describes in its answers learned, the restart notice queued
 * for a child that is not the first, then the child marked ready, its tool list fetched (an
 * incompatible one ends it there: pending tool calls get that answer), the pending requests sent
 * to it, and its list published.
 *
 * The restart notice holds the daemon version the earlier children reported; the new child's own
 * comes from the session report of the answer the banner is delivered on.
 *
 * Guarantees: a child that stops being the live child during its handshake never becomes ready
 * (it is marked exited), and nothing more is done for it.
 */
export class ChildHandshake {
  readonly #options: ChildHandshakeOptions;

  public constructor(options: ChildHandshakeOptions) {
    this.#options = options;
  }

  /** Runs the handshake with `child`; `restart` when a child came up before it. */
  public async run(child: ChildConnection, restart: boolean): Promise<void> {
    const { banner, toolSync, isCurrent } = this.#options;
    await this.#replay(child);
    if (!isCurrent(child)) {
      // It died during the handshake: it never becomes ready.
      child.markExited();
      return;
    }
    if (restart) {
      child.notice = { previousVersion: this.#options.daemonVersion(), handedOff: child.handedOff };
      banner.queue(child.notice);
    }
    child.markReady();
    // The tool list first: after an upgrade that removed tools, pending calls get that answer.
    const compatible = await toolSync.fetchCompatible(child);
    if (!compatible) return;
    child.statusTools = new Set(compatible.tools?.filter(declaresSupervisionStatus).map((tool) => tool.name));
    this.#options.onReady(child);
    if (compatible.tools) await toolSync.publish(compatible.tools);
  }

  /** Sends `child` what the era replays, each request awaited; stops when it is no longer the live child. */
  async #replay(child: ChildConnection): Promise<void> {
    const { upstream, tools, isCurrent } = this.#options;
    for (const message of upstream.replay()) {
      if (message.stream) {
        // Answered only when the stream ends; what it carries is delivered like any child notification.
        child.write({
          jsonrpc: '2.0',
          id: this.#options.nextId(),
          method: message.method,
          params: upstream.requestParams(message.params as Record<string, unknown> | undefined) ?? {},
        } as JsonRpcMessage);
      } else if (message.request) {
        const params = upstream.requestParams(message.params as Record<string, unknown> | undefined);
        const answer = await child.request(message.method, params);
        if (!isCurrent(child)) return;
        // The child's own description (capabilities, serverInfo, instructions) in the client's era
        // is what clients of that era are shown from now on.
        const described = upstream.describedBy(message, (answer as { result?: unknown }).result);
        if (described !== undefined) await tools.learnServer(described.era, described.server);
        if (!isCurrent(child)) return;
      } else {
        child.write({
          jsonrpc: '2.0',
          method: message.method,
          ...(message.params === undefined ? {} : { params: message.params }),
        } as JsonRpcMessage);
      }
    }
  }
}
