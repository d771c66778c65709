import { boundClientText } from '@nteract-mcp/foundation';
import type {
  AdmissionRejection,
  AdmissionRequest,
  ConnectionRequestId,
  EraConnection,
  OutboundNotification,
  ProtocolAdmission,
  ReplayMessage,
  ServerDescription,
  StreamEnding,
} from './protocol-admission.js';

/** JSON-RPC "Method not found": the answer when no loaded era knows what to do with a first request. */
const methodNotFoundCode = -32601;
/** JSON-RPC "Internal error": the answer when an era failed deciding. */
const internalErrorCode = -32603;

export interface ProtocolEraGateOptions {
  /** An era threw while deciding; the gate went on without it (see {@link ProtocolEraGate}). */
  readonly onFault?: (eraId: string, error: unknown) => void;
}

/**
 * What the host does with one inbound request:
 * - `serve`: hand it to the server (`opened` when this request opened the connection);
 * - `answer`: answer it with `result` itself (the era's handshake answer, or a probe's);
 * - `listen`: it asks for a notification stream: open it with {@link ProtocolEraGate.listen} and
 *   keep the request unanswered while the stream is open;
 * - `refuse`: answer it with `error`.
 */
export type GateVerdict =
  | { readonly kind: 'serve'; readonly opened?: EraConnection }
  | { readonly kind: 'listen'; readonly opened?: EraConnection }
  | { readonly kind: 'answer'; readonly result: Record<string, unknown>; readonly opened?: EraConnection }
  | { readonly kind: 'refuse'; readonly error: Omit<AdmissionRejection, 'kind'> };

/**
 * The manager of the {@link ProtocolAdmission} point for one connection: asks the contributed eras,
 * in composition order, about each inbound request and keeps the era the first valid request
 * opened. Until then a probe locks nothing and a rejected request leaves the connection unopened.
 *
 * Guarantees: every request gets one verdict; once opened the era never changes; with no era
 * loaded every request is refused "method not found". A throwing era is isolated: its `admit` or
 * `refuseUnadmitted` counts as no opinion, a failed probe, opening or check is refused -32603
 * (nothing opened), a failed shaping sends the result as it is; each fault is reported to
 * `onFault`. Does no I/O. The server description may be a function of the name of the era that
 * presents it ({@link ProtocolAdmission.era}): it is asked again for every opening, probe and
 * shaping, so a host can present what it learned later, in that era (the proxy: its child's, as
 * the child described itself to that era); at an opening it is also given the capabilities the
 * opening request declares (when its era tells them), so the handshake may announce what only a
 * client that declared it gets.
 */
export class ProtocolEraGate {
  readonly #eras: readonly ProtocolAdmission[];
  readonly #server: (era: string, declared?: Readonly<Record<string, unknown>>) => ServerDescription;
  readonly #onFault: (eraId: string, error: unknown) => void;
  #connection: EraConnection | undefined;

  public constructor(
    eras: readonly ProtocolAdmission[],
    server: ServerDescription | ((era: string, declared?: Readonly<Record<string, unknown>>) => ServerDescription),
    options: ProtocolEraGateOptions = {},
  ) {
    this.#eras = eras;
    this.#server = typeof server === 'function' ? server : () => server;
    this.#onFault = options.onFault ?? (() => undefined);
  }

  /** The opened connection, once a request opened one. */
  public get connection(): EraConnection | undefined {
    return this.#connection;
  }

  public receive(request: AdmissionRequest): GateVerdict {
    const connection = this.#connection;
    if (connection) {
      const check = this.#guard(connection.era, () => connection.check(request));
      if (check === undefined) return this.#failed(connection.era);
      if (check.kind === 'serve' || check.kind === 'listen') return { kind: check.kind };
      if (check.kind === 'probe') {
        const declared = this.#guard(connection.era, () => connection.clientCapabilities?.(request));
        return this.#probe(this.#owner(connection.era), request, declared);
      }
      return refuse(check);
    }
    for (const era of this.#eras) {
      const decision = this.#guard(era.id, () => era.admit(request));
      if (decision === undefined || decision.kind === 'pass') continue;
      if (decision.kind === 'reject') return refuse(decision);
      if (decision.kind === 'probe') return this.#probe(era, request, decision.clientCapabilities);
      const opened = this.#guard(era.id, () =>
        era.open(request, decision, this.#server(era.era, decision.clientCapabilities)),
      );
      if (opened === undefined) return this.#failed(era.id);
      this.#connection = opened;
      if (opened.handshake !== undefined) return { kind: 'answer', result: { ...opened.handshake }, opened };
      // Served from its opening request on, the connection treats that request as any later one.
      const check = this.#guard(opened.era, () => opened.check(request));
      return { kind: check?.kind === 'listen' ? 'listen' : 'serve', opened };
    }
    for (const era of this.#eras) {
      const refusal = this.#guard(era.id, () => era.refuseUnadmitted(request));
      if (refusal !== undefined) return refuse(refusal);
    }
    return {
      kind: 'refuse',
      error: {
        code: methodNotFoundCode,
        message: `Method not found: ${boundClientText(request.method)} (no loaded protocol era serves it)`,
      },
    };
  }

