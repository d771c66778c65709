import type {
  AdmissionDecision,
  AdmissionOpening,
  AdmissionRejection,
  AdmissionRequest,
  ClientIdentity,
  ConnectionCheck,
  ConnectionRequestId,
  EraConnection,
  EraDialect,
  OutboundNotification,
  ReplayMessage,
  ServerDescription,
  StreamEnding,
} from '@nteract-mcp/core';
import { nativeDialect } from './native-dialect.js';
import { envelopeKeys, serverInfo } from './native-envelope.js';
import { NotificationStreams } from './notification-streams.js';

/** The members that make a result a list or read result, which 2026-07-28 requires to carry `ttlMs`/`cacheScope`. */
const cacheableResultKeys = ['tools', 'prompts', 'resources', 'resourceTemplates', 'contents'] as const;

/** What a native connection asks of the admission that opened it (the per-request admission). */
export interface NativeAdmissionRules {
  admit(request: AdmissionRequest): AdmissionDecision;
  refuseUnadmitted(request: AdmissionRequest): AdmissionRejection;
}

/**
 * A connection locked to the native era by its first valid enveloped request. The opening
 * request is served like any other (no handshake). Every later request is validated again
 * (decision: missing key -32602, unserved version -32022, plain `initialize` -32022, enveloped
 * `initialize`/`ping` -32601; `server/discover` stays a probe). Results get `resultType` (when
 * absent) and `_meta["io.modelcontextprotocol/serverInfo"]`; list and read results also get the
 * cache fields `ttlMs: 0`, `cacheScope: 'private'` when absent (nothing here is shared). Requests sent on its behalf to a
 * server behind it carry the opening envelope; a new server needs nothing replayed but a
 * `subscriptions/listen` for every list change (its notifications are delivered to this
 * connection's own streams).
 * `subscriptions/listen` opens a notification stream ({@link NotificationStreams}: nothing is
 * sent unsolicited, list changes go to the streams that asked, resource updates to the streams
 * naming the resource, log messages only to requests that asked for the level); the client's
 * capabilities are those of each request's envelope. The resources the client's streams watch
 * are passed on to a server behind as one stream of the host's own naming them all. The child
 * server speaks {@link nativeDialect} on it.
 */
export class NativeConnection implements EraConnection {
  public readonly era = 'native';
  public readonly dialect: EraDialect = nativeDialect;
  public readonly protocolVersion: string;
  public readonly client: ClientIdentity | undefined;
  public readonly handshake = undefined;
  public readonly readyOn = undefined;
  readonly #admission: NativeAdmissionRules;
  readonly #envelope: Readonly<Record<string, unknown>>;
  readonly #streams = new NotificationStreams();

  public constructor(
    admission: NativeAdmissionRules,
    opening: AdmissionOpening,
    envelope: Readonly<Record<string, unknown>>,
  ) {
    this.#admission = admission;
    this.protocolVersion = opening.protocolVersion;
    this.client = opening.client;
    this.#envelope = envelope;
  }

  public check(request: AdmissionRequest): ConnectionCheck {
    const decision = this.#admission.admit(request);
    if (decision.kind === 'open') return { kind: request.method === 'subscriptions/listen' ? 'listen' : 'serve' };
    if (decision.kind === 'probe' || decision.kind === 'reject') return decision;
    return this.#admission.refuseUnadmitted(request);
  }

  public shapeResult(result: Readonly<Record<string, unknown>>, server: ServerDescription): Record<string, unknown> {
    const meta = typeof result._meta === 'object' && result._meta !== null ? (result._meta as object) : {};
    const cacheable = cacheableResultKeys.some((key) => Array.isArray(result[key]));
    return {
      ...(cacheable ? { ttlMs: 0, cacheScope: 'private' } : {}),
      ...result,
      resultType: typeof result.resultType === 'string' ? result.resultType : 'complete',
      _meta: { ...meta, [envelopeKeys.serverInfo]: serverInfo(server) },
    };
  }

