import type { Readable, Writable } from 'node:stream';
import type {
  ChildSpawnSpec,
  ClientExtension,
  Clock,
  ContributionProvider,
  Logger,
  ProtocolAdmission,
} from '@nteract-mcp/core';
import type { ChildSupervisor } from './child-supervisor.js';
import type { ClientAttribution } from './client-attribution.js';
import type { RejoinTargetTracker } from './rejoin-target-tracker.js';
import type { ToolListCache } from './tool-list-cache.js';

/** Default bound on how long a cold-start `tools/list` (no tool list known yet) waits for the child's list. */
export const defaultToolListWaitMs = 10_000;

/** What an `McpProxy` is made of: its streams, its child, the services it uses and its bounds. */
export interface McpProxyOptions {
  readonly input: Readable;
  readonly output: Writable;
  readonly supervisor: ChildSupervisor;
  /** The protocol eras the proxy speaks upstream, in composition order (the proxy container's contributions). */
  readonly eras: ContributionProvider<ProtocolAdmission>;
  /**
   * The client extensions the proxy loads (the proxy container's contributions): announced to a
   * client that declares one, whose `tools/list` then goes to the child (the cached list is the
   * one for clients that declared none). None when absent.
   */
  readonly extensions?: ContributionProvider<ClientExtension>;
  /** The rejoin target learned from the children's session reports; a new one when absent. */
  readonly tracker?: RejoinTargetTracker;
  /** Who the upstream client is, for the children's peer label; a new one when absent. */
  readonly attribution?: ClientAttribution;
  readonly tools: ToolListCache;
  readonly clock: Clock;
  readonly logger: Logger;
  /** The child command, resolved again for every spawn. */
  readonly resolveChild: () => Omit<ChildSpawnSpec, 'env'> & {
    readonly env: Readonly<Record<string, string | undefined>>;
  };
  readonly version: string;
  /** Largest upstream line accepted (default 16 MiB); a longer one gets an error and is skipped. */
  readonly maxLineBytes?: number;
  /**
   * Largest line written to the client (default 10 MiB minus 256 KiB, under the MCP SDK's 10 MiB
   * read buffer); a longer answer is replaced by an error answer to the same id.
   */
  readonly maxUpstreamMessageBytes?: number;
  /** How long a request waits for a child that is (re)starting. Default 60 s. */
  readonly childWaitMs?: number;
  /**
   * A notebook the first child opens at start (`nteract-mcp --notebook`: a path, notebook id or
   * URL), handed to it as a rejoin target is; later children rejoin what the session holds then.
   */
  readonly startNotebook?: string;
  /**
   * How long a `tools/list` waits for the child's list when no list is known at all (first start,
   * no cache file, no built-in list). When it passes, the known list (possibly just `reconnect`)
   * is served. Default {@link defaultToolListWaitMs}. With a known list the answer is immediate.
   */
  readonly toolListWaitMs?: number;
  /** Called when the proxy is done (upstream closed, or an incompatible tool list after an upgrade). */
  readonly onExit: (code: number) => void;
}
