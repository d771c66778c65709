import { type Contribution, defineContributionPoint } from '../di/contribution-point.js';

/**
 * The MCP generation a connection speaks, as the plugin that contributes it names it (the first
 * party's: `legacy`, `initialize`-based; `native`, per-request negotiation, 2026-07-28). It names
 * the era in logs and status only: what core does differently in an era is the connection's
 * {@link EraDialect}, never a comparison of this name.
 */
export type ProtocolEra = string;

/** The client as it names itself (`clientInfo`); used for the peer label. */
export interface ClientIdentity {
  readonly name: string;
  readonly version?: string;
  readonly title?: string;
}

/** A JSON-RPC request as an era sees it: its method and params, never its id. */
export interface AdmissionRequest {
  readonly method: string;
  readonly params?: unknown;
}

/** How the server behind a connection presents itself; an era builds its handshake and probe answers from it. */
export interface ServerDescription {
  readonly name: string;
  readonly version: string;
  readonly title?: string;
  readonly capabilities: Readonly<Record<string, unknown>>;
  readonly instructions?: string;
}

/** A JSON-RPC error the era answers a request with; the connection stays as it was. */
export interface AdmissionRejection {
  readonly kind: 'reject';
  readonly code: number;
  readonly message: string;
  readonly data?: unknown;
}

/** A valid first request of an era: the version it speaks and the client it names. */
export interface AdmissionOpening {
  readonly kind: 'open';
  readonly protocolVersion: string;
  readonly client: ClientIdentity | undefined;
  /** The capabilities the opening request declares, when the era can tell (what the server may announce in its answer depends on them). */
  readonly clientCapabilities?: Readonly<Record<string, unknown>>;
}

/**
 * - `pass`: not this era's request; ask the next era.
 * - `probe`: answer it without locking the era (`server/discover`), with {@link ProtocolAdmission.probe}.
 * - `open`: a valid first request of this era; lock the connection to it with {@link ProtocolAdmission.open}.
 * - `reject`: this era's request, but invalid; answer with this JSON-RPC error and lock nothing.
 */
export type AdmissionDecision =
  | { readonly kind: 'pass' }
  | { readonly kind: 'probe'; readonly clientCapabilities?: Readonly<Record<string, unknown>> }
  | AdmissionOpening
  | AdmissionRejection;

/**
 * What an opened connection does with a later request: serve it, answer it as a probe, hold it
 * open as a notification stream ({@link EraConnection.listen}), or refuse it.
 */
export type ConnectionCheck =
  | { readonly kind: 'serve' }
  | { readonly kind: 'probe' }
  | { readonly kind: 'listen' }
  | AdmissionRejection;

/** A JSON-RPC request id as the client chose it (kept verbatim: `7` is not `"7"`). */
export type ConnectionRequestId = string | number;

/** A notification the server side sends on a connection. */
export interface OutboundNotification {
  readonly method: string;
  readonly params?: Readonly<Record<string, unknown>>;
}

/** The answer that ends a notification stream gracefully (the stream request's result). */
export interface StreamEnding {
  readonly id: ConnectionRequestId;
  readonly result: Record<string, unknown>;
}

/** A message a new server behind an opened connection must receive, in order, before it serves. */
export interface ReplayMessage {
  /** `true`: a request (await its answer before the next message); `false`: a notification. */
  readonly request: boolean;
  /**
   * A request that opens a notification stream (native: `subscriptions/listen`): written without
   * waiting, as it is answered only when the stream ends; what comes on the stream is delivered
   * to the client as the connection's own notifications.
   */
  readonly stream?: true;
  readonly method: string;
  readonly params?: unknown;
}

/** A task as core's child server knows it, for an era to spell ({@link TaskDialect.spell}). */
export interface TaskReport {
  readonly taskId: string;
  readonly status: 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled';
  readonly statusMessage: string;
  /** When it was created and last changed, ISO 8601. */
  readonly createdAt: string;
  readonly lastUpdatedAt: string;
  /** How often the client is asked to poll it. */
  readonly pollIntervalMs: number;
}

/**
 * How the clients of an era ask for tasks and what its task answers look like (legacy: the
 * 2025-11-25 task augmentation; native: the 2026-07-28 tasks extension). Core runs the tasks; the
 * era words them.
 */
