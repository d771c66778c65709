import { randomUUID } from 'node:crypto';
import type { Readable, Writable } from 'node:stream';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import type { ChildProcessHandle, ChildSpawnSpec, Clock, Logger } from '@nteract-mcp/core';
import {
  CoreError,
  daemonVersionFromTitle,
  defaultMaxUpstreamMessageBytes,
  handoffToEnvironment,
  honorsIdempotency,
  idempotencyMetaKey,
  type JsonRpcId,
  JsonRpcLineFramer,
  type JsonRpcMessage,
  type JsonRpcRequest,
  readSessionReport,
  type SessionReport,
  serializeJsonRpcLine,
} from '@nteract-mcp/core';
import { answerTooLargeMessage } from './answer-too-large-message.js';
import type { ChildSupervisor } from './child-supervisor.js';
import { ClientAttribution } from './client-attribution.js';
import { RejoinTargetTracker } from './rejoin-target-tracker.js';
import { reconnectToolName, type ToolListCache, toolListChangedIncompatiblyMessage } from './tool-list-cache.js';
import { BannerQueue, type RestartNotice, restartBanner } from './version-banner.js';

/** JSON-RPC code of the proxy's own errors (restart budget exhausted, outcome unknown, …). */
export const proxyErrorCode = -32000;

/** JSON-RPC "Invalid params". */
const invalidParamsCode = -32602;
/** JSON-RPC "Invalid Request". */
const invalidRequestCode = -32600;

/** Default bound on how long a cold-start `tools/list` (no tool list known yet) waits for the child's list. */
export const defaultToolListWaitMs = 10_000;

/** How long the `reconnect` tool waits for the new child to finish its handshake. */
const reconnectReadyWaitMs = 30_000;

/** How long the proxy's own `session_status` call to a new child may take. */
const internalStatusWaitMs = 10_000;

/** Methods safe to send again after the child died with them unanswered: they change nothing. */
const readMethods: ReadonlySet<string> = new Set([
  'tools/list',
  'resources/list',
  'resources/read',
  'resources/templates/list',
  'prompts/list',
  'prompts/get',
  'completion/complete',
]);

/** Legacy protocol versions the proxy accepts in `initialize`, newest first. */
const legacyVersions = ['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05'];

export interface McpProxyOptions {
  readonly input: Readable;
  readonly output: Writable;
  readonly supervisor: ChildSupervisor;
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
   * How long a `tools/list` waits for the child's list when no list is known at all (first start,
   * no cache file, no built-in list). When it passes, the known list (possibly just `reconnect`)
   * is served. Default {@link defaultToolListWaitMs}. With a known list the answer is immediate.
   */
  readonly toolListWaitMs?: number;
  /** Called when the proxy is done (upstream closed, or an incompatible tool list after an upgrade). */
  readonly onExit: (code: number) => void;
}

interface Pending {
  readonly upstreamId: JsonRpcId;
  readonly request: JsonRpcRequest;
  readonly toolName: string | undefined;
  /** The child connection it was written to, and its id there. */
  sentTo: ChildLink | undefined;
  childId: number | undefined;
  resent: boolean;
  timer: { cancel(): void } | undefined;
  /** For a cold-start `tools/list`: answers with the known list when the child's list is late. */
  fallback: { cancel(): void } | undefined;
}

interface ChildLink {
  readonly handle: ChildProcessHandle;
  ready: boolean;
  daemonVersion: string | undefined;
  readonly internal: Map<number, (message: JsonRpcMessage) => void>;
  /** Requests the child sent us (server→client), by the key ({@link requestKey}) of the id we gave them upstream. */
  readonly fromChild: Map<string, JsonRpcId>;
  /** The rejoin target this child was started with (`handoffEnvironment.rejoinNotebook`), if any. */
  readonly handedOff: string | undefined;
  /** What its start changed, for a child that is not the first one. */
  notice: RestartNotice | undefined;
  /** Settles once: `true` when the handshake is done, `false` when the child died before. */
  readonly readiness: Promise<boolean>;
  readonly settleReadiness: (ready: boolean) => void;
}

/** The last session report a child sent, with when and from which child. */
interface ReceivedReport {
  readonly report: SessionReport;
  readonly at: number;
  readonly childPid: number | undefined;
}

/**
 * The pending-map key of a request id: its type and value, so `7` and `"7"` (distinct JSON-RPC
 * ids) never collide.
 */
