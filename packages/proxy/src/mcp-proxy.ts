import type { Readable, Writable } from 'node:stream';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import type {
  ChildProcessHandle,
  ChildSpawnSpec,
  Clock,
  ContributionProvider,
  Logger,
  ProtocolAdmission,
} from '@nteract-mcp/core';
import {
  credentialChannelFd,
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
  requestIdKey,
  type SessionReport,
  sessionReportMetaKey,
} from '@nteract-mcp/core';
import { quoteClientText } from '@nteract-mcp/foundation';
import { ChildConnection, parseAnswer } from './child-connection.js';
import type { ChildSupervisor } from './child-supervisor.js';
import { ChildToolSync } from './child-tool-sync.js';
import { ClientAttribution } from './client-attribution.js';
import { CredentialRelay } from './credential-relay.js';
import { IdempotencyKeys } from './idempotency-keys.js';
import { type InFlightRequest, InFlightRequests, readMethods } from './in-flight-requests.js';
import { ProxyStatus } from './proxy-status.js';
import { ReconnectTool } from './reconnect-tool.js';
import { RejoinTargetTracker } from './rejoin-target-tracker.js';
import type { ScannedAnswer } from './scan-child-answer.js';
import { failureOfError, type ProxyFailure, type ProxyWireError, toProxyWireError } from './to-proxy-wire-error.js';
import { reconnectToolName, type ToolListCache } from './tool-list-cache.js';
import { WriteTurn } from './turn-writer.js';
import { UpstreamHandshake } from './upstream-handshake.js';
import { type RelayedLine, UpstreamWriter } from './upstream-writer.js';
import { BannerQueue } from './version-banner.js';

/** Default bound on how long a cold-start `tools/list` (no tool list known yet) waits for the child's list. */
export const defaultToolListWaitMs = 10_000;

/** How long the proxy's own `session_status` call to a new child may take. */
const internalStatusWaitMs = 10_000;

/** How long after an incompatible tool list the proxy exits (its answers are written first). */
const incompatibleExitDelayMs = 200;

export interface McpProxyOptions {
  readonly input: Readable;
  readonly output: Writable;
  readonly supervisor: ChildSupervisor;
  /** The protocol eras the proxy speaks upstream, in composition order (the proxy container's contributions). */
  readonly eras: ContributionProvider<ProtocolAdmission>;
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

type Pending = InFlightRequest<ChildConnection>;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The stdio MCP proxy, as a router: reads upstream with its own line framing, asks the
 * {@link UpstreamHandshake} (the contributed protocol eras) about every request, supervises the
 * child MCP server, and forwards everything both ways with ids kept unique across child restarts.
 * The jobs around it: {@link InFlightRequests} (the ledger of forwarded requests),
 * {@link ChildToolSync} (tool lists), {@link ProxyStatus} (`session_status`), the restart banner,
 * and {@link toProxyWireError} (every error it answers).
 *
 * Guarantees: stdout carries protocol lines only; the upstream sees exactly one handshake, that of
 * its era (what the era says to replay is replayed to every new child first); every upstream
 * request gets exactly one answer — after a child death an unsent request is sent to the next
 * child, a sent one is sent again once only when it is a read, a read-only/idempotent tool, or a
 * tool that honours the idempotency key the proxy stamps (on every call but to a tool the known
 * list declares read-only) and the call carries one; otherwise it is answered "outcome
 * unknown", naming the tool. Requests the proxy refuses itself: `params` that is not an object
 * (-32602; MCP params are objects), an id already in use by a pending request (-32600), a
 * `tools/call` without a string `params.name` (-32602), and whatever the eras refuse. Ids are told
 * apart by type and value (`7` is not `"7"`).
 *
 * Every spawn after the first child is a restart: the next child gets the rejoin target (see
 * {@link RejoinTargetTracker}), learned from the children's session reports (`session-report.ts`).
 * The restart banner repeats only what the child's report says about that rejoin (see
 * `version-banner.ts`). Each child also gets a credential channel ({@link CredentialRelay}): the
 * hosted tokens earlier children kept, never in its environment. Does not guarantee exactly-once
 * for tools that neither honour keys nor declare idempotency.
 */
