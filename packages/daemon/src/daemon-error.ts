/**
 * Why a {@link DaemonError} was raised.
 *
 * - `invalidOption`: a command-line option or setting is out of range; the message names it.
 * - `alreadyRunning`: another daemon holds the lock for this socket / data dir.
 * - `unsafeSocketDir`: the socket directory is owned by another user or not private.
 */
export type DaemonErrorKind = 'invalidOption' | 'alreadyRunning' | 'unsafeSocketDir';

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