export interface TaskDialect {
  /** The `tasks/*` methods the era serves; any other is "method not found" (-32601). */
  readonly methods: readonly string[];
  /**
   * Whether a `tools/call` of a tool that can run as a task asks to (legacy: its `task` param;
   * native: the tasks extension in the request's client capabilities, `declared`).
   */
  requested(
    params: Readonly<Record<string, unknown>>,
    declared: Readonly<Record<string, unknown>> | undefined,
  ): boolean;
  /**
   * The refusal of task method `method` for a request whose client capabilities are `declared`
   * (native: -32021 without the tasks extension); `undefined` when it is served. Absent: all are.
   */
  refuse?(method: string, declared: Readonly<Record<string, unknown>> | undefined): AdmissionRejection | undefined;
  /**
   * Present: the server decides which calls become tasks (native): a run that ends within this many
   * milliseconds is answered with its result, not a task, and a call that cannot start with the
   * tool's error result. Absent: the client asked for a task (legacy), so it gets one at once, or an
   * invalid-params error when the call cannot start.
   */
  readonly resultWithinMs?: number;
  /** The task as the era spells it (legacy: with `ttl` and `pollInterval`; native: `ttlMs` and `pollIntervalMs`). */
  spell(task: TaskReport): Record<string, unknown>;
  /** The answer to a `tools/call` that started the task `task` (spelled) (legacy: `{ task }`; native: the task with `resultType: 'task'`). */
  created(task: Readonly<Record<string, unknown>>): Record<string, unknown>;
  /**
   * `true` (native): a task carries the tool's result once it ended, in `tasks/get` and in its status
   * notification, and a run that failed is a completed task whose result says `isError`; `false`
   * (legacy): the client asks for the result with `tasks/result`.
   */
  readonly carriesResult: boolean;
  /**
   * The notification that tells the client a task's status changed, the task (with its result when
   * it carries it) as params (legacy: `notifications/tasks/status`; native: `notifications/tasks`,
   * which the era delivers only to the streams naming the task).
   */
  readonly statusNotification: string;
  /**
   * `true` (native): `tasks/cancel` is answered with an empty acknowledgement, also for a task that
   * already ended; `false` (legacy): with the cancelled task, and a task that already ended is
   * refused -32602.
   */
  readonly acknowledgesCancel: boolean;
}

/**
 * What core's child server does differently in an era, beyond opening and shaping results: told
 * by behaviour, so that core never asks which era a connection speaks. Before a connection is open
 * (nothing is served then, but for a server connected without the era gate, as in core's own
 * specs) core speaks `sdkDialect`, the dialect of the revision the MCP SDK's server speaks by itself.
 */
export interface EraDialect {
  /**
   * Whether the server may send the client requests while it serves one: `true` (legacy) asks the
   * person with `elicitation/create`; `false` (native: a server sends no requests) asks through its
   * answers instead: an `input_required` result (SEP-2322) the client retries with the person's
   * answers, and a task's `inputRequests`, answered with `tasks/update`.
   */
  readonly sendsRequests: boolean;
  /** The JSON-RPC code of the resource-not-found error (legacy: -32002; native: -32602, SEP-2164). */
  readonly resourceNotFoundCode: number;
  readonly tasks: TaskDialect;
}

/**
 * One connection locked to an era: what it answered on opening, how it treats later requests and
 * results, what a server started behind it later must be told, and how core's child server speaks
 * on it ({@link dialect}).
 */