export class McpProxy {
  readonly #options: McpProxyOptions;
  readonly #tracker: RejoinTargetTracker;
  readonly #attribution: ClientAttribution;
  readonly #handshake: UpstreamHandshake;
  readonly #writer: UpstreamWriter;
  readonly #framer: JsonRpcLineFramer;
  readonly #requests = new InFlightRequests<ChildConnection>();
  readonly #toolSync: ChildToolSync<ChildConnection>;
  readonly #status: ProxyStatus;
  readonly #reconnect: ReconnectTool;
  /** Requests the proxy answers itself asynchronously (`reconnect`), by {@link requestIdKey}. */
  readonly #local = new Map<string, JsonRpcId>();
  /** Upstream requests held open as notification streams (native `subscriptions/listen`), by {@link requestIdKey}. */
  readonly #streams = new Set<string>();
  readonly #banner = new BannerQueue();
  /** Opened while a chunk read from the client or a child is handled: its writes leave together at its end. */
  readonly #turn = new WriteTurn();
  /** Hosted tokens the children kept, handed to each new child on its credential channel. */
  readonly #credentials = new CredentialRelay();
  readonly #idempotencyKeys = new IdempotencyKeys();
  #child: ChildConnection | undefined;
  /** Children that came up so far; any spawn after the first is a restart. */
  #childrenStarted = 0;
  /** The rejoin target put into the environment of the spawn in progress. */
  #spawnHandoff: string | undefined;
  #nextChildId = 1;
  #previousDaemonVersion: string | undefined;
  #closed = false;
  /** The session report value relayed last, as the answer scan parsed it, and what reading it gave. */
  #lastReportValue: unknown;
  #lastReportRead: SessionReport | undefined;

