import {
  type AdmissionDecision,
  type AdmissionRequest,
  type ProtocolAdmission,
  readClientIdentity,
} from '@nteract-mcp/core';
import { inject, injectable } from 'inversify';
import { NativeTransportOptions } from './native-transport-options.js';

/** Reserved `_meta` keys of the 2026-07-28 per-request envelope. */
export const envelopeKeys = Object.freeze({
  protocolVersion: 'io.modelcontextprotocol/protocolVersion',
  clientCapabilities: 'io.modelcontextprotocol/clientCapabilities',
  clientInfo: 'io.modelcontextprotocol/clientInfo',
});

/** JSON-RPC codes of the native era. */
export const nativeErrorCodes = Object.freeze({
  invalidParams: -32602,
  methodNotFound: -32601,
  unsupportedProtocolVersion: -32022,
});

const removedMethods = new Set([
  'initialize',
  'ping',
  'logging/setLevel',
  'resources/subscribe',
  'resources/unsubscribe',
]);

/**
 * Admits requests that carry the 2026-07-28 envelope in `params._meta`. A request without any
 * envelope key is not ours (`pass`). `server/discover` is a probe that locks nothing. A missing
 * required key is -32602, an unserved version -32022 with `supported`/`requested`, a method this
 * revision removed -32601. Deciding starts no work.
 */
@injectable()
export class PerRequestAdmission implements ProtocolAdmission {
  public readonly id = 'transport-native.per-request';
  public readonly specificationVersion = 'v1';
  public readonly era = 'native';

  public constructor(@inject(NativeTransportOptions) private readonly options: NativeTransportOptions) {}

  public admit(request: AdmissionRequest): AdmissionDecision {
    const meta = (request.params as { _meta?: unknown } | undefined)?._meta;
    if (typeof meta !== 'object' || meta === null) return { kind: 'pass' };
    const envelope = meta as Record<string, unknown>;
    if (!(envelopeKeys.protocolVersion in envelope) && !(envelopeKeys.clientCapabilities in envelope))
      return { kind: 'pass' };

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
        message: `Unsupported protocol version: ${requested}`,
        data: { supported: [...this.options.protocolVersions], requested },
      };
    }
    if (removedMethods.has(request.method)) {
      return {
        kind: 'reject',
        code: nativeErrorCodes.methodNotFound,
        message: `Method not found: ${request.method} is not part of protocol ${requested}`,
      };
    }
    if (request.method === 'server/discover') return { kind: 'probe' };
    return { kind: 'open', protocolVersion: requested, client: readClientIdentity(envelope[envelopeKeys.clientInfo]) };
  }
}
