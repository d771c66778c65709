/**
 * Why a {@link CoreError} was raised. Every kind is a distinct path a caller may handle.
 *
 * - `invalidPluginId`: a plugin id is not a dotted lowercase name (`acme.git-rejoin`).
 * - `duplicatePluginId`: two plugins with the same id were given to one container.
 * - `unknownSpecificationVersion`: a contribution declares a `specificationVersion` its point
 *   does not know; the container refuses to build rather than call it with the wrong shape.
 * - `duplicateContributionId`: two contributions to one point share an id.
 * - `invalidContribution`: a contribution lacks an id or a specification version.
 * - `invalidPluginOptions`: a plugin factory was given options it cannot work with (the message
 *   names the option).
 * - `invalidTarget`: a notebook target (path, UUID, URL) could not be parsed; the message says
 *   what to pass instead.
 * - `unsupportedTarget`: the target parsed, but no loaded plugin handles its kind.
 * - `duplicateTargetKind`: two notebook backends given to one container handle the same kind.
 * - `unsupportedOperation`: the kind's plugin is loaded but cannot do this (yet); the message says
 *   what works instead.
 * - `invalidIncarnation`: a daemon identity (pid, start time) is malformed.
 * - `daemonUnavailable`: the daemon could not be reached; transient, worth retrying later.
 * - `daemonQueryFailed`: an identity query failed without proving the daemon is gone; callers
 *   must not treat it as loss.
 * - `notebookUnavailable`: the daemon definitively refused to attach a notebook id; do not retry.
 * - `cellNotFound`: a cell id does not exist in the notebook.
 * - `staleCell`: a change named a cell version the cell no longer has; nothing changed. The
 *   message says who changed the cell and shows its source now.
 * - `undoRefused`: an undo could not revert what was asked; nothing changed. The message says why.
 * - `handleClosed`: a notebook handle was used after its connection closed.
 * - `invalidRequest`: a port refused a request as invalid (e.g. saving an untitled notebook
 *   without a path); the message says what to change.
 * - `unsafeSocket`: the daemon socket belongs to another user; we refuse to talk to it.
 * - `protocolViolation`: the other end broke the daemon wire protocol (bad preamble, bad frame).
 * - `messageTooLarge`: a message is over a size limit (a daemon wire message over its cap, an MCP
 *   message over what the client accepts); the message names the size and the limit.
 * - `noSession`: a notebook tool was called with no active session; the message says how to
 *   reconnect (and why the last session was dropped, when known).
 * - `supersededActivation`: a newer connect/create replaced this one before it finished, or the
 *   active session changed while a tool was working on it.
 * - `documentNotReady`: the notebook is connected but still converging; reads may use the
 *   retained projection, edits and execution must wait.
 * - `runtimeNotReady`: the kernel is not ready (starting, stopped or unavailable; the message says).
 * - `localSyncFailed`: the connection to the notebook's room is lost; rejoin is automatic.
 * - `sourceDegraded`: the notebook's source could not be loaded (the daemon said why).
 * - `restartBudgetExhausted`: the proxy's restart breaker is open after repeated child failures;
 *   the message names the last exit and when the next attempt happens (or to call `reconnect`).
 * - `childStartFailed`: the child cannot run (missing binary, an exit classified `fatal`); it is
 *   not restarted by itself; the message names the exit and says to call `reconnect`.
 * - `childUnavailable`: no child came up in time, or the supervisor is stopped or not started.
 */
export type CoreErrorKind =
  | 'invalidPluginId'
  | 'duplicatePluginId'
  | 'unknownSpecificationVersion'
  | 'duplicateContributionId'
  | 'invalidContribution'
  | 'invalidPluginOptions'
  | 'invalidTarget'
  | 'unsupportedTarget'
  | 'duplicateTargetKind'
  | 'unsupportedOperation'
  | 'invalidIncarnation'
  | 'daemonUnavailable'
  | 'daemonQueryFailed'
  | 'notebookUnavailable'
  | 'cellNotFound'
  | 'staleCell'
  | 'undoRefused'
  | 'handleClosed'
  | 'invalidRequest'
  | 'unsafeSocket'
  | 'protocolViolation'
  | 'messageTooLarge'
  | 'noSession'
  | 'supersededActivation'
  | 'documentNotReady'
  | 'runtimeNotReady'
  | 'localSyncFailed'
  | 'sourceDegraded'
  | 'restartBudgetExhausted'
  | 'childStartFailed'
  | 'childUnavailable';

/** Options of a {@link CoreError}: the cause, and the daemon's machine-readable code when it answered one. */
export interface CoreErrorOptions extends ErrorOptions {
  readonly code?: string;
}

const coreErrorBrand: unique symbol = Symbol.for('@nteract-mcp/core/CoreError');

/**
 * The one error class of `@nteract-mcp/core`. It never travels on the MCP wire as is: the tool
 * boundary converts it to a tool error or JSON-RPC error in one place.
 *
 * Use {@link CoreError.is} rather than `instanceof`: two copies of the package (a plugin bundling
 * its own) produce distinct classes, but they share the brand.
 */
export class CoreError extends Error {
  public readonly [coreErrorBrand] = true as const;

  /** The remote party's own error code (e.g. the daemon's `path_already_open`), when there was one. */
  public readonly code: string | undefined;

  public constructor(
    public readonly kind: CoreErrorKind,
    message: string,
    options?: CoreErrorOptions,
  ) {
    super(message, options);
    this.name = 'CoreError';
    this.code = options?.code;
  }

  /** True for a `CoreError` from any copy of this package, optionally of the given kind. */
  public static is(value: unknown, kind?: CoreErrorKind): value is CoreError {
    if (typeof value !== 'object' || value === null) return false;
    if ((value as { [coreErrorBrand]?: unknown })[coreErrorBrand] !== true) return false;
    return kind === undefined || (value as CoreError).kind === kind;
  }
}