  public constructor(options: McpProxyOptions) {
    this.#options = options;
    this.#tracker = options.tracker ?? new RejoinTargetTracker();
    this.#attribution = options.attribution ?? new ClientAttribution();
    this.#handshake = new UpstreamHandshake(
      options.eras.getContributions(),
      options.version,
      this.#attribution,
      options.logger,
      () => options.tools.server(),
    );
    this.#writer = new UpstreamWriter({
      output: options.output,
      limit: options.maxUpstreamMessageBytes ?? defaultMaxUpstreamMessageBytes,
      logger: options.logger,
      shapeResult: (result) => this.#handshake.shapeResult(result),
      turn: this.#turn,
    });
    this.#framer = new JsonRpcLineFramer(
      options.maxLineBytes === undefined ? {} : { maxLineBytes: options.maxLineBytes },
    );
    this.#status = new ProxyStatus(options.supervisor, this.#tracker, options.clock);
    this.#reconnect = new ReconnectTool({
      supervisor: options.supervisor,
      banner: this.#banner,
      clock: options.clock,
      currentChild: () => this.#child,
      askSessionReport: (child) => this.askSessionReport(child),
    });
    this.#toolSync = new ChildToolSync<ChildConnection>({
      tools: options.tools,
      logger: options.logger,
      request: (link, method, params) => this.ownRequest(link, method, params),
      isCurrent: (link) => this.#child === link,
      announceListChanged: () => this.toClient({ method: 'notifications/tools/list_changed' }),
      onIncompatible: () => this.toolListIncompatible(),
    });
  }

  /** Starts reading upstream; the child is spawned once the upstream connection is ready (its era says when). */
  public async start(): Promise<void> {
    const { input, supervisor } = this.#options;
    await this.#options.tools.load();
    supervisor.onDidSpawn((handle) => this.attachChild(handle));
    supervisor.onDidExit((event) => this.childExited(event.decision.kind, event.exitClass));
    supervisor.onDidRefuse((refusal) =>
      this.failAll({
        kind: 'breaker_open',
        reason: refusal.reason,
        lastExit: refusal.lastExit,
        nextAttemptAt: refusal.nextAttemptAt,
      }),
    );
    input.on('data', (chunk: Buffer) => {
      this.#turn.begin();
      try {
        const frames = this.#framer.push(chunk);
        for (let i = 0; i < frames.length; i++) {
          const frame = frames[i] as (typeof frames)[number];
          if (frame.kind === 'error') {
            const { code, message } = frame.response.error;
            this.upstream({ ...frame.response, error: toProxyWireError({ kind: 'unreadable_line', code, message }) });
          } else this.safelyFromUpstream(frame.message);
        }
      } finally {
        this.#turn.end();
      }
    });
    input.on('end', () => void this.close(0));
  }

  /** Stops the child and answers what is still pending. Idempotent. */
  public async close(code: number): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    const closing = toProxyWireError({ kind: 'shutting_down' });
    for (const pending of this.#requests.all()) this.reply(pending, undefined, closing);
    for (const key of [...this.#local.keys()]) this.answerLocal(key, closing);
    for (const ending of this.#handshake.endStreams()) {
      this.upstream({ jsonrpc: '2.0', id: ending.id, result: ending.result } as JsonRpcMessage);
    }
    this.#streams.clear();
    await this.#options.supervisor.stop().catch(() => undefined);
    // A cache write still under way would leave its temporary file in the user's cache dir.
    await this.#options.tools.settled();
    this.#writer.flush();
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
        const pending = this.#requests.get(id);
        const answer = toProxyWireError({ kind: 'internal', doing: '', error });
        if (pending) this.reply(pending, undefined, answer);
        else if (!this.#local.has(requestIdKey(id))) this.upstream({ jsonrpc: '2.0', id, error: answer });
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
    const childId = id === null ? undefined : link?.takeClientAnswer(id);
    if (link && childId !== undefined) {
      link.write({ ...message, id: childId } as JsonRpcMessage);
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
    if (this.#handshake.notification(message.method)) {
      this.startChildren();
      return;
    }
    // The era's own readiness notification goes to each child by replay, never forwarded.
    if (message.method === this.#handshake.connection?.readyOn) return;
    if (message.method === 'notifications/cancelled') {
      const requestId = (message as { params?: { requestId?: unknown } }).params?.requestId;
      if ((typeof requestId === 'string' || typeof requestId === 'number') && this.#handshake.cancelled(requestId)) {
        this.#streams.delete(requestIdKey(requestId));
        return;
      }
      const pending =
        typeof requestId === 'string' || typeof requestId === 'number' ? this.#requests.get(requestId) : undefined;
      if (pending && this.#requests.take(pending) && pending.sentTo && pending.childId !== undefined) {
        pending.sentTo.write({
          ...message,
          params: { ...(message as { params?: object }).params, requestId: pending.childId },
        } as JsonRpcMessage);
      }
      return;
    }
    if (this.#child?.ready) this.#child.write(message);
  }

  private startChildren(): void {
    void this.#options.supervisor
      .start(() => this.spawnSpec())
      .catch((error: unknown) => this.#options.logger.error('the child did not start', { error }));
  }

  private upstreamRequest(request: JsonRpcRequest): void {
    const refusal = this.refusal(request);
    if (refusal !== undefined) {
      this.upstream({ jsonrpc: '2.0', id: request.id, error: toProxyWireError(refusal) });
      return;
    }
    const verdict = this.#handshake.receive({ method: request.method, params: request.params });
    if (verdict.kind === 'refuse') {
      this.upstream({
        jsonrpc: '2.0',
        id: request.id,
        error: toProxyWireError({ kind: 'protocol_era', ...verdict.error }),
      });
      return;
    }
    if (verdict.becameReady) this.startChildren();
    if (verdict.kind === 'answer') {
      this.upstream({ jsonrpc: '2.0', id: request.id, result: verdict.result } as JsonRpcMessage);
      return;
    }
    if (verdict.kind === 'listen') {
      // The proxy holds the client's streams itself: they outlive every child.
      const opened = this.#handshake.listen(request.id, { method: request.method, params: request.params });
      if ('error' in opened) {
        this.upstream({
          jsonrpc: '2.0',
          id: request.id,
          error: toProxyWireError({ kind: 'protocol_era', ...opened.error }),
        });
        return;
      }
      this.#streams.add(requestIdKey(request.id));
      for (const notification of opened.notifications)
        this.upstream({ jsonrpc: '2.0', ...notification } as JsonRpcMessage);
      return;
    }
    if (request.method === 'ping') {
      this.upstream({ jsonrpc: '2.0', id: request.id, result: {} } as JsonRpcMessage);
      return;
    }
    const { tools } = this.#options;
    const coldToolList = request.method === 'tools/list' && tools.current().length === 0;
    // A known list is served at once, child or not: it is the list the proxy synced from the
    // child at its handshake and on every list change it announced (see ChildToolSync).
    if (request.method === 'tools/list' && !coldToolList) {
      this.upstream({
        jsonrpc: '2.0',
        id: request.id,
        result: { tools: tools.withReconnect(tools.current()) },
      } as JsonRpcMessage);
      return;
    }
    const params = (request.params ?? {}) as { name?: unknown; _meta?: Record<string, unknown> };
    const toolName = request.method === 'tools/call' && typeof params.name === 'string' ? params.name : undefined;
    if (toolName === reconnectToolName) {
      const key = requestIdKey(request.id);
      this.#local.set(key, request.id);
      void this.#reconnect.run().then(
        (answer) => this.answerLocal(key, answer.error, answer.result),
        (error: unknown) => {
          this.#options.logger.error('the reconnect tool failed', { error });
          this.answerLocal(key, toProxyWireError({ kind: 'restart_failed', error }));
        },
      );
      return;
    }
    if (toolName !== undefined && this.#toolSync.toolListIncompatible) {
      this.upstream({ jsonrpc: '2.0', id: request.id, error: toProxyWireError({ kind: 'tool_list_incompatible' }) });
      return;
    }
    if (
      toolName !== undefined &&
      (params._meta === undefined || isRecord(params._meta)) &&
      tools.find(toolName)?.annotations?.readOnlyHint !== true
    ) {
      // Parsed from the client's line for the proxy alone, the request is stamped in place (a
      // `_meta` that is not an object goes on as it came, for the child to refuse). A call to a
      // tool the known list says only reads has nothing for a key to keep from running twice.
      const meta = params._meta ?? {};
      if (typeof meta[idempotencyMetaKey] !== 'string') meta[idempotencyMetaKey] = this.#idempotencyKeys.next();
      params._meta = meta;
    }
    const pending = this.#requests.add(request, toolName, this.#options.clock.now());
    if (coldToolList && !this.#child?.ready) {
      // Nothing to serve yet: wait (bounded) for the child's own list rather than answer `reconnect` alone.
      pending.fallback = this.#options.clock.setTimer(this.#options.toolListWaitMs ?? defaultToolListWaitMs, () => {
        pending.fallback = undefined;
        this.#options.logger.warn('the child did not list its tools in time; serving the known tool list', {
          tools: tools.current().length,
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
  private fail(pending: Pending, error: ProxyWireError): void {
    if (pending.fallback) this.serveKnownTools(pending);
    else this.reply(pending, undefined, error);
  }

  /** The failure of a request the proxy refuses before looking at its method, if it does. */
  private refusal(request: JsonRpcRequest): ProxyFailure | undefined {
    if (Array.isArray(request.params)) {
      return {
        kind: 'invalid_params',
        message: `Invalid params: MCP request params must be a JSON object (named parameters), not an array (${quoteClientText(request.method)}).`,
      };
    }
    if (this.#requests.has(request.id) || this.heldElsewhere(request.id)) {
      return {
        kind: 'invalid_request',
        message: `Invalid Request: the id ${JSON.stringify(request.id)} is already used by a request still in progress; use a new id for each request.`,
      };
    }
    if (request.method === 'tools/call') {
      const name = (request.params as { name?: unknown } | undefined)?.name;
      if (request.params === undefined)
        return {
          kind: 'invalid_params',
          message: 'Invalid params: tools/call needs params {"name": "<tool>", "arguments": {...}}; params is missing.',
        };
      if (typeof name !== 'string' || name.length === 0)
        return {
          kind: 'invalid_params',
          message: 'Invalid params: tools/call needs params.name, the name of the tool to call, as a non-empty string.',
        };
    }
    return undefined;
  }

  /** `id` belongs to a request the proxy answers itself or holds open as a stream. */
  private heldElsewhere(id: JsonRpcId): boolean {
    if (this.#local.size === 0 && this.#streams.size === 0) return false;
    const key = requestIdKey(id);
    return this.#local.has(key) || this.#streams.has(key);
  }

  private spawnSpec(): ChildSpawnSpec {
    const base = this.#options.resolveChild();
    // Any spawn after a child came up is a restart, whatever is known about the daemon.
    const restart = this.#childrenStarted > 0;
    this.#spawnHandoff = restart ? this.#tracker.current() : this.#options.startNotebook;
    const handoff = handoffToEnvironment({
      rejoinNotebook: this.#spawnHandoff,
      agentSession: this.#attribution.agentSession(),
      peerLabel: this.#attribution.peerLabel(),
      credentialFd: String(credentialChannelFd),
    });
    return { ...base, env: { ...base.env, ...handoff }, credentialChannel: true };
  }

  private attachChild(handle: ChildProcessHandle): void {
    const first = this.#childrenStarted === 0;
    this.#childrenStarted += 1;
    this.#credentials.attach(handle.credentials);
    const link: ChildConnection = new ChildConnection({
      handle,
      handedOff: this.#spawnHandoff,
      nextId: () => this.#nextChildId++,
      clock: this.#options.clock,
      logger: this.#options.logger,
      onMessage: (message, line) => this.fromChild(link, message, line),
      onAnswer: (answer) => this.fromChildAnswer(link, answer),
      turn: this.#turn,
    });
    this.#spawnHandoff = undefined;
    this.#child = link;
    void this.handshake(link, first);
  }

  /** Replays what the era asks for to a new child, then syncs its tools and sends it what is pending. */
  private async handshake(link: ChildConnection, first: boolean): Promise<void> {
    let title: unknown;
    for (const message of this.#handshake.replay()) {
      if (message.stream) {
        // Answered only when the stream ends; what it carries is delivered like any child notification.
        link.write({
          jsonrpc: '2.0',
          id: this.#nextChildId++,
          method: message.method,
          params: this.#handshake.requestParams(message.params as Record<string, unknown> | undefined) ?? {},
        } as JsonRpcMessage);
      } else if (message.request) {
        const params = this.#handshake.requestParams(message.params as Record<string, unknown> | undefined);
        const answer = await link.request(message.method, params);
        if (this.#child !== link) break;
        const result = (answer as { result?: unknown }).result;
        // The child's own description (capabilities, serverInfo, instructions) is what the client is shown from now on.
        const described = this.#handshake.describedBy(message, result);
        title =
          described?.title ?? (result as { serverInfo?: { title?: unknown } } | undefined)?.serverInfo?.title ?? title;
        if (described !== undefined) await this.#options.tools.learnServer(described);
        if (this.#child !== link) break;
      } else {
        link.write({
          jsonrpc: '2.0',
          method: message.method,
          ...(message.params === undefined ? {} : { params: message.params }),
        } as JsonRpcMessage);
      }
    }
    if (this.#child !== link) {
      // It died during the handshake: it never becomes ready.
      link.markExited();
      return;
    }
    link.daemonVersion = daemonVersionFromTitle(typeof title === 'string' ? title : undefined);
    if (!first) {
      link.notice = {
        previousVersion: this.#previousDaemonVersion,
        newVersion: link.daemonVersion,
        handedOff: link.handedOff,
      };
      this.#banner.queue(link.notice);
    }
    this.#previousDaemonVersion = link.daemonVersion ?? this.#previousDaemonVersion;
    link.markReady();
    // The tool list first: after an upgrade that removed tools, pending calls get that answer.
    const compatible = await this.#toolSync.fetchCompatible(link);
    if (!compatible) return;
    for (const pending of this.#requests.all()) this.redeliver(pending, link);
    if (compatible.tools) await this.#toolSync.publish(compatible.tools);
  }

  /** An upgrade removed tools: pending tool calls get that answer, and the proxy exits so the client reconnects. */
  private toolListIncompatible(): void {
    const error = toProxyWireError({ kind: 'tool_list_incompatible' });
    for (const pending of this.#requests.all()) {
      if (pending.toolName !== undefined) this.reply(pending, undefined, error);
    }
    this.#options.clock.setTimer(incompatibleExitDelayMs, () => void this.close(0));
  }

  /** A request of the proxy's own to a child, with what its era adds (native: the envelope). */
  private ownRequest(
    link: ChildConnection,
    method: string,
    params: Record<string, unknown>,
    timeoutMs?: number,
  ): Promise<JsonRpcMessage> {
    return link.request(method, this.#handshake.requestParams(params), timeoutMs);
  }

  /** One child message; a fault in handling it is logged (and answers its request) but never stops the proxy. */
  private fromChild(link: ChildConnection, message: JsonRpcMessage, line?: Buffer): void {
    try {
      this.handleChildMessage(link, message, line);
    } catch (error) {
      this.#options.logger.error('handling a child message failed', { error });
      const pending = 'method' in message ? undefined : this.#requests.sentAs(link, (message as { id?: unknown }).id);
      if (pending) {
        this.reply(
          pending,
          undefined,
          toProxyWireError({ kind: 'internal', doing: ' while relaying the answer', error }),
        );
      }
    }
  }

  /**
   * A child's successful answer, read without being parsed: when nothing in it changes on the way
   * (the era sends results as they are, no banner is due, the proxy adds nothing to this method)
   * its bytes go on under the client's id, with only its session report read; otherwise it is
   * parsed and handled like any child message.
   */
  private fromChildAnswer(link: ChildConnection, answer: ScannedAnswer): void {
    const pending = this.#requests.sentAs(link, answer.id);
    try {
      if (pending === undefined || !this.relaysAsIs(pending)) {
        this.handleChildMessage(link, parseAnswer(answer), answer.line);
        return;
      }
      if (!this.#requests.take(pending)) return;
      this.#writer.writeRelayed(answer, pending.upstreamId);
      // The client has its answer first; what the proxy learns from it is recorded right after.
      this.#turn.afterWrites(() => {
        try {
          if (pending.toolName !== undefined && answer.sessionReport !== undefined) {
            this.observeReportValue(link, answer.sessionReport);
          }
          this.logForwarded(pending, answer.isError ? 'isError' : 'ok', undefined);
        } catch (error) {
          this.#options.logger.error('recording a relayed answer failed', { error });
        }
      });
    } catch (error) {
      this.#options.logger.error('handling a child message failed', { error });
      if (pending) {
        this.reply(
          pending,
          undefined,
          toProxyWireError({ kind: 'internal', doing: ' while relaying the answer', error }),
        );
      }
    }
  }

  /** The answer to `pending` goes to the client as the child wrote it (see {@link fromChildAnswer}). */
  private relaysAsIs(pending: Pending): boolean {
    return (
      this.#handshake.resultsAsIs &&
      this.#banner.idle &&
      pending.toolName !== 'session_status' &&
      pending.request.method !== 'tools/list'
    );
  }

  private handleChildMessage(link: ChildConnection, message: JsonRpcMessage, line?: Buffer): void {
    if ('method' in message) {
      if ('id' in message) {
        // A request of the child to the client: give it an upstream id of ours.
        this.upstream({ ...message, id: link.toClientId((message as JsonRpcRequest).id) } as JsonRpcMessage);
      } else if (message.method !== 'notifications/tools/list_changed') {
        this.toClient(message as { method: string; params?: Record<string, unknown> });
      } else {
        void this.#toolSync.refresh(link);
      }
      return;
    }
    const id = (message as { id: JsonRpcId }).id;
    const pending = this.#requests.sentAs(link, id);
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
      this.reply(
        pending,
        undefined,
        toProxyWireError({
          kind: 'internal',
          doing: ` while relaying the answer to ${quoteClientText(pending.request.method)}`,
          error: 'the nteract MCP server answered with a result that is not an object',
        }),
      );
      return;
    }
    let result = raw;
    if (pending.toolName !== undefined) {
      this.observeReport(link, result);
      if (pending.toolName === 'session_status') result = this.#status.decorate(result, link.handedOff);
      result = this.#banner.appendTo(result);
    }
    if (pending.request.method === 'tools/list') {
      const live = Array.isArray(result.tools) ? (result.tools as Tool[]) : [];
      const { tools } = this.#options;
      // An empty live list is never served: the known one is better than `reconnect` alone.
      result = { ...result, tools: tools.withReconnect(live.length > 0 ? live : tools.current()) };
    }
    // Nothing added: the child's own bytes go on, under the client's id.
    this.reply(pending, result, undefined, result === raw && line !== undefined ? { line, id } : undefined);
  }

  /** Stores the session report of `result`, if it has one (the only source of the rejoin target). */
  private observeReport(link: ChildConnection, result: unknown): void {
    const report = readSessionReport(result);
    if (report !== undefined) this.recordReport(link, report);
  }

  /**
   * Stores a session report as a relayed answer carried it (`_meta[sessionReportMetaKey]`, as
   * parsed). The child repeats one report until its session changes and the answer scan hands the
   * same value for the same bytes, so a repeated one is not read again.
   */
  private observeReportValue(link: ChildConnection, value: unknown): void {
    if (value !== this.#lastReportValue) {
      this.#lastReportValue = value;
      this.#lastReportRead = readSessionReport({ _meta: { [sessionReportMetaKey]: value } });
    }
    if (this.#lastReportRead !== undefined) this.recordReport(link, this.#lastReportRead);
  }

  private recordReport(link: ChildConnection, report: SessionReport): void {
    // The daemon version this child works with, also when its title had none (it started first).
    if (report.daemonVersion !== undefined && this.#child === link) {
      link.daemonVersion = report.daemonVersion;
      this.#previousDaemonVersion = report.daemonVersion;
    }
    this.#tracker.observeSessionReport(report);
    this.#status.recordReport(report, link.handle.pid);
  }

  private childExited(decision: string, exitClass: string): void {
    const link = this.#child;
    this.#child = undefined;
    link?.markExited();
    this.#options.logger.info('the child exited', { exitClass, decision });
    if (decision === 'stop') this.failAll({ kind: 'child_unavailable', reason: 'The nteract MCP server stopped.' });
    const known = this.#options.tools.current().length > 0;
    for (const pending of this.#requests.all()) {
      // A tools/list that met the death is answered from the known list at once, as one sent while no child is up.
      if (known && pending.request.method === 'tools/list') this.serveKnownTools(pending);
      else if (!pending.timer) this.waitForChild(pending);
    }
  }

  /** After a child death: send again, or answer "outcome unknown". */
  private redeliver(pending: Pending, link: ChildConnection): void {
    pending.timer?.cancel();
    pending.timer = undefined;
    const redelivery = this.#requests.redeliveryTo(pending, link, (candidate) => this.safeToResend(candidate));
    if (redelivery === 'keep') return;
    if (redelivery === 'outcome-unknown') {
      this.reply(
        pending,
        undefined,
        toProxyWireError({ kind: 'outcome_unknown', method: pending.request.method, tool: pending.toolName }),
      );
      return;
    }
    this.send(pending, link);
  }

  private safeToResend(pending: Pending): boolean {
    if (pending.toolName === undefined) return readMethods.has(pending.request.method);
    const tool = this.#options.tools.find(pending.toolName);
    if (!tool) return false;
    if (tool.annotations?.readOnlyHint === true || tool.annotations?.idempotentHint === true) return true;
    // Only with the key it went out with (a call to a tool that was read-only then went without one).
    const meta = (pending.request.params as { _meta?: unknown } | undefined)?._meta;
    return honorsIdempotency(tool._meta) && isRecord(meta) && typeof meta[idempotencyMetaKey] === 'string';
  }

  private waitForChild(pending: Pending): void {
    const { supervisor } = this.#options;
    pending.timer?.cancel();
    pending.timer = this.#options.clock.setTimer(this.#options.childWaitMs ?? 60_000, () => {
      pending.timer = undefined;
      this.fail(
        pending,
        toProxyWireError({
          kind: 'child_unavailable',
          reason: 'The nteract MCP server is not running (it did not come back in time). Call reconnect to try again.',
        }),
      );
    });
    if (supervisor.status().breaker === 'open') {
      void supervisor.waitForChild(0).catch((error: unknown) => {
        this.fail(pending, toProxyWireError(failureOfError(error, supervisor.status())));
      });
    }
  }

  private failAll(failure: ProxyFailure): void {
    const error = toProxyWireError(failure);
    for (const pending of this.#requests.all()) this.fail(pending, error);
  }

  /** The child's session report, from a `session_status` call of the proxy's own; `undefined` if none came. */
  private async askSessionReport(link: ChildConnection): Promise<SessionReport | undefined> {
    const answer = await this.ownRequest(
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
  private answerLocal(key: string, error: ProxyWireError | undefined, result?: Record<string, unknown>): void {
    const id = this.#local.get(key);
    if (id === undefined) return;
    this.#local.delete(key);
    this.upstream(error ? { jsonrpc: '2.0', id, error } : ({ jsonrpc: '2.0', id, result } as JsonRpcMessage));
  }

  private send(pending: Pending, link: ChildConnection): void {
    if (!link.writable) {
      // The child is already gone: the write would not reach it, so the request stays unsent.
      this.waitForChild(pending);
      return;
    }
    try {
      link.forward(pending, (childId) => this.#requests.markSent(pending, link, childId));
    } catch (error) {
      // JSON.parse took it, JSON.stringify cannot write it back (nested thousands of levels deep).
      this.reply(
        pending,
        undefined,
        toProxyWireError({
          kind: 'invalid_request',
          message: `Invalid Request: the request cannot be forwarded (${error instanceof RangeError ? 'it is nested too deeply' : String(error)}).`,
        }),
      );
    }
  }

  private reply(pending: Pending, result: unknown, error: ProxyWireError | undefined, relayed?: RelayedLine): void {
    if (!this.#requests.take(pending)) return;
    this.logForwarded(
      pending,
      error ? 'error' : (result as { isError?: unknown }).isError === true ? 'isError' : 'ok',
      error?.code,
    );
    this.upstream(
      error
        ? { jsonrpc: '2.0', id: pending.upstreamId, error }
        : ({ jsonrpc: '2.0', id: pending.upstreamId, result } as JsonRpcMessage),
      relayed,
    );
  }

  /** One line per forwarded call: never its arguments or result (they may hold secrets). */
  private logForwarded(pending: Pending, outcome: 'ok' | 'isError' | 'error', code: number | undefined): void {
    const fields: Record<string, unknown> = { method: pending.request.method };
    if (pending.toolName !== undefined) fields.tool = pending.toolName;
    fields.id = pending.upstreamId;
    fields.ms = this.#options.clock.now() - pending.receivedAt;
    fields.outcome = outcome;
    if (code !== undefined) fields.code = code;
    if (pending.resent) fields.resent = true;
    this.#options.logger.debug('forwarded', fields);
  }

  /** Writes one message to the client (see {@link UpstreamWriter}). */
  /**
   * A notification for the client, as the upstream era lets it through (native: list changes on
   * the streams that asked, log messages only while a request that asked for the level is in flight).
   */
  private toClient(notification: { readonly method: string; readonly params?: Record<string, unknown> }): void {
    const related = this.#requests.all().map((pending) => ({
      method: pending.request.method,
      params: pending.request.params,
    }));
    for (const out of this.#handshake.deliver(notification, related)) {
      this.upstream({ jsonrpc: '2.0', ...out } as JsonRpcMessage);
    }
  }

  private upstream(message: JsonRpcMessage, relayed?: RelayedLine): void {
    this.#writer.write(message, relayed);
  }
}
