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
import { carriesNativeEnvelope } from './carries-native-envelope.js';
import { LegacyConnection } from './legacy-connection.js';
import { LegacyTransportOptions } from './legacy-transport-options.js';

/**
 * The `initialize`-based era. It opens on `initialize`, negotiating the version the legacy way:
 * the client's version when served, else the newest served one (the client then decides).
 * `clientInfo` becomes the identity used for the peer label. An `initialize` carrying a native
 * `_meta` envelope (valid or not) is not legacy's: it passes, for the native era to judge
 * (-32601 when the envelope is valid). Before `initialize`, any other
 * request is refused -32600 ("send initialize first"). Legacy has no probe.
 */
@injectable()
export class InitializeAdmission implements ProtocolAdmission {
  public readonly id = 'transport-legacy.initialize';
  public readonly specificationVersion = 'v2';
  public readonly era = 'legacy';

  public constructor(@inject(LegacyTransportOptions) private readonly options: LegacyTransportOptions) {}

  public admit(request: AdmissionRequest): AdmissionDecision {
    if (request.method !== 'initialize' || carriesNativeEnvelope(request.params)) return { kind: 'pass' };
    const params = request.params as
      | { protocolVersion?: unknown; clientInfo?: unknown; capabilities?: unknown }
      | undefined;
    if (typeof params?.protocolVersion !== 'string' || params.protocolVersion.length === 0) {
      return { kind: 'reject', code: -32602, message: 'initialize: params.protocolVersion must be a non-empty string' };
    }
    const served = this.options.protocolVersions;
    const protocolVersion = served.includes(params.protocolVersion)
      ? params.protocolVersion
      : (served[0] ?? params.protocolVersion);
    const declared = params.capabilities;
    return {
      kind: 'open',
      protocolVersion,
      client: readClientIdentity(params.clientInfo),
      ...(typeof declared === 'object' && declared !== null && !Array.isArray(declared)
        ? { clientCapabilities: declared as Record<string, unknown> }
        : {}),
    };
  }

  public probe(): Record<string, unknown> {
    return {};
  }

  public open(request: AdmissionRequest, opening: AdmissionOpening, server: ServerDescription): EraConnection {
    return new LegacyConnection(request, opening, server);
  }

  public refuseUnadmitted(request: AdmissionRequest): AdmissionRejection | undefined {
    if (request.method === 'initialize') return undefined;
    return { kind: 'reject', code: -32600, message: `Send initialize first (got ${boundClientText(request.method)}).` };
  }
}