  public requestParams(params: Readonly<Record<string, unknown>> | undefined): Record<string, unknown> {
    const meta = typeof params?._meta === 'object' && params._meta !== null ? (params._meta as object) : {};
    return { ...params, _meta: { ...this.#envelope, ...meta } };
  }

  /**
   * Nothing to replay, but two requests of the era's own: `server/discover`, so the host learns how
   * the server describes itself, and a stream for every list change, so the server's changes reach
   * this connection's streams.
   */
  public replay(): readonly ReplayMessage[] {
    return [
      { request: true, method: 'server/discover', params: {} },
      {
        request: true,
        stream: true,
        method: 'subscriptions/listen',
        params: { notifications: { toolsListChanged: true, promptsListChanged: true, resourcesListChanged: true } },
      },
    ];
  }

  /** The server's capabilities, instructions and `_meta` serverInfo from its `server/discover` result. */
  public describedBy(message: ReplayMessage, result: unknown): ServerDescription | undefined {
    if (message.method !== 'server/discover' || typeof result !== 'object' || result === null) return undefined;
    const { capabilities, instructions, _meta: meta } = result as Record<string, unknown>;
    const info =
      typeof meta === 'object' && meta !== null
        ? (meta as Record<string, unknown>)[envelopeKeys.serverInfo]
        : undefined;
    if (typeof capabilities !== 'object' || capabilities === null || typeof info !== 'object' || info === null)
      return undefined;
    const { name, version, title } = info as Record<string, unknown>;
    if (typeof name !== 'string' || typeof version !== 'string') return undefined;
    return {
      name,
      version,
      ...(typeof title === 'string' ? { title } : {}),
      capabilities: capabilities as Record<string, unknown>,
      ...(typeof instructions === 'string' ? { instructions } : {}),
    };
  }

  public clientCapabilities(request: AdmissionRequest): Readonly<Record<string, unknown>> | undefined {
    const meta = (request.params as { _meta?: unknown } | undefined)?._meta;
    const declared =
      typeof meta === 'object' && meta !== null
        ? (meta as Record<string, unknown>)[envelopeKeys.clientCapabilities]
        : undefined;
    return typeof declared === 'object' && declared !== null && !Array.isArray(declared)
      ? (declared as Record<string, unknown>)
      : undefined;
  }

  public listen(
    id: ConnectionRequestId,
    request: AdmissionRequest,
    server: ServerDescription,
  ): readonly OutboundNotification[] | AdmissionRejection {
    return this.#streams.open(id, request, server);
  }

  public cancelled(id: ConnectionRequestId): boolean {
    return this.#streams.cancel(id);
  }

  public deliver(
    notification: OutboundNotification,
    related: readonly AdmissionRequest[],
  ): readonly OutboundNotification[] {
    return this.#streams.deliver(notification, related);
  }

  public endStreams(): readonly StreamEnding[] {
    return this.#streams.end();
  }

  public watchedResources(): readonly string[] {
    return this.#streams.watchedResources();
  }

  public watchedTasks(): readonly string[] {
    return this.#streams.watchedTasks();
  }

  /**
   * One stream naming every URI and watched task id (`meta` in its `_meta`; the envelope is added
   * as for every request of the host's own).
   */
  public subscriptionReplay(
    uris: readonly string[],
    meta: Readonly<Record<string, unknown>>,
    taskIds: readonly string[] = [],
  ): readonly ReplayMessage[] {
    if (uris.length === 0 && taskIds.length === 0) return [];
    const notifications = {
      ...(uris.length > 0 ? { resourceSubscriptions: [...uris] } : {}),
      ...(taskIds.length > 0 ? { taskIds: [...taskIds] } : {}),
    };
    return [
      { request: true, stream: true, method: 'subscriptions/listen', params: { notifications, _meta: { ...meta } } },
    ];
  }
}
