import type {
  AdmissionRejection,
  AdmissionRequest,
  EraConnection,
  ProtocolAdmission,
  ServerDescription,
} from './protocol-admission.js';

/** JSON-RPC "Method not found": the answer when no loaded era knows what to do with a first request. */
const methodNotFoundCode = -32601;

/**
 * What the host does with one inbound request:
 * - `serve`: hand it to the server (`opened` when this request opened the connection);
 * - `answer`: answer it with `result` itself (the era's handshake answer, or a probe's);
 * - `refuse`: answer it with `error`.
 */
export type GateVerdict =
  | { readonly kind: 'serve'; readonly opened?: EraConnection }
  | { readonly kind: 'answer'; readonly result: Record<string, unknown>; readonly opened?: EraConnection }
  | { readonly kind: 'refuse'; readonly error: Omit<AdmissionRejection, 'kind'> };

/**
 * The manager of the {@link ProtocolAdmission} point for one connection: asks the contributed eras,
 * in composition order, about each inbound request and keeps the era the first valid request
 * opened. Until then a probe locks nothing and a rejected request leaves the connection unopened.
 *
 * Guarantees: every request gets one verdict; once opened the era never changes; with no era
 * loaded every request is refused "method not found". Does no I/O.
 */
export class ProtocolEraGate {
  readonly #eras: readonly ProtocolAdmission[];
  readonly #server: ServerDescription;
  #connection: EraConnection | undefined;

  public constructor(eras: readonly ProtocolAdmission[], server: ServerDescription) {
    this.#eras = eras;
    this.#server = server;
  }

  /** The opened connection, once a request opened one. */
  public get connection(): EraConnection | undefined {
    return this.#connection;
  }

  public get server(): ServerDescription {
    return this.#server;
  }

  public receive(request: AdmissionRequest): GateVerdict {
    const connection = this.#connection;
    if (connection) {
      const check = connection.check(request);
      if (check.kind === 'serve') return { kind: 'serve' };
      if (check.kind === 'probe') return { kind: 'answer', result: this.#probe(connection.era, request) };
      return refuse(check);
    }
    for (const era of this.#eras) {
      const decision = era.admit(request);
      if (decision.kind === 'pass') continue;
      if (decision.kind === 'reject') return refuse(decision);
      if (decision.kind === 'probe') return { kind: 'answer', result: era.probe(request, this.#server) };
      const opened = era.open(request, decision, this.#server);
      this.#connection = opened;
      return opened.handshake === undefined
        ? { kind: 'serve', opened }
        : { kind: 'answer', result: { ...opened.handshake }, opened };
    }
    for (const era of this.#eras) {
      const refusal = era.refuseUnadmitted(request);
      if (refusal !== undefined) return refuse(refusal);
    }
    return {
      kind: 'refuse',
      error: {
        code: methodNotFoundCode,
        message: `Method not found: ${request.method} (no loaded protocol era serves it)`,
      },
    };
  }

  /** A result of a served request, as the opened era sends it; unchanged before opening. */
  public shapeResult(result: Record<string, unknown>): Record<string, unknown> {
    return this.#connection ? this.#connection.shapeResult(result, this.#server) : result;
  }

  #probe(era: string, request: AdmissionRequest): Record<string, unknown> {
    const owner = this.#eras.find((candidate) => candidate.era === era) ?? this.#eras[0];
    return owner ? owner.probe(request, this.#server) : {};
  }
}

function refuse(rejection: AdmissionRejection): GateVerdict {
  const { kind: _kind, ...error } = rejection;
  return { kind: 'refuse', error };
}