  /** A result of a served request, as the opened era sends it; unchanged before opening (or when shaping fails). */
  public shapeResult(result: Record<string, unknown>): Record<string, unknown> {
    const connection = this.#connection;
    if (!connection) return result;
    return this.#guard(connection.era, () => connection.shapeResult(result, this.#server(connection.era))) ?? result;
  }

  /**
   * Opens the stream of a request answered `listen`, under its id: the notifications to send at
   * once, or the error to answer it with (nothing opened).
   */
  public listen(
    id: ConnectionRequestId,
    request: AdmissionRequest,
  ):
    | { readonly notifications: readonly OutboundNotification[] }
    | { readonly error: Omit<AdmissionRejection, 'kind'> } {
    const connection = this.#connection;
    const opened = connection?.listen
      ? this.#guard(connection.era, () => connection.listen?.(id, request, this.#server(connection.era)))
      : undefined;
    if (opened === undefined) return { error: this.#failedError(connection?.era ?? 'unknown') };
    if ('kind' in opened) {
      const { kind: _kind, ...error } = opened;
      return { error };
    }
    return { notifications: opened };
  }

  /** The client cancelled request `id`: `true` when that closed a stream (nothing to answer). */
  public cancelled(id: ConnectionRequestId): boolean {
    const connection = this.#connection;
    if (!connection?.cancelled) return false;
    return this.#guard(connection.era, () => connection.cancelled?.(id)) === true;
  }

  /**
   * A notification of the server, as the opened era lets it reach the client (see
   * {@link EraConnection.deliver}); unchanged before opening, with an era that says nothing, or
   * when delivering fails.
   */
  public deliver(
    notification: OutboundNotification,
    related: readonly AdmissionRequest[] = [],
  ): readonly OutboundNotification[] {
    const connection = this.#connection;
    if (!connection?.deliver) return [notification];
    return this.#guard(connection.era, () => connection.deliver?.(notification, related)) ?? [notification];
  }

  /** The capabilities the client declares for `request`, when the opened era can tell. */
  public clientCapabilities(request: AdmissionRequest): Readonly<Record<string, unknown>> | undefined {
    const connection = this.#connection;
    if (!connection?.clientCapabilities) return undefined;
    return this.#guard(connection.era, () => connection.clientCapabilities?.(request));
  }

  /** Closes every open stream; the answers that end them. */
  public endStreams(): readonly StreamEnding[] {
    const connection = this.#connection;
    if (!connection?.endStreams) return [];
    return this.#guard(connection.era, () => connection.endStreams?.()) ?? [];
  }

  /** The resource URIs the client's open streams watch (see {@link EraConnection.watchedResources}); none before opening. */
  public watchedResources(): readonly string[] {
    const connection = this.#connection;
    if (!connection?.watchedResources) return [];
    return this.#guard(connection.era, () => connection.watchedResources?.()) ?? [];
  }

  /** The task ids the client's open streams watch (see {@link EraConnection.watchedTasks}); none before opening. */
  public watchedTasks(): readonly string[] {
    const connection = this.#connection;
    if (!connection?.watchedTasks) return [];
    return this.#guard(connection.era, () => connection.watchedTasks?.()) ?? [];
  }

  /**
   * What gives a server behind the connection the client's resource subscriptions `uris` and
   * watched `taskIds` (see {@link EraConnection.subscriptionReplay}); nothing before opening, or
   * when the era has no way.
   */
  public subscriptionReplay(
    uris: readonly string[],
    meta: Readonly<Record<string, unknown>>,
    taskIds: readonly string[] = [],
  ): readonly ReplayMessage[] {
    const connection = this.#connection;
    if (!connection?.subscriptionReplay || (uris.length === 0 && taskIds.length === 0)) return [];
    return this.#guard(connection.era, () => connection.subscriptionReplay?.(uris, meta, taskIds)) ?? [];
  }

  #owner(era: string): ProtocolAdmission | undefined {
    return this.#eras.find((candidate) => candidate.era === era);
  }

  #probe(
    era: ProtocolAdmission | undefined,
    request: AdmissionRequest,
    declared: Readonly<Record<string, unknown>> | undefined,
  ): GateVerdict {
    const result = era ? this.#guard(era.id, () => era.probe(request, this.#server(era.era, declared))) : undefined;
    return result === undefined ? this.#failed(era?.id ?? 'unknown') : { kind: 'answer', result };
  }

  /** `run()`, or `undefined` (the fault reported) when it throws. */
  #guard<T>(eraId: string, run: () => T): T | undefined {
    try {
      return run();
    } catch (error) {
      this.#onFault(eraId, error);
      return undefined;
    }
  }

  #failed(eraId: string): GateVerdict {
    return { kind: 'refuse', error: this.#failedError(eraId) };
  }

  #failedError(eraId: string): Omit<AdmissionRejection, 'kind'> {
    return { code: internalErrorCode, message: `Internal error: the protocol era '${eraId}' failed on this request` };
  }
}

function refuse(rejection: AdmissionRejection): GateVerdict {
  const { kind: _kind, ...error } = rejection;
  return { kind: 'refuse', error };
}
