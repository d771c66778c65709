import type { ChildProcessHandle, ChildSpawnSpec } from '@nteract-mcp/core';
import {
  credentialChannelFd,
  defaultMaxUpstreamMessageBytes,
  handoffToEnvironment,
  type JsonRpcId,
  JsonRpcLineFramer,
  type JsonRpcMessage,
  type JsonRpcRequest,
  readSessionReport,
  requestIdKey,
  type SessionReport,
} from '@nteract-mcp/core';
import { ChildAnswerRelay } from './child-answer-relay.js';
import { ChildConnection } from './child-connection.js';
import { ChildHandshake } from './child-handshake.js';
import { ChildToolSync } from './child-tool-sync.js';
import { ClientAttribution } from './client-attribution.js';
import { ClientResourceSubscriptions } from './client-resource-subscriptions.js';
import { ClientTasks } from './client-tasks.js';
import { CredentialRelay } from './credential-relay.js';
import { IdempotencyKeys } from './idempotency-keys.js';
import { InFlightRequests } from './in-flight-requests.js';
import type { McpProxyOptions } from './mcp-proxy-options.js';
import { ProxyStatus } from './proxy-status.js';
import { ReconnectTool } from './reconnect-tool.js';
import { RejoinTargetTracker } from './rejoin-target-tracker.js';
import { RequestDelivery } from './request-delivery.js';
import { type ProxyWireError, toProxyWireError } from './to-proxy-wire-error.js';
import { reconnectToolName } from './tool-list-cache.js';
import { WriteTurn } from './turn-writer.js';
import { UpstreamHandshake } from './upstream-handshake.js';
import { upstreamRequestRefusal } from './upstream-request-refusal.js';
import { UpstreamWriter } from './upstream-writer.js';
import { BannerQueue } from './version-banner.js';

/** How long the proxy's own `session_status` call to a new child may take. */
const internalStatusWaitMs = 10_000;

/** How long after an incompatible tool list the proxy exits (its answers are written first). */
const incompatibleExitDelayMs = 200;

