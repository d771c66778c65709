/**
 * Why a {@link DaemonError} was raised.
 *
 * - `invalidOption`: a command-line option or setting is out of range; the message names it.
 * - `alreadyRunning`: another daemon holds the lock for this socket / data dir.
 * - `unsafeSocketDir`: the socket directory is owned by another user or not private.
 * - `notebookLoadFailed`: a notebook file could not be parsed; the file is left untouched.
 * - `notebookUnavailable`: attach-only admission refused an id (nothing was created).
 * - `cellNotFound`: a request named a cell the document does not have.
 * - `badRequest`: a request is malformed or contradicts the document (the message says how).
 * - `pathAlreadyOpen`: a save names a path another room owns.
 * - `noPath`: an untitled notebook was saved without a path.
 * - `runtimeUnavailable`: execution was asked of a room whose runtime cannot run code.
 * - `idempotencyConflict`: an idempotency key was reused for a different operation.
 * - `kernelUnavailable`: no kernelspec and no interpreter that can import ipykernel was found; the
 *   message says what to install.
 * - `kernelStartFailed`: a kernel process could not be launched, exited during startup, or did not
 *   answer `kernel_info_request` in time; the message carries the tail of its stderr.
 * - `kernelDied`: the kernel process exited without being asked to (`restart()` starts a new one).
 * - `kernelShutdown`: the kernel was shut down on purpose; it cannot be used any more.
 * - `fileReadOnly`: the notebook's file is read-only (no write permission bit): it is left as it is.
 * - `saveFailed`: writing the notebook's file failed; the message says what the room kept.
 * - `fileConflict`: the notebook's file was changed by another program while the room had unsaved
 *   edits; the message says where the room's version was saved and how to go on.
 * - `notDurable`: an edit was applied but neither the journal nor a save could make it durable.
 * - `staleCell`: a request named an `expected_version` its cell no longer has; nothing changed. The
 *   message says who changed the cell and shows its source now.
 * - `undoRefused`: an `undo` cannot revert what was asked (nothing of the peer's to undo, or another
 *   peer changed the cell since); nothing changed. The message says why.
 */
export type DaemonErrorKind =
  | 'invalidOption'
  | 'alreadyRunning'
  | 'unsafeSocketDir'
  | 'notebookLoadFailed'
  | 'notebookUnavailable'
  | 'cellNotFound'
  | 'badRequest'
  | 'pathAlreadyOpen'
  | 'noPath'
  | 'runtimeUnavailable'
  | 'idempotencyConflict'
  | 'kernelUnavailable'
  | 'kernelStartFailed'
  | 'kernelDied'
  | 'kernelShutdown'
  | 'fileConflict'
  | 'saveFailed'
  | 'fileReadOnly'
  | 'notDurable'
  | 'staleCell'
  | 'undoRefused';

const daemonErrorBrand: unique symbol = Symbol.for('@nteract-mcp/daemon/DaemonError');

/** The one error class of `@nteract-mcp/daemon`. Use {@link DaemonError.is}, not `instanceof`. */
export class DaemonError extends Error {
  public readonly [daemonErrorBrand] = true as const;

  public constructor(
    public readonly kind: DaemonErrorKind,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'DaemonError';
  }

  public static is(value: unknown, kind?: DaemonErrorKind): value is DaemonError {
    if (typeof value !== 'object' || value === null) return false;
    if ((value as { [daemonErrorBrand]?: unknown })[daemonErrorBrand] !== true) return false;
    return kind === undefined || (value as DaemonError).kind === kind;
  }
}
