import {
  type AdmissionRequest,
  announceExtensions,
  type ClientExtension,
  type ConnectionRequestId,
  childServerCapabilities,
  declaredExtensions,
  type EraConnection,
  type GateVerdict,
  type Logger,
  type OutboundNotification,
  type ProtocolAdmission,
  ProtocolEraGate,
  type ReplayMessage,
  type ServerDescription,
  type StreamEnding,
} from '@nteract-mcp/core';
import type { ClientAttribution } from './client-attribution.js';

/** The instructions the proxy gives the client when an era answers the handshake itself. */
export const proxyInstructions =
  'nteract MCP server for Jupyter notebooks. Use list_active_notebooks, connect_notebook or create_notebook to choose the active notebook; the server keeps it across restarts. If tools misbehave, call reconnect.';

/**
 * The proxy's side of the upstream protocol: asks the contributed eras ({@link ProtocolAdmission},
 * in composition order) about every upstream request, through one {@link ProtocolEraGate} for the
 * life of the proxy. The era opened by the first valid request stays fixed across child
 * restarts: it answers the handshake (legacy `initialize`) and probes (`server/discover`),
 * refuses what it does not serve, shapes the results the client gets, adds what a request of the
 * proxy's own to a child needs (native: the opening envelope), and says what to replay to every
 * new child (legacy: the captured `initialize` and `notifications/initialized`). The client named
 * in the opening request becomes the children's attribution.
 *
 * The server it presents to a client of an era is the child's, as the last child described itself
 * in that era, in its answer to a replayed request (the era reads it, {@link describedBy};
 * `learned`, asked on every handshake, probe and shaping with the era's name), with the proxy's own
 * on top: `tools.listChanged` (it injects `reconnect` and announces list changes). Before a child
 * described itself in that era, the proxy's built-in description.
 *
 * A client that declared a client extension the proxy loads (`ClientExtension`) finds it announced
 * in the handshake's capabilities; to any other the description is as it was.
 *
 * Knows no protocol version itself: without an era that admits a plain `initialize`, `initialize`
 * is refused like any other request no era serves.
 */
export class UpstreamHandshake {
  readonly #gate: ProtocolEraGate;
  readonly #attribution: ClientAttribution;
  readonly #extensions: readonly ClientExtension[];
  #ready = false;

