import {
  type AdmissionDecision,
  type AdmissionRequest,
  type ProtocolAdmission,
  readClientIdentity,
} from '@nteract-mcp/core';
import { inject, injectable } from 'inversify';
import { LegacyTransportOptions } from './legacy-transport-options.js';

/**
 * Opens a legacy lifecycle on `initialize`. The version is negotiated the legacy way: the
 * client's version when served, else the newest served one (the client then decides).
 * `clientInfo` becomes the identity used for the peer label.
 */
@injectable()
export class InitializeAdmission implements ProtocolAdmission {
  public readonly id = 'transport-legacy.initialize';
  public readonly specificationVersion = 'v1';
  public readonly era = 'legacy';

  public constructor(@inject(LegacyTransportOptions) private readonly options: LegacyTransportOptions) {}

  public admit(request: AdmissionRequest): AdmissionDecision {
    if (request.method !== 'initialize') return { kind: 'pass' };
    const params = request.params as { protocolVersion?: unknown; clientInfo?: unknown } | undefined;
    if (typeof params?.protocolVersion !== 'string' || params.protocolVersion.length === 0) {
      return { kind: 'reject', code: -32602, message: 'initialize: params.protocolVersion must be a non-empty string' };
    }
    const served = this.options.protocolVersions;
    const protocolVersion = served.includes(params.protocolVersion)
      ? params.protocolVersion
      : (served[0] ?? params.protocolVersion);
    return { kind: 'open', protocolVersion, client: readClientIdentity(params.clientInfo) };
  }
}
