import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { type JsonRpcMessage, type Logger, plainToolListMetaKey } from '@nteract-mcp/core';
import type { ToolListCache } from './tool-list-cache.js';

export interface ChildToolSyncOptions<C> {
  readonly tools: ToolListCache;
  readonly logger: Logger;
  /** Asks `child` for `method` on the proxy's own behalf. */
  readonly request: (child: C, method: string, params: Record<string, unknown>) => Promise<JsonRpcMessage>;
  /** Whether `child` is still the live child. */
  readonly isCurrent: (child: C) => boolean;
  /** Tells the client its tool list changed (`notifications/tools/list_changed`). */
  readonly announceListChanged: () => void;
  /** An upgrade removed or renamed tools the client knows: `removed` names them; the proxy exits. */
  readonly onIncompatible: (removed: readonly string[]) => void;
}

/**
 * Keeps the client's tool list in step with the children: fetches each new child's list, stores
 * it (cache file) and announces a change; when a child lacks tools the client was served before
 * (from a live or cached list, not the built-in one), the list is incompatible from then on.
 */
export class ChildToolSync<C> {
  readonly #options: ChildToolSyncOptions<C>;
  #toolListIncompatible = false;

  public constructor(options: ChildToolSyncOptions<C>) {
    this.#options = options;
  }

  /** An upgrade removed tools: tool calls are refused from then on. */
  public get toolListIncompatible(): boolean {
    return this.#toolListIncompatible;
  }

  /**
   * After a child's handshake: its list, or `undefined` when it has none (or it is no longer the
   * live child). An incompatible list is reported (and `undefined` returned); the caller then
   * publishes a compatible one with {@link publish}.
   */
  public async fetchCompatible(child: C): Promise<{ readonly tools: Tool[] | undefined } | undefined> {
    const tools = await this.#fetch(child);
    if (!this.#options.isCurrent(child)) return undefined;
    if (tools && this.#reportRemoved(tools)) return undefined;
    return { tools };
  }

  /** Stores `tools` and announces a change when there is one. */
  public async publish(tools: readonly Tool[]): Promise<void> {
    const update = await this.#options.tools.update(tools);
    if (update.changed) this.#options.announceListChanged();
  }

  /** The child said its tools changed (`notifications/tools/list_changed`). */
  public async refresh(child: C): Promise<void> {
    const compatible = await this.fetchCompatible(child);
    if (compatible?.tools) await this.publish(compatible.tools);
  }

  async #fetch(child: C): Promise<Tool[] | undefined> {
    // The list as a client that declared no extension gets it: the cache is every client's.
    const answer = await this.#options.request(child, 'tools/list', { _meta: { [plainToolListMetaKey]: true } });
    const tools = (answer as { result?: { tools?: unknown } }).result?.tools;
    return Array.isArray(tools) && tools.length > 0 ? (tools as Tool[]) : undefined;
  }

  /** `true` (and the proxy told) when `tools` lacks names served before. */
  #reportRemoved(tools: readonly Tool[]): boolean {
    const { tools: cache, logger } = this.#options;
    if (cache.source() === 'built-in') return false;
    const live = new Set(tools.map((tool) => tool.name));
    const removed = cache
      .current()
      .map((tool) => tool.name)
      .filter((name) => !live.has(name));
    if (removed.length === 0) return false;
    logger.error('tools were removed or renamed by an upgrade; exiting so the client reconnects', { removed });
    this.#toolListIncompatible = true;
    this.#options.onIncompatible(removed);
    return true;
  }
}
