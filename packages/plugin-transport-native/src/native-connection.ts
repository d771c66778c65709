import type {
  AdmissionOpening,
  AdmissionRequest,
  ClientIdentity,
  ConnectionCheck,
  EraConnection,
  ReplayMessage,
  ServerDescription,
} from '@nteract-mcp/core';
import { envelopeKeys, serverInfo } from './native-envelope.js';
import type { PerRequestAdmission } from './per-request-admission.js';

/** The members that make a result a list or read result, which 2026-07-28 requires to carry `ttlMs`/`cacheScope`. */
const cacheableResultKeys = ['tools', 'prompts', 'resources', 'resourceTemplates', 'contents'] as const;

/**
 * A connection locked to the native era by its first valid enveloped request. The opening
 * request is served like any other (no handshake). Every later request is validated again
 * (decision: missing key -32602, unserved version -32022, plain `initialize` -32022, enveloped
 * `initialize`/`ping` -32601; `server/discover` stays a probe). Results get `resultType` (when
 * absent) and `_meta["io.modelcontextprotocol/serverInfo"]`; list and read results also get the
 * cache fields `ttlMs: 0`, `cacheScope: 'private'` when absent (nothing here is shared). Requests sent on its behalf to a
 * server behind it carry the opening envelope; a new server needs nothing replayed.
 */
export class NativeConnection implements EraConnection {
  public readonly era = 'native';
  public readonly protocolVersion: string;
  public readonly client: ClientIdentity | undefined;
  public readonly handshake = undefined;
  public readonly readyOn = undefined;
  readonly #admission: PerRequestAdmission;
  readonly #envelope: Readonly<Record<string, unknown>>;

  public constructor(
    admission: PerRequestAdmission,
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
    if (decision.kind === 'open') return { kind: 'serve' };
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

  public replay(): readonly ReplayMessage[] {
    return [];
  }
}
