import {
  type AdmissionDecision,
  type AdmissionOpening,
  type AdmissionRejection,
  type AdmissionRequest,
  boundClientText,
  type EraConnection,
  type ProtocolAdmission,
  readClientIdentity,
  type ServerDescription,
} from '@nteract-mcp/core';
import { inject, injectable } from 'inversify';
import { NativeConnection } from './native-connection.js';
import { envelopeKeys, nativeErrorCodes, serverInfo } from './native-envelope.js';
import { NativeTransportOptions } from './native-transport-options.js';

const removedMethods = new Set([
  'initialize',
  'ping',
  'logging/setLevel',
  'resources/subscribe',
  'resources/unsubscribe',
]);

/** Methods that exist only in the per-request era: without an envelope they are malformed, not another era's. */
const nativeOnlyMethods = new Set(['server/discover', 'subscriptions/listen']);

/**
 * The per-request era (2026-07-28). It admits requests that carry the envelope in
 * `params._meta`; a request without any envelope key is not ours (`pass`), unless its method
 * exists only in this era (`server/discover`, `subscriptions/listen`: -32602, envelope missing). `server/discover` is a
 * probe that locks nothing. A missing required key is -32602, an unserved version -32022 with
 * `supported`/`requested`, a method this revision removed -32601. A request nobody admitted is
 * refused as a native-locked connection refuses it: a plain `initialize` -32022 naming the
 * served versions, anything else -32602 (no envelope). Deciding starts no work.
 */
@injectable()
export class PerRequestAdmission implements ProtocolAdmission {
  public readonly id = 'transport-native.per-request';
  public readonly specificationVersion = 'v2';
  public readonly era = 'native';

  public constructor(@inject(NativeTransportOptions) private readonly options: NativeTransportOptions) {}

  public admit(request: AdmissionRequest): AdmissionDecision {
    const meta = (request.params as { _meta?: unknown } | undefined)?._meta;
    const envelope = typeof meta === 'object' && meta !== null ? (meta as Record<string, unknown>) : {};
    if (!(envelopeKeys.protocolVersion in envelope) && !(envelopeKeys.clientCapabilities in envelope)) {
      // A method only this era has is this era's request, however malformed: its envelope is missing.
      if (!nativeOnlyMethods.has(request.method)) return { kind: 'pass' };
      return {
        kind: 'reject',
        code: nativeErrorCodes.invalidParams,
        message: `Missing required _meta["${envelopeKeys.protocolVersion}"] envelope on ${boundClientText(request.method)}`,
      };
    }

    const requested = envelope[envelopeKeys.protocolVersion];
    if (typeof requested !== 'string' || requested.length === 0) {
      return {
        kind: 'reject',
        code: nativeErrorCodes.invalidParams,
        message: `Missing required _meta["${envelopeKeys.protocolVersion}"]`,
      };
    }
    const capabilities = envelope[envelopeKeys.clientCapabilities];
    if (typeof capabilities !== 'object' || capabilities === null || Array.isArray(capabilities)) {
      return {
        kind: 'reject',
        code: nativeErrorCodes.invalidParams,
        message: `Missing required _meta["${envelopeKeys.clientCapabilities}"]`,
      };
    }
    if (!this.options.protocolVersions.includes(requested)) {
      return {
        kind: 'reject',
        code: nativeErrorCodes.unsupportedProtocolVersion,
        message: `Unsupported protocol version: ${boundClientText(requested)}`,
        data: { supported: [...this.options.protocolVersions], requested: boundClientText(requested) },
      };
    }
    if (removedMethods.has(request.method)) {
      return {
        kind: 'reject',
        code: nativeErrorCodes.methodNotFound,
        message: `Method not found: ${boundClientText(request.method)} is not part of protocol ${requested}`,
      };
    }
    const clientCapabilities = capabilities as Record<string, unknown>;
    if (request.method === 'server/discover') return { kind: 'probe', clientCapabilities };
    return {
      kind: 'open',
      protocolVersion: requested,
      client: readClientIdentity(envelope[envelopeKeys.clientInfo]),
      clientCapabilities,
    };
  }

  /**
   * The `server/discover` result: served versions, capabilities, instructions, serverInfo in
   * `_meta`. The 2025 era's `tasks` capability is not this era's (its tasks are the extension in
   * `capabilities.extensions`): left out.
   */
  public probe(_request: AdmissionRequest, server: ServerDescription): Record<string, unknown> {
    const { tasks: _legacyTasks, ...capabilities } = server.capabilities;
    return {
      supportedVersions: [...this.options.protocolVersions],
      capabilities,
      ...(server.instructions !== undefined ? { instructions: server.instructions } : {}),
      ttlMs: 0,
      cacheScope: 'private',
      resultType: 'complete',
      _meta: { [envelopeKeys.serverInfo]: serverInfo(server) },
    };
  }

  public open(request: AdmissionRequest, opening: AdmissionOpening, _server: ServerDescription): EraConnection {
    const meta = (request.params as { _meta: Record<string, unknown> })._meta;
    return new NativeConnection(this, opening, {
      [envelopeKeys.protocolVersion]: meta[envelopeKeys.protocolVersion],
      [envelopeKeys.clientCapabilities]: meta[envelopeKeys.clientCapabilities],
      ...(envelopeKeys.clientInfo in meta ? { [envelopeKeys.clientInfo]: meta[envelopeKeys.clientInfo] } : {}),
    });
  }

  public refuseUnadmitted(request: AdmissionRequest): AdmissionRejection {
    if (request.method === 'initialize') {
      const requested = (request.params as { protocolVersion?: unknown } | undefined)?.protocolVersion;
      return {
        kind: 'reject',
        code: nativeErrorCodes.unsupportedProtocolVersion,
        message: `Unsupported protocol version: this server speaks per-request negotiation only (${this.options.protocolVersions.join(', ')}); send the _meta envelope instead of initialize.`,
        data: {
          supported: [...this.options.protocolVersions],
          requested: typeof requested === 'string' ? requested : null,
        },
      };
    }
    return {
      kind: 'reject',
      code: nativeErrorCodes.invalidParams,
      message: `Missing required _meta["${envelopeKeys.protocolVersion}"] envelope on ${boundClientText(request.method)}`,
    };
  }
}