export interface EraConnection {
  readonly era: ProtocolEra;
  /** How the child server asks, answers tasks and refuses unknown resources on this connection. */
  readonly dialect: EraDialect;
  readonly protocolVersion: string;
  readonly client: ClientIdentity | undefined;
  /**
   * The answer to the opening request when the era gives it itself (legacy: the `initialize`
   * result with the negotiated version); `undefined` when the opening request is served like any
   * other (native).
   */
  readonly handshake: Readonly<Record<string, unknown>> | undefined;
  /**
   * The client notification that says it is ready (legacy: `notifications/initialized`); `undefined`
   * when the connection serves from the opening request on. A request sent before it, once the
   * opening request is answered, is served all the same (the specification allows it).
   */
  readonly readyOn: string | undefined;
  /** A later request: native validates every envelope again; legacy refuses a second `initialize` or a modern envelope. */
  check(request: AdmissionRequest): ConnectionCheck;
  /**
   * A result of this connection's request as the era sends it (native: `resultType` and serverInfo
   * in `_meta`; legacy: as is). An era that adds nothing returns `result` itself: a relay may then
   * pass the bytes it received on unchanged. Never mutates `result`.
   */
  shapeResult(result: Readonly<Record<string, unknown>>, server: ServerDescription): Record<string, unknown>;
  /**
   * `true` when {@link shapeResult} returns every result itself (legacy): a relay may then pass an
   * answer's bytes on without reading its result at all.
   */
  readonly resultsAsIs?: boolean;
  /**
   * The params of a request sent on this connection's behalf to a server behind it (native: the
   * opening envelope added; legacy: unchanged).
   */
  requestParams(params: Readonly<Record<string, unknown>> | undefined): Record<string, unknown> | undefined;
  /** What a new server behind this connection must receive first (legacy: the captured `initialize` and `notifications/initialized`; native: `server/discover` and a stream). */
  replay(): readonly ReplayMessage[];
  /**
   * How the server behind described itself in its `result` to a replayed request (legacy: the
   * `initialize` result; native: the `server/discover` result); `undefined` when that answer
   * does not describe it. Absent: the era learns nothing from answers.
   */
  describedBy?(message: ReplayMessage, result: unknown): ServerDescription | undefined;
  /**
   * The capabilities the client declares for `request` (native: its envelope; legacy: those of
   * `initialize`); absent or `undefined` when the era cannot tell.
   */
  clientCapabilities?(request: AdmissionRequest): Readonly<Record<string, unknown>> | undefined;
  /**
   * Opens the notification stream of a request {@link check} answered `listen` for (native:
   * `subscriptions/listen`), under its id: the notifications to send at once (native: the
   * acknowledgement), or the refusal (nothing opened). The request stays unanswered while the
   * stream is open.
   */
  listen?(
    id: ConnectionRequestId,
    request: AdmissionRequest,
    server: ServerDescription,
  ): readonly OutboundNotification[] | AdmissionRejection;
  /** The client cancelled request `id`: `true` when that closed one of this connection's streams (nothing to answer). */
  cancelled?(id: ConnectionRequestId): boolean;
  /**
   * A notification of the server as this era lets it reach the client: the notifications to send,
   * none when the era forbids it (native: a list change only on the streams that asked for it, tagged
   * with their id; a log message only for a request that asked for that level). `related`: the
   * requests it may belong to (the one known, or all in flight when the host cannot tell). Absent:
   * every notification is sent unchanged.
   */
  deliver?(notification: OutboundNotification, related: readonly AdmissionRequest[]): readonly OutboundNotification[];
  /** Closes every open stream; the answers that end them, to send before the connection closes. */
  endStreams?(): readonly StreamEnding[];
  /**
   * The resource URIs the client's open streams ask `notifications/resources/updated` for (native:
   * the `resourceSubscriptions` its `subscriptions/listen` streams were acknowledged with), sorted,
   * each once. Absent or empty: none (the legacy era's subscriptions are requests a host forwards).
   */
  watchedResources?(): readonly string[];
  /**
   * The task ids the client's open streams ask task status notifications for (native: the
   * `taskIds` its `subscriptions/listen` streams were acknowledged with), sorted, each once.
   * Absent or empty: none.
   */
  watchedTasks?(): readonly string[];
  /**
   * What gives a server behind this connection the client's resource subscriptions `uris` (legacy:
   * a `resources/subscribe` request for each; native: one `subscriptions/listen` stream naming them
   * all, and the watched `taskIds`), with `meta` added to each message's `_meta`. A host sends them
   * to every server it starts behind the connection after the first, and (native) a new stream
   * whenever {@link watchedResources} or {@link watchedTasks} changes. Absent: the era passes no
   * subscriptions on.
   */
  subscriptionReplay?(
    uris: readonly string[],
    meta: Readonly<Record<string, unknown>>,
    taskIds?: readonly string[],
  ): readonly ReplayMessage[];
}

/**
 * One protocol era: recognises the first request of the era, answers its probes, opens a
 * connection on it, and refuses what nobody admitted in its own terms.
 *
 * Guarantees expected of implementations: pure (no I/O; no recovery, daemon or runtime work
 * started by a decision); `pass` for anything of another era.
 */
export interface ProtocolAdmission extends Contribution {
  readonly specificationVersion: 'v2';
  readonly era: ProtocolEra;
  admit(request: AdmissionRequest): AdmissionDecision;
  /** The answer to a request this era decided is a probe. */
  probe(request: AdmissionRequest, server: ServerDescription): Record<string, unknown>;
  /** The connection a request this era admitted with `opening` opens. */
  open(request: AdmissionRequest, opening: AdmissionOpening, server: ServerDescription): EraConnection;
  /**
   * Before any era opened, a request every era passed: this era's refusal of it, or `undefined`
   * when it has none (the next era is asked; without any, the answer is "method not found").
   */
  refuseUnadmitted(request: AdmissionRequest): AdmissionRejection | undefined;
}

/** The point plugins contribute {@link ProtocolAdmission}s to (listed in `contributionPoints`). */
export const protocolAdmissionPoint = defineContributionPoint<ProtocolAdmission>('core', 'ProtocolAdmission', ['v2']);

/** The token a plugin binds its ProtocolAdmission to. */
export const ProtocolAdmission = protocolAdmissionPoint.token;

/** `{ name, version?, title? }` from a `clientInfo` value when it carries a string name; else `undefined`. */
export function readClientIdentity(value: unknown): ClientIdentity | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const { name, version, title } = value as Record<string, unknown>;
  if (typeof name !== 'string' || name.length === 0) return undefined;
  return {
    name,
    ...(typeof version === 'string' ? { version } : {}),
    ...(typeof title === 'string' ? { title } : {}),
  };
}
