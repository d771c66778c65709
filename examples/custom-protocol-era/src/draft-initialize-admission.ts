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
import { injectable } from 'inversify';
import { DraftConnection } from './draft-connection.js';

/** The one protocol version of Acme's draft, as its clients send it in `initialize`. */
export const draftProtocolVersion = 'DRAFT-2027-01';

/**
 * Acme's draft era: it opens on an `initialize` whose `protocolVersion` is
 * {@link draftProtocolVersion}, and on nothing else. Any other request passes, for the other eras
 * to judge (an `initialize` of 2025-11-25 is the legacy era's); since the gate asks the eras in
 * the order they were composed, this plugin must come before the legacy era's, which would
 * otherwise take the draft's `initialize` and negotiate it down to 2025-11-25. The draft has no
 * probe. An `initialize` no era admitted is refused -32602 naming the draft's version (the
 * 2025-11-25 lifecycle's "unsupported protocol version" error). Deciding starts no work.
 */
@injectable()
export class DraftInitializeAdmission implements ProtocolAdmission {
  /** This contribution's id (dotted, unique in the container). */
  public readonly id = 'acme.draft.initialize';
  /** The version of the `ProtocolAdmission` contract it implements. */
  public readonly specificationVersion = 'v2';
  /** The era's name, in logs and status only. */
  public readonly era = 'acme.draft';

  /** `open` for an `initialize` of the draft's version; `pass` for anything else. */
  public admit(request: AdmissionRequest): AdmissionDecision {
    if (request.method !== 'initialize') return { kind: 'pass' };
    const params = request.params as { protocolVersion?: unknown; clientInfo?: unknown } | undefined;
    if (params?.protocolVersion !== draftProtocolVersion) return { kind: 'pass' };
    return { kind: 'open', protocolVersion: draftProtocolVersion, client: readClientIdentity(params.clientInfo) };
  }

  /** Never asked: {@link admit} answers no request `probe`. */
  public probe(): Record<string, unknown> {
    return {};
  }

  /** The connection the draft's `initialize` opens, answered with the server's description. */
  public open(request: AdmissionRequest, opening: AdmissionOpening, server: ServerDescription): EraConnection {
    return new DraftConnection(this.era, request, opening, server);
  }

  /**
   * An `initialize` no loaded era admitted: -32602 with the version the draft speaks and the one
   * asked for. Any other request: no refusal of its own (the next era's, or core's "method not found").
   */
  public refuseUnadmitted(request: AdmissionRequest): AdmissionRejection | undefined {
    if (request.method !== 'initialize') return undefined;
    const asked = (request.params as { protocolVersion?: unknown } | undefined)?.protocolVersion;
    const requested = typeof asked === 'string' ? boundClientText(asked) : null;
    return {
      kind: 'reject',
      code: -32602,
      message: `Unsupported protocol version ${requested ?? '(none)'}: the Acme draft era speaks ${draftProtocolVersion}.`,
      data: { supported: [draftProtocolVersion], requested },
    };
  }
}