  public constructor(
    eras: readonly ProtocolAdmission[],
    version: string,
    attribution: ClientAttribution,
    logger: Logger,
    learned: (era: string) => ServerDescription | undefined = () => undefined,
    extensions: readonly ClientExtension[] = [],
  ) {
    this.#attribution = attribution;
    this.#extensions = extensions;
    const builtIn: ServerDescription = {
      name: 'nteract',
      version,
      capabilities: { ...childServerCapabilities },
      instructions: proxyInstructions,
    };
    this.#gate = new ProtocolEraGate(
      eras,
      (era, declared) => {
        const child = learned(era);
        const server = child === undefined ? builtIn : withProxyCapabilities(child);
        // A client that declared a client extension the proxy loads sees it announced, as the child would.
        const announced = declaredExtensions(extensions, declared);
        return announced.length === 0
          ? server
          : { ...server, capabilities: announceExtensions(server.capabilities, announced) };
      },
      { onFault: (era, error) => logger.error('a protocol era failed on an upstream request', { era, error }) },
    );
  }

  /** The opened connection, once the client's first valid request opened one. */
  public get connection(): EraConnection | undefined {
    return this.#gate.connection;
  }

  /**
   * The connection is open and serves (children may start): the client said it is ready (legacy:
   * `notifications/initialized`), or sent a request that needs serving before it did.
   */
  public get ready(): boolean {
    return this.#ready;
  }

  /**
   * What to do with an upstream request. `becameReady` is set when this request made the
   * connection ready: the one that opened an era serving from its first request (native), or the
   * first request to serve on a connection still waiting for its readiness notification (legacy:
   * a request sent once `initialize` is answered and before `notifications/initialized`, which
   * the specification allows and a reference server answers at once; a `ping` excepted).
   */
  public receive(request: AdmissionRequest): GateVerdict & { readonly becameReady?: true } {
    const verdict = this.#gate.receive(request);
    if (verdict.kind === 'refuse') return verdict;
    if (!verdict.opened) {
      const waiting = !this.#ready && this.#gate.connection !== undefined;
      if (!waiting || verdict.kind === 'answer' || request.method === 'ping') return verdict;
      this.#ready = true;
      return { ...verdict, becameReady: true };
    }
    this.#attribution.observeClientInfo(verdict.opened.client);
    if (verdict.opened.readyOn !== undefined) return verdict;
    this.#ready = true;
    return { ...verdict, becameReady: true };
  }

  /** An upstream notification; `true` when it made the connection ready (the first time; not when a request did). */
  public notification(method: string): boolean {
    const connection = this.#gate.connection;
    if (this.#ready || connection === undefined || connection.readyOn !== method) return false;
    this.#ready = true;
    return true;
  }

  /**
   * Whether the client declared, for `request`, a client extension the proxy loads: the child's
   * answers to it may differ from those to a client that did not (its tool list among them).
   */
  public declaresExtension(request: AdmissionRequest): boolean {
    return declaredExtensions(this.#extensions, this.#gate.clientCapabilities(request)).length > 0;
  }

  /** The opened era sends every result as it is (see `EraConnection.resultsAsIs`). */
  public get resultsAsIs(): boolean {
    return this.#gate.connection?.resultsAsIs === true;
  }

  /** A result for the client, as the opened era sends it. */
  public shapeResult(result: Record<string, unknown>): Record<string, unknown> {
    return this.#gate.shapeResult(result);
  }

  /** The params of a request of the proxy's own to a child. */
  public requestParams(params: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
    return this.#gate.connection ? this.#gate.connection.requestParams(params) : params;
  }

  /** Opens the notification stream of a request answered `listen`: what to send at once, or the refusal. */
  public listen(id: ConnectionRequestId, request: AdmissionRequest): ReturnType<ProtocolEraGate['listen']> {
    return this.#gate.listen(id, request);
  }

  /** The client cancelled request `id`: `true` when that closed one of its streams. */
  public cancelled(id: ConnectionRequestId): boolean {
    return this.#gate.cancelled(id);
  }

  /** A notification for the client, as the opened era lets it through (see `EraConnection.deliver`). */
  public deliver(
    notification: OutboundNotification,
    related: readonly AdmissionRequest[],
  ): readonly OutboundNotification[] {
    return this.#gate.deliver(notification, related);
  }

  /** Closes the client's streams; the answers that end them. */
  public endStreams(): readonly StreamEnding[] {
    return this.#gate.endStreams();
  }

  /**
   * How a child described itself in its `result` to the replayed `message`, as the opened era reads
   * it, and that era's name (a description holds for the era it was given to).
   */
  public describedBy(
    message: ReplayMessage,
    result: unknown,
  ): { readonly era: string; readonly server: ServerDescription } | undefined {
    const connection = this.#gate.connection;
    const server = connection?.describedBy?.(message, result);
    if (connection === undefined || server === undefined) return undefined;
    // What the child announced only because this client declared it is not kept as every client's.
    const sent = { method: message.method, params: this.requestParams(message.params as Record<string, unknown>) };
    const declared = this.#gate.clientCapabilities(sent)?.extensions;
    return { era: connection.era, server: withoutDeclaredExtensions(server, declared) };
  }

  /** The resource URIs the client's open streams watch (native), sorted. */
  public watchedResources(): readonly string[] {
    return this.#gate.watchedResources();
  }

  /** The task ids the client's open streams watch (native), sorted. */
  public watchedTasks(): readonly string[] {
    return this.#gate.watchedTasks();
  }

  /** What gives a child the client's resource subscriptions `uris` and watched `taskIds`, `meta` in each message's `_meta`. */
  public subscriptionReplay(
    uris: readonly string[],
    meta: Readonly<Record<string, unknown>>,
    taskIds: readonly string[] = [],
  ): readonly ReplayMessage[] {
    return this.#gate.subscriptionReplay(uris, meta, taskIds);
  }

  /** What every new child must receive before it serves. */
  public replay(): readonly ReplayMessage[] {
    return this.#gate.connection?.replay() ?? [];
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * `server` without the extensions in its capabilities that the client's `declared` extensions map
 * names, but those every client is shown (the built-in capabilities' own: tasks).
 */
function withoutDeclaredExtensions(server: ServerDescription, declared: unknown): ServerDescription {
  const announced = server.capabilities.extensions;
  if (!isRecord(declared) || !isRecord(announced)) return server;
  const always = childServerCapabilities.extensions;
  const kept = Object.entries(announced).filter(
    ([name]) => declared[name] === undefined || (isRecord(always) && always[name] !== undefined),
  );
  if (kept.length === Object.keys(announced).length) return server;
  return { ...server, capabilities: { ...server.capabilities, extensions: Object.fromEntries(kept) } };
}

/** `server` with what the proxy provides itself added: `tools.listChanged` (the child's other tool capabilities kept). */
function withProxyCapabilities(server: ServerDescription): ServerDescription {
  const tools = server.capabilities.tools;
  return {
    ...server,
    capabilities: { ...server.capabilities, tools: { ...(isRecord(tools) ? tools : {}), listChanged: true } },
  };
}