function requestKey(id: JsonRpcId): string {
  return `${typeof id}:${String(id)}`;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The stdio MCP proxy: speaks MCP upstream with its own line framing and handshake, supervises the
 * child MCP server, and forwards everything both ways with ids kept unique across child restarts.
 *
 * Guarantees: stdout carries protocol lines only; the upstream sees exactly one handshake (the
 * captured `initialize` is replayed to every new child first); every upstream request gets exactly
 * one answer — after a child death an unsent request is sent to the next child, a sent one is sent
 * again once only when it is a read, a read-only/idempotent tool, or a tool that honours the
 * idempotency key the proxy stamps; otherwise it is answered "outcome unknown", naming the tool.
 * Requests the proxy refuses itself: `params` that is not an object (-32602; MCP params are
 * objects), an id already in use by a pending request (-32600), a `tools/call` without a string
 * `params.name` (-32602). Ids are told apart by type and value (`7` is not `"7"`).
 *
 * Every spawn after the first child is a restart: the next child gets the rejoin target (see
 * {@link RejoinTargetTracker}), learned from the children's session reports (`session-report.ts`)
 * and, for a child that sends none, from the text of its results. The restart banner repeats
 * only what the child's report says about that rejoin (see `version-banner.ts`).
 * Does not guarantee exactly-once for tools that neither honour keys nor declare idempotency.
 */
export class McpProxy {
  readonly #options: McpProxyOptions;
  readonly #tracker: RejoinTargetTracker;
  readonly #attribution: ClientAttribution;
  readonly #framer: JsonRpcLineFramer;
  readonly #pending = new Map<string, Pending>();
  /** Requests the proxy answers itself asynchronously (`reconnect`), by {@link requestKey}. */
  readonly #local = new Map<string, JsonRpcId>();
  readonly #banner = new BannerQueue();
  #initialize: JsonRpcRequest | undefined;
  #initialized = false;
  #child: ChildLink | undefined;
  /** Children that came up so far; any spawn after the first is a restart. */
  #childrenStarted = 0;
  /** The rejoin target put into the environment of the spawn in progress. */
  #spawnHandoff: string | undefined;
  #lastReport: ReceivedReport | undefined;
  #nextChildId = 1;
  #previousDaemonVersion: string | undefined;
  #incompatible = false;
  #closed = false;

  public constructor(options: McpProxyOptions) {
    this.#options = options;
    this.#tracker = options.tracker ?? new RejoinTargetTracker();
    this.#attribution = options.attribution ?? new ClientAttribution();
    this.#framer = new JsonRpcLineFramer(
      options.maxLineBytes === undefined ? {} : { maxLineBytes: options.maxLineBytes },
    );
  }

  /** Starts reading upstream; the child is spawned once the upstream sent `notifications/initialized`. */
  public async start(): Promise<void> {
    const { input, supervisor } = this.#options;
    await this.#options.tools.load();
    supervisor.onDidSpawn((handle) => this.attachChild(handle));
    supervisor.onDidExit((event) => this.childExited(event.decision.kind, event.exitClass));
    supervisor.onDidRefuse((refusal) => this.failAll(refusal.reason));
    input.on('data', (chunk: Buffer) => {
      for (const frame of this.#framer.push(chunk)) {
        if (frame.kind === 'error') this.upstream(frame.response);
        else this.safelyFromUpstream(frame.message);
      }
    });
    input.on('end', () => void this.close(0));
  }

  /** Stops the child and answers what is still pending. Idempotent. */
  public async close(code: number): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    for (const pending of this.#pending.values()) {
      pending.timer?.cancel();
      this.reply(pending, undefined, { code: proxyErrorCode, message: 'The nteract MCP proxy is shutting down.' });
    }
    this.#pending.clear();
    for (const key of [...this.#local.keys()]) {
      this.answerLocal(key, { code: proxyErrorCode, message: 'The nteract MCP proxy is shutting down.' });
    }
    await this.#options.supervisor.stop().catch(() => undefined);
    this.#options.onExit(code);
  }

  /** One upstream message; a fault in handling it answers the request (if any) and never stops the proxy. */
  private safelyFromUpstream(message: JsonRpcMessage): void {
    try {
      this.fromUpstream(message);
    } catch (error) {
      this.#options.logger.error('handling an upstream message failed', { error });
      const id = (message as { id?: unknown }).id;
      if ('method' in message && (typeof id === 'string' || typeof id === 'number')) {
        const key = requestKey(id);
        const pending = this.#pending.get(key);
        const answer = {
          code: -32603,
          message: `Internal error in the nteract MCP proxy: ${error instanceof Error ? error.message : String(error)}`,
        };
        if (pending) this.reply(pending, undefined, answer);
        else if (!this.#local.has(key)) this.upstream({ jsonrpc: '2.0', id, error: answer });
      }
    }
  }

  private fromUpstream(message: JsonRpcMessage): void {
    if ('method' in message && 'id' in message) {
      this.upstreamRequest(message as JsonRpcRequest);
      return;
    }
    if ('method' in message) {
      this.upstreamNotification(message);
      return;
    }
    // A response: the upstream answering a request the child made.
    const id = (message as { id: JsonRpcId | null }).id;
    const link = this.#child;
    const key = id === null ? undefined : requestKey(id);
    const childId = key === undefined ? undefined : link?.fromChild.get(key);
    if (link && key !== undefined && childId !== undefined) {
      link.fromChild.delete(key);
      this.toChild(link, { ...message, id: childId } as JsonRpcMessage);
      return;
    }
    this.#options.logger.debug('ignoring an upstream response to no request of the current child', {
      id,
      kind: 'error' in message ? 'error' : 'result',
    });
  }

  private upstreamNotification(message: JsonRpcMessage & { method: string }): void {
    if (Array.isArray((message as { params?: unknown }).params)) {
      // A notification cannot be answered; MCP params are objects, so it is dropped.
      this.#options.logger.debug('dropping an upstream notification whose params is an array', {
        method: message.method,
      });
      return;
    }
    if (message.method === 'notifications/initialized') {
      if (!this.#initialized && this.#initialize) {
        this.#initialized = true;
        void this.#options.supervisor
          .start(() => this.spawnSpec())
          .catch((error: unknown) => this.#options.logger.error('the child did not start', { error }));
      }
      return;
    }
    if (message.method === 'notifications/cancelled') {
      const requestId = (message as { params?: { requestId?: unknown } }).params?.requestId;
      const key = typeof requestId === 'string' || typeof requestId === 'number' ? requestKey(requestId) : undefined;
      const pending = key === undefined ? undefined : this.#pending.get(key);
      if (key !== undefined && pending) {
        this.#pending.delete(key);
        pending.timer?.cancel();
        pending.fallback?.cancel();
        if (pending.sentTo && pending.childId !== undefined) {
          this.toChild(pending.sentTo, {
            ...message,
            params: { ...(message as { params?: object }).params, requestId: pending.childId },
          } as JsonRpcMessage);
        }
      }
      return;
    }
    if (this.#child?.ready) this.toChild(this.#child, message);
  }

  private upstreamRequest(request: JsonRpcRequest): void {
    const refusal = this.refusal(request);
    if (refusal !== undefined) {
      this.upstream({ jsonrpc: '2.0', id: request.id, error: refusal });
      return;
    }
    if (request.method === 'initialize') {
      this.answerInitialize(request);
      return;
    }
    if (request.method === 'ping') {
      this.upstream({ jsonrpc: '2.0', id: request.id, result: {} });
      return;
    }
    if (!this.#initialize) {
      this.upstream({
        jsonrpc: '2.0',
        id: request.id,
        error: { code: -32600, message: 'Send initialize first.' },
      });
      return;
    }
    const coldToolList = request.method === 'tools/list' && this.#options.tools.current().length === 0;
    if (request.method === 'tools/list' && !this.#child?.ready && !coldToolList) {
      this.upstream({
        jsonrpc: '2.0',
        id: request.id,
        result: { tools: this.#options.tools.withReconnect(this.#options.tools.current()) },
      });
      return;
    }
    const params = (request.params ?? {}) as { name?: unknown; _meta?: Record<string, unknown> };
    const toolName = request.method === 'tools/call' && typeof params.name === 'string' ? params.name : undefined;
    if (toolName === reconnectToolName) {
      const key = requestKey(request.id);
      this.#local.set(key, request.id);
      void this.reconnect(request).catch((error: unknown) => {
        this.#options.logger.error('the reconnect tool failed', { error });
        this.answerLocal(key, { code: -32603, message: `Child restart failed: ${String(error)}` });
      });
      return;
    }
    if (toolName !== undefined && this.#incompatible) {
      this.upstream({
        jsonrpc: '2.0',
        id: request.id,
        error: { code: proxyErrorCode, message: toolListChangedIncompatiblyMessage },
      });
      return;
    }
    const stamped: JsonRpcRequest =
      toolName === undefined || typeof params._meta?.[idempotencyMetaKey] === 'string'
        ? request
        : { ...request, params: { ...params, _meta: { ...params._meta, [idempotencyMetaKey]: randomUUID() } } };
    const pending: Pending = {
      upstreamId: request.id,
      request: stamped,
      toolName,
      sentTo: undefined,
      childId: undefined,
      resent: false,
      timer: undefined,
      fallback: undefined,
    };
    this.#pending.set(requestKey(request.id), pending);
    if (coldToolList && !this.#child?.ready) {
      // Nothing to serve yet: wait (bounded) for the child's own list rather than answer `reconnect` alone.
      pending.fallback = this.#options.clock.setTimer(this.#options.toolListWaitMs ?? defaultToolListWaitMs, () => {
        pending.fallback = undefined;
        this.#options.logger.warn('the child did not list its tools in time; serving the known tool list', {
          tools: this.#options.tools.current().length,
        });
        this.serveKnownTools(pending);
      });
    }
    if (this.#child?.ready) this.send(pending, this.#child);
    else this.waitForChild(pending);
  }

  /** Answers a `tools/list` with the list known now (cache or built-in) plus `reconnect`. */
  private serveKnownTools(pending: Pending): void {
    this.reply(pending, { tools: this.#options.tools.withReconnect(this.#options.tools.current()) }, undefined);
  }

  /**
   * Answers a pending request with `error`; a cold-start `tools/list` gets the known tool list
   * instead (`reconnect` stays callable when the child cannot start).
   */
  private fail(pending: Pending, error: { code: number; message: string; data?: unknown }): void {
    if (pending.fallback) this.serveKnownTools(pending);
    else this.reply(pending, undefined, error);
  }

  /** The error for a request the proxy refuses before looking at its method, if it does. */
  private refusal(request: JsonRpcRequest): { code: number; message: string } | undefined {
    if (Array.isArray(request.params)) {
      return {
        code: invalidParamsCode,
        message: `Invalid params: MCP request params must be a JSON object (named parameters), not an array ('${request.method}').`,
      };
    }
    const key = requestKey(request.id);
    if (this.#pending.has(key) || this.#local.has(key)) {
      return {
        code: invalidRequestCode,
        message: `Invalid Request: the id ${JSON.stringify(request.id)} is already used by a request still in progress; use a new id for each request.`,
      };
    }
    if (request.method === 'tools/call') {
      const name = (request.params as { name?: unknown } | undefined)?.name;
      if (request.params === undefined)
        return {
          code: invalidParamsCode,
          message: 'Invalid params: tools/call needs params {"name": "<tool>", "arguments": {...}}; params is missing.',
        };
      if (typeof name !== 'string' || name.length === 0)
        return {
          code: invalidParamsCode,
          message: 'Invalid params: tools/call needs params.name, the name of the tool to call, as a non-empty string.',
        };
    }
    return undefined;
  }

  private answerInitialize(request: JsonRpcRequest): void {
    const params = (request.params ?? {}) as { protocolVersion?: unknown; clientInfo?: unknown };
    if (this.#initialize) {
      this.upstream({
        jsonrpc: '2.0',
        id: request.id,
        error: { code: -32600, message: 'Already initialized.' },
      });
      return;
    }
    this.#initialize = request;
    this.#attribution.observeClientInfo(params.clientInfo);
    const requested = typeof params.protocolVersion === 'string' ? params.protocolVersion : '';
    this.upstream({
      jsonrpc: '2.0',
      id: request.id,
      result: {
        protocolVersion: legacyVersions.includes(requested) ? requested : legacyVersions[0],
        capabilities: { tools: { listChanged: true }, resources: { listChanged: true } },
        serverInfo: { name: 'nteract', version: this.#options.version },
        instructions:
          'nteract MCP server for Jupyter notebooks. Use list_active_notebooks, connect_notebook or create_notebook to choose the active notebook; the server keeps it across restarts. If tools misbehave, call reconnect.',
      },
    });
  }

  private spawnSpec(): ChildSpawnSpec {
    const base = this.#options.resolveChild();
    // Any spawn after a child came up is a restart, whatever is known about the daemon.
    const restart = this.#childrenStarted > 0;
    this.#spawnHandoff = restart ? this.#tracker.current() : undefined;
    const handoff = handoffToEnvironment({
      rejoinNotebook: this.#spawnHandoff,
      agentSession: this.#attribution.agentSession(),
      peerLabel: this.#attribution.peerLabel(),
    });
    return { ...base, env: { ...base.env, ...handoff } };
  }

  private attachChild(handle: ChildProcessHandle): void {
    let settleReadiness!: (ready: boolean) => void;
    const readiness = new Promise<boolean>((resolve) => {
      settleReadiness = resolve;
    });
    const first = this.#childrenStarted === 0;
    this.#childrenStarted += 1;
    const link: ChildLink = {
      handle,
      ready: false,
      daemonVersion: undefined,
      internal: new Map(),
      fromChild: new Map(),
      handedOff: this.#spawnHandoff,
      notice: undefined,
      readiness,
      settleReadiness,
    };
    this.#spawnHandoff = undefined;
    this.#child = link;
    const framer = new JsonRpcLineFramer();
    handle.stdout.on('data', (chunk: Buffer) => {
      for (const frame of framer.push(chunk)) {
        if (frame.kind === 'message') this.fromChild(link, frame.message);
        else if (frame.reason === 'line-too-long' && frame.response.id !== null) {
          // An answer too large to carry: its request gets an error answer instead of silence.
          this.#options.logger.warn('the child wrote an answer over the line limit', { id: frame.response.id });
          this.fromChild(link, {
            jsonrpc: '2.0',
            id: frame.response.id,
            error: {
              code: proxyErrorCode,
              message: answerTooLargeMessage({ limit: framer.maxLineBytes, stage: 'child' }),
            },
          });
        } else this.#options.logger.warn('the child wrote a line that is not JSON-RPC', { reason: frame.reason });
      }
    });
    handle.stdin.on('error', () => undefined);
    void this.handshake(link, first);
  }

  private async handshake(link: ChildLink, first: boolean): Promise<void> {
    const init = this.#initialize as JsonRpcRequest;
    const answer = await this.internalRequest(link, 'initialize', init.params);
    if (this.#child !== link) {
      // It died during the handshake: it never becomes ready.
      link.settleReadiness(false);
      return;
    }
    const title = (answer as { result?: { serverInfo?: { title?: string } } }).result?.serverInfo?.title;
    link.daemonVersion = daemonVersionFromTitle(typeof title === 'string' ? title : undefined);
    this.toChild(link, { jsonrpc: '2.0', method: 'notifications/initialized' });
    link.ready = true;
    if (!first) {
      link.notice = {
        previousVersion: this.#previousDaemonVersion,
        newVersion: link.daemonVersion,
        handedOff: link.handedOff,
      };
      this.#banner.queue(link.notice);
    }
    this.#previousDaemonVersion = link.daemonVersion ?? this.#previousDaemonVersion;
    link.settleReadiness(true);
    // The tool list first: after an upgrade that removed tools, pending calls get that answer.
    const tools = await this.fetchTools(link);
    if (this.#child !== link) return;
    if (tools && this.removedTools(tools).length > 0) {
      this.incompatibleToolList(this.removedTools(tools));
      return;
    }
    for (const pending of [...this.#pending.values()]) this.redeliver(pending, link);
    if (tools) await this.publishTools(tools);
  }

  private async fetchTools(link: ChildLink): Promise<Tool[] | undefined> {
    const answer = await this.internalRequest(link, 'tools/list', {});
    const tools = (answer as { result?: { tools?: unknown } }).result?.tools;
    return Array.isArray(tools) && tools.length > 0 ? (tools as Tool[]) : undefined;
  }

  /** Names served before (from a live or cached list, not the built-in one) that `tools` lacks. */
  private removedTools(tools: readonly Tool[]): string[] {
    if (this.#options.tools.source() === 'built-in') return [];
    const live = new Set(tools.map((tool) => tool.name));
    return this.#options.tools
      .current()
      .map((tool) => tool.name)
      .filter((name) => !live.has(name));
  }

  private incompatibleToolList(removed: readonly string[]): void {
    this.#options.logger.error('tools were removed or renamed by an upgrade; exiting so the client reconnects', {
      removed,
    });
    this.#incompatible = true;
    for (const pending of [...this.#pending.values()]) {
      if (pending.toolName !== undefined)
        this.reply(pending, undefined, { code: proxyErrorCode, message: toolListChangedIncompatiblyMessage });
    }
    this.#options.clock.setTimer(200, () => void this.close(0));
  }

  private async publishTools(tools: readonly Tool[]): Promise<void> {
    const update = await this.#options.tools.update(tools);
    if (update.changed) this.upstream({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' });
  }

  private async refreshTools(link: ChildLink): Promise<void> {
    const tools = await this.fetchTools(link);
    if (!tools || this.#child !== link) return;
    const removed = this.removedTools(tools);
    if (removed.length > 0) this.incompatibleToolList(removed);
    else await this.publishTools(tools);
  }

  /**
   * A request of the proxy's own to the child; resolves with its answer, or with an error message
   * when the child exits first or `timeoutMs` (if given) passes (a late answer is then ignored).
   */
  private internalRequest(
    link: ChildLink,
    method: string,
    params: unknown,
    timeoutMs?: number,
  ): Promise<JsonRpcMessage> {
    const id = this.#nextChildId++;
    return new Promise((resolve) => {
      const timer =
        timeoutMs === undefined
          ? undefined
          : this.#options.clock.setTimer(timeoutMs, () => {
              link.internal.delete(id);
              resolve({ jsonrpc: '2.0', id, error: { code: proxyErrorCode, message: `no answer to ${method}` } });
            });
      link.internal.set(id, (message) => {
        timer?.cancel();
        resolve(message);
      });
      this.toChild(link, { jsonrpc: '2.0', id, method, ...(params === undefined ? {} : { params }) } as JsonRpcMessage);
    });
  }

  /** One child message; a fault in handling it is logged (and answers its request) but never stops the proxy. */
  private fromChild(link: ChildLink, message: JsonRpcMessage): void {
    try {
      this.handleChildMessage(link, message);
    } catch (error) {
      this.#options.logger.error('handling a child message failed', { error });
      const id = (message as { id?: unknown }).id;
      const pending =
        'method' in message
          ? undefined
          : [...this.#pending.values()].find((candidate) => candidate.sentTo === link && candidate.childId === id);
      if (pending) {
        this.reply(pending, undefined, {
          code: -32603,
          message: `Internal error in the nteract MCP proxy while relaying the answer: ${error instanceof Error ? error.message : String(error)}`,
        });
      }
    }
  }

  private handleChildMessage(link: ChildLink, message: JsonRpcMessage): void {
    if ('method' in message) {
      if ('id' in message) {
        // A request of the child to the client: give it an upstream id of ours.
        const upstreamId = `child-${randomUUID()}`;
        link.fromChild.set(requestKey(upstreamId), (message as JsonRpcRequest).id);
        this.upstream({ ...message, id: upstreamId } as JsonRpcMessage);
      } else if (message.method !== 'notifications/tools/list_changed') {
        this.upstream(message);
      } else {
        void this.refreshTools(link);
      }
      return;
    }
    const id = (message as { id: JsonRpcId }).id;
    const internal = typeof id === 'number' ? link.internal.get(id) : undefined;
    if (internal) {
      link.internal.delete(id as number);
      internal(message);
      return;
    }
    const pending = [...this.#pending.values()].find(
      (candidate) => candidate.sentTo === link && candidate.childId === id,
    );
    if (!pending) {
      this.#options.logger.debug('ignoring a child response to no pending request', { id });
      return;
    }
    if ('error' in message) {
      this.fail(pending, message.error);
      return;
    }
    const raw = (message as { result: unknown }).result;
    if (!isRecord(raw)) {
      this.reply(pending, undefined, {
        code: -32603,
        message: `The nteract MCP server answered '${pending.request.method}' with a result that is not an object.`,
      });
      return;
    }
    let result = raw;
    if (pending.toolName !== undefined) {
      this.observeReport(link, result);
      if (pending.toolName === 'session_status') result = this.withProxyStatus(result, link);
      result = this.#banner.prependTo(result);
    }
    if (pending.request.method === 'tools/list') {
      const live = Array.isArray(result.tools) ? (result.tools as Tool[]) : [];
      // An empty live list is never served: the known one is better than `reconnect` alone.
      result = {
        ...result,
        tools: this.#options.tools.withReconnect(live.length > 0 ? live : this.#options.tools.current()),
      };
    }
    this.reply(pending, result, undefined);
  }

  /** Stores the session report of `result`, if it has one (the only source of the rejoin target). */
  private observeReport(link: ChildLink, result: unknown): void {
    const report = readSessionReport(result);
    if (report === undefined) return;
    // The daemon version this child works with, also when its title had none (it started first).
    if (report.daemonVersion !== undefined && this.#child === link) {
      link.daemonVersion = report.daemonVersion;
      this.#previousDaemonVersion = report.daemonVersion;
    }
    this.#tracker.observeSessionReport(report);
    this.#lastReport = { report, at: this.#options.clock.now(), childPid: link.handle.pid };
  }

  private withProxyStatus(result: Record<string, unknown>, link: ChildLink): Record<string, unknown> {
    const content = result.content as { type: string; text: string }[] | undefined;
    const first = content?.[0];
    if (first?.type !== 'text') return result;
    try {
      const status = JSON.parse(first.text) as Record<string, unknown>;
      const supervision = this.#options.supervisor.status();
      status.proxy = {
        restart_count: supervision.restartCount,
        budget_left: supervision.budgetLeft,
        last_exit_class: supervision.lastExitClass ?? null,
        breaker: supervision.breaker,
        child_pid: supervision.pid ?? null,
        handoff_target: this.#tracker.current() ?? null,
        handed_off_to_child: link.handedOff ?? null,
        last_report: this.lastReportJson(),
      };
      return {
        ...result,
        content: [{ type: 'text', text: JSON.stringify(status, null, 2) }, ...(content?.slice(1) ?? [])],
      };
    } catch {
      return result;
    }
  }

  /** The last session report, as `session_status` shows it; `null` before any. */
  private lastReportJson(): Record<string, unknown> | null {
    const received = this.#lastReport;
    if (!received) return null;
    const { report } = received;
    return {
      target: report.target,
      notebook_id: report.notebookId ?? null,
      rejoin: report.rejoin
        ? { requested: report.rejoin.requested, outcome: report.rejoin.outcome, reason: report.rejoin.reason ?? null }
        : null,
      child_pid: received.childPid ?? null,
      at: new Date(received.at).toISOString(),
    };
  }

  private childExited(decision: string, exitClass: string): void {
    const link = this.#child;
    this.#child = undefined;
    if (link) {
      link.settleReadiness(false);
      for (const resolve of [...link.internal.values()])
        resolve({ jsonrpc: '2.0', id: 0, error: { code: proxyErrorCode, message: 'child exited' } });
      link.internal.clear();
    }
    this.#options.logger.info('the child exited', { exitClass, decision });
    if (decision === 'stop') this.failAll('The nteract MCP server stopped.');
    for (const pending of [...this.#pending.values()]) if (!pending.timer) this.waitForChild(pending);
  }

  /** After a child death: send again, or answer "outcome unknown". */
  private redeliver(pending: Pending, link: ChildLink): void {
    pending.timer?.cancel();
    pending.timer = undefined;
    if (pending.sentTo === link) return;
    if (pending.sentTo !== undefined) {
      if (pending.resent || !this.safeToResend(pending)) {
        const what = pending.toolName !== undefined ? `the tool '${pending.toolName}'` : `'${pending.request.method}'`;
        this.reply(pending, undefined, {
          code: proxyErrorCode,
          message: `The MCP server restarted while ${what} was running; it may or may not have taken effect. Check the notebook before retrying.`,
          data: { kind: 'outcome_unknown', tool: pending.toolName ?? null },
        });
        return;
      }
      pending.resent = true;
    }
    this.send(pending, link);
  }

  private safeToResend(pending: Pending): boolean {
    if (pending.toolName === undefined) return readMethods.has(pending.request.method);
    const tool = this.#options.tools.current().find((candidate) => candidate.name === pending.toolName);
    if (!tool) return false;
    if (tool.annotations?.readOnlyHint === true || tool.annotations?.idempotentHint === true) return true;
    return honorsIdempotency(tool._meta);
  }

  private waitForChild(pending: Pending): void {
    pending.timer?.cancel();
    pending.timer = this.#options.clock.setTimer(this.#options.childWaitMs ?? 60_000, () => {
      pending.timer = undefined;
      this.fail(pending, {
        code: proxyErrorCode,
        message: 'The nteract MCP server is not running (it did not come back in time). Call reconnect to try again.',
      });
    });
    const decision = this.#options.supervisor.status();
    if (decision.breaker === 'open') {
      void this.#options.supervisor.waitForChild(0).catch((error: unknown) => {
        this.fail(pending, {
          code: proxyErrorCode,
          message: CoreError.is(error) ? error.message : String(error),
        });
      });
    }
  }

  private failAll(reason: string): void {
    for (const pending of [...this.#pending.values()]) this.fail(pending, { code: proxyErrorCode, message: reason });
  }

  /**
   * The `reconnect` tool: restarts the child, waits for its handshake (an event, bounded), asks it
   * for its session report (`session_status`) and answers with the restart banner for that report,
   * the same wording a forwarded result would carry, which it consumes.
   */
  private async reconnect(request: JsonRpcRequest): Promise<void> {
    const key = requestKey(request.id);
    const before = this.#options.supervisor.status().restartCount;
    try {
      await this.#options.supervisor.restart('the reconnect tool');
    } catch (error) {
      this.answerLocal(key, {
        code: -32603,
        message: `Child restart failed: ${error instanceof Error ? error.message : String(error)}`,
      });
      return;
    }
    const link = this.#child;
    const ready = link !== undefined && (await this.whenReady(link, reconnectReadyWaitMs));
    const after = this.#options.supervisor.status().restartCount;
    const counts = `Restart #${after} (was #${before}).`;
    if (!link || !ready) {
      this.answerLocal(key, undefined, {
        isError: true,
        content: [
          {
            type: 'text',
            text: `The MCP server was restarted but is not ready: it exited during its start or did not finish it within ${reconnectReadyWaitMs / 1000} s. Call reconnect again, or session_status to see what it is doing.\n\n${counts}`,
          },
        ],
      });
      return;
    }
    const report = await this.askSessionReport(link);
    const notice = link.notice;
    let banner = 'Child restarted.';
    if (notice !== undefined) {
      banner =
        this.#banner.pending() === notice ? (this.#banner.take(report) as string) : restartBanner(notice, report);
    }
    this.answerLocal(key, undefined, { content: [{ type: 'text', text: `${banner}\n\n${counts}` }] });
  }

  /** `true` once `link` finished its handshake; `false` when it died first or `timeoutMs` passed. */
  private whenReady(link: ChildLink, timeoutMs: number): Promise<boolean> {
    if (link.ready) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = this.#options.clock.setTimer(timeoutMs, () => resolve(false));
      void link.readiness.then((ready) => {
        timer.cancel();
        resolve(ready);
      });
    });
  }

  /** The child's session report, from a `session_status` call of the proxy's own; `undefined` if none came. */
  private async askSessionReport(link: ChildLink): Promise<SessionReport | undefined> {
    const answer = await this.internalRequest(
      link,
      'tools/call',
      { name: 'session_status', arguments: {} },
      internalStatusWaitMs,
    );
    const result = (answer as { result?: unknown }).result;
    if (this.#child !== link) return undefined;
    this.observeReport(link, result);
    return readSessionReport(result);
  }

  /** Answers a request the proxy handles itself (error, else result), once. */
  private answerLocal(
    key: string,
    error: { code: number; message: string } | undefined,
    result?: Record<string, unknown>,
  ): void {
    const id = this.#local.get(key);
    if (id === undefined) return;
    this.#local.delete(key);
    this.upstream(error ? { jsonrpc: '2.0', id, error } : ({ jsonrpc: '2.0', id, result } as JsonRpcMessage));
  }

  private send(pending: Pending, link: ChildLink): void {
    if (!link.handle.stdin.writable) {
      // The child is already gone: the write would not reach it, so the request stays unsent.
      this.waitForChild(pending);
      return;
    }
    const childId = this.#nextChildId++;
    let line: string;
    try {
      line = serializeJsonRpcLine({ ...pending.request, id: childId });
    } catch (error) {
      // JSON.parse took it, JSON.stringify cannot write it back (nested thousands of levels deep).
      this.reply(pending, undefined, {
        code: invalidRequestCode,
        message: `Invalid Request: the request cannot be forwarded (${error instanceof RangeError ? 'it is nested too deeply' : String(error)}).`,
      });
      return;
    }
    pending.sentTo = link;
    pending.childId = childId;
    link.handle.stdin.write(line);
  }

  private reply(
    pending: Pending,
    result: unknown,
    error: { code: number; message: string; data?: unknown } | undefined,
  ): void {
    const key = requestKey(pending.upstreamId);
    if (this.#pending.get(key) !== pending) return;
    this.#pending.delete(key);
    pending.timer?.cancel();
    pending.fallback?.cancel();
    this.upstream(
      error
        ? { jsonrpc: '2.0', id: pending.upstreamId, error }
        : ({ jsonrpc: '2.0', id: pending.upstreamId, result } as JsonRpcMessage),
    );
  }

  private toChild(link: ChildLink, message: JsonRpcMessage): void {
    if (!link.handle.stdin.writable) return;
    link.handle.stdin.write(serializeJsonRpcLine(message));
  }

  /**
   * Writes one message to the client. A line over the client's limit is never written: a response
   * becomes an error answer to the same id, anything else is dropped and logged.
   */
  private upstream(message: JsonRpcMessage): void {
    if (!this.#options.output.writable) return;
    const line = serializeJsonRpcLine(message);
    const limit = this.#options.maxUpstreamMessageBytes ?? defaultMaxUpstreamMessageBytes;
    const bytes = line.length * 3 <= limit ? line.length : Buffer.byteLength(line);
    if (bytes <= limit) {
      this.#options.output.write(line);
      return;
    }
    if ('method' in message || !('id' in message) || message.id === null) {
      this.#options.logger.warn('dropped a message to the client over the size limit', { bytes, limit });
      return;
    }
    this.#options.logger.warn('replaced an answer over the client size limit by an error', { bytes, limit });
    this.#options.output.write(
      serializeJsonRpcLine({
        jsonrpc: '2.0',
        id: message.id,
        error: { code: proxyErrorCode, message: answerTooLargeMessage({ bytes, limit, stage: 'client' }) },
      }),
    );
  }
}