/**
 * The stdio MCP proxy, as a router: reads upstream with its own line framing, asks the
 * {@link UpstreamHandshake} (the contributed protocol eras) about every request, supervises the
 * child MCP server, and forwards everything both ways with ids kept unique across child restarts.
 * The jobs around it: {@link InFlightRequests} (the ledger of forwarded requests),
 * {@link RequestDelivery} (getting them to a child across deaths), {@link ChildAnswerRelay} (every
 * answer to the client: a child's passed through as its bytes, or decorated), {@link ChildHandshake}
 * (each new child before it serves), {@link ChildToolSync} (tool lists), {@link ProxyStatus}
 * (`session_status`), the restart banner, and {@link toProxyWireError} (every error it answers).
 * The daemon version (for the upgrade banner) is learned from the children's session reports only.
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
 * hosted tokens earlier children kept, never in its environment. The client's resource
 * subscriptions outlive every child too ({@link ClientResourceSubscriptions}): each new child is
 * given them before it serves the requests waiting for it. So do the tasks the client created
 * ({@link ClientTasks}): each new child is handed their ids, so its `tasks/list` lists them.
 * Does not guarantee exactly-once for tools that neither honour keys nor declare idempotency.
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
  /** Every answer to a forwarded request goes through it (a child's passed through or decorated). */
  readonly #relay: ChildAnswerRelay;
  readonly #childHandshake: ChildHandshake;
  /** Gets each forwarded request to a child, across child deaths. */
  readonly #delivery: RequestDelivery;
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
  /** The client's resource subscriptions, given to every child (see {@link ClientResourceSubscriptions}). */
  readonly #subscriptions: ClientResourceSubscriptions;
  /** The tasks the client created, handed to every new child (see {@link ClientTasks}). */
  readonly #tasks: ClientTasks;
  #child: ChildConnection | undefined;
  /** Children that came up so far; any spawn after the first is a restart. */
  #childrenStarted = 0;
  /** The rejoin target put into the environment of the spawn in progress. */
  #spawnHandoff: string | undefined;
  #nextChildId = 1;
  /** The daemon version the children reported last (session reports: the one route it is learned by). */
  #daemonVersion: string | undefined;
  #closed = false;

  public constructor(options: McpProxyOptions) {
    this.#options = options;
    this.#tracker = options.tracker ?? new RejoinTargetTracker();
    this.#attribution = options.attribution ?? new ClientAttribution();
    this.#handshake = new UpstreamHandshake(
      options.eras.getContributions(),
      options.version,
      this.#attribution,
      options.logger,
      (era) => options.tools.server(era),
      options.extensions?.getContributions() ?? [],
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
    this.#tasks = new ClientTasks(options.logger);
    this.#subscriptions = new ClientResourceSubscriptions({
      upstream: this.#handshake,
      nextId: () => this.#nextChildId++,
      logger: options.logger,
    });
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
    this.#relay = new ChildAnswerRelay({
      requests: this.#requests,
      writer: this.#writer,
      turn: this.#turn,
      banner: this.#banner,
      status: this.#status,
      tools: options.tools,
      clock: options.clock,
      logger: options.logger,
      resultsAsIs: () => this.#handshake.resultsAsIs,
      onReport: (link, report) => this.recordReport(link, report),
      onAnswered: (pending, result) => {
        this.#subscriptions.answered(pending.request);
        this.#tasks.answered(pending.request, result);
      },
      readsResult: (pending) => this.#tasks.creates(pending.request),
    });
    this.#delivery = new RequestDelivery({
      requests: this.#requests,
      relay: this.#relay,
      supervisor: options.supervisor,
      tools: options.tools,
      clock: options.clock,
      logger: options.logger,
      ...(options.childWaitMs === undefined ? {} : { childWaitMs: options.childWaitMs }),
      ...(options.toolListWaitMs === undefined ? {} : { toolListWaitMs: options.toolListWaitMs }),
    });
    this.#childHandshake = new ChildHandshake({
      upstream: this.#handshake,
      tools: options.tools,
      toolSync: this.#toolSync,
      banner: this.#banner,
      isCurrent: (link) => this.#child === link,
      nextId: () => this.#nextChildId++,
      daemonVersion: () => this.#daemonVersion,
      onReady: (link) => {
        // The client's subscriptions first: a waiting unsubscribe then comes after the subscribe it undoes.
        this.#subscriptions.giveTo(link);
        this.#delivery.redeliverTo(link);
      },
    });
  }

  /** Starts reading upstream; the child is spawned once the upstream connection is ready (its era says when). */
  public async start(): Promise<void> {
    const { input, supervisor } = this.#options;
    await this.#options.tools.load();
    supervisor.onDidSpawn((handle) => this.attachChild(handle));
    supervisor.onDidExit((event) => this.childExited(event.decision.kind, event.exitClass));
    supervisor.onDidRefuse((refusal) =>
      this.#delivery.failAll({
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
          } else this.safelyFromUpstream(frame.message, frame.line);
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
    for (const pending of this.#requests.all()) this.#relay.reply(pending, undefined, closing);
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

  /**
   * One upstream message, with the line it came on; a fault in handling it answers the request
   * (if any) and never stops the proxy.
   */
  private safelyFromUpstream(message: JsonRpcMessage, line: Buffer): void {
    try {
      this.fromUpstream(message, line);
    } catch (error) {
      this.#options.logger.error('handling an upstream message failed', { error });
      const id = (message as { id?: unknown }).id;
      if ('method' in message && (typeof id === 'string' || typeof id === 'number')) {
        const pending = this.#requests.get(id);
        const answer = toProxyWireError({ kind: 'internal', doing: '', error });
        if (pending) this.#relay.reply(pending, undefined, answer);
        else if (!this.#local.has(requestIdKey(id))) this.upstream({ jsonrpc: '2.0', id, error: answer });
      }
    }
  }

  private fromUpstream(message: JsonRpcMessage, line: Buffer): void {
    if ('method' in message && 'id' in message) {
      this.upstreamRequest(message as JsonRpcRequest, line);
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
        this.#subscriptions.streamsChanged(this.#child);
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

  /** `line`: the client's bytes of `request`, passed on to a ready child when the proxy changes nothing in it. */
  private upstreamRequest(request: JsonRpcRequest, line: Buffer): void {
    const idInUse = this.#requests.has(request.id) || this.heldElsewhere(request.id);
    const refusal = upstreamRequestRefusal(request, idInUse);
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
      this.#subscriptions.streamsChanged(this.#child);
      return;
    }
    if (request.method === 'ping') {
      this.upstream({ jsonrpc: '2.0', id: request.id, result: {} } as JsonRpcMessage);
      return;
    }
    const { tools } = this.#options;
    // A client that declared a client extension gets the child's list for it, never the cached one.
    const coldToolList =
      request.method === 'tools/list' &&
      (tools.current().length === 0 ||
        this.#handshake.declaresExtension({ method: request.method, params: request.params }));
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
    // Parsed from the client's line for the proxy alone, the request is stamped in place. A call
    // to a tool the known list says only reads has nothing for a key to keep from running twice.
    const stamped = toolName !== undefined && tools.find(toolName)?.annotations?.readOnlyHint !== true;
    if (stamped) this.#idempotencyKeys.stamp(params);
    const pending = this.#requests.add(request, toolName, this.#options.clock.now());
    // Unstamped, the request is the client's line as it came: its bytes go on with the id replaced.
    this.#delivery.deliver(pending, this.#child, coldToolList, stamped ? undefined : line);
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
      ...(restart ? { changeCursor: this.#tracker.changeCursor(), knownTasks: this.#tasks.ids() } : {}),
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
      onAnswer: (answer) => this.#relay.relayScanned(link, answer),
      turn: this.#turn,
    });
    this.#spawnHandoff = undefined;
    this.#child = link;
    void this.#childHandshake.run(link, !first);
  }

  /** An upgrade removed tools: pending tool calls get that answer, and the proxy exits so the client reconnects. */
  private toolListIncompatible(): void {
    const error = toProxyWireError({ kind: 'tool_list_incompatible' });
    for (const pending of this.#requests.all()) {
      if (pending.toolName !== undefined) this.#relay.reply(pending, undefined, error);
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

  /**
   * One child message: a request or notification of the child's is handled here, an answer goes
   * to the relay. A fault in handling it is logged but never stops the proxy.
   */
  private fromChild(link: ChildConnection, message: JsonRpcMessage, line?: Buffer): void {
    if (!('method' in message)) {
      this.#relay.relayParsed(link, message, line);
      return;
    }
    try {
      if ('id' in message) {
        // A request of the child to the client: give it an upstream id of ours.
        this.upstream({ ...message, id: link.toClientId((message as JsonRpcRequest).id) } as JsonRpcMessage);
      } else if (message.method !== 'notifications/tools/list_changed') {
        this.toClient(message as { method: string; params?: Record<string, unknown> });
      } else {
        void this.#toolSync.refresh(link);
      }
    } catch (error) {
      this.#options.logger.error('handling a child message failed', { error });
    }
  }

  /** A session report a child sent: the rejoin target, what `session_status` shows, and the daemon version. */
  private recordReport(link: ChildConnection, report: SessionReport): void {
    // The daemon version the live child works with: the only way the proxy learns it.
    if (report.daemonVersion !== undefined && this.#child === link) this.#daemonVersion = report.daemonVersion;
    this.#tracker.observeSessionReport(report);
    this.#status.recordReport(report, link.handle.pid);
  }

  private childExited(decision: string, exitClass: string): void {
    const link = this.#child;
    this.#child = undefined;
    link?.markExited();
    this.#options.logger.info('the child exited', { exitClass, decision });
    if (decision === 'stop') {
      this.#delivery.failAll({ kind: 'child_unavailable', reason: 'The nteract MCP server stopped.' });
    }
    this.#delivery.childGone();
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
    const report = readSessionReport(result);
    if (report !== undefined) this.recordReport(link, report);
    return report;
  }

  /** Answers a request the proxy handles itself (error, else result), once. */
  private answerLocal(key: string, error: ProxyWireError | undefined, result?: Record<string, unknown>): void {
    const id = this.#local.get(key);
    if (id === undefined) return;
    this.#local.delete(key);
    this.upstream(error ? { jsonrpc: '2.0', id, error } : ({ jsonrpc: '2.0', id, result } as JsonRpcMessage));
  }

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

  /** Writes one message to the client (see {@link UpstreamWriter}). */
  private upstream(message: JsonRpcMessage): void {
    this.#writer.write(message);
  }
}
