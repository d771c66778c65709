/**
 * Why a {@link RuntimedProtocolError} was raised.
 *
 * - `daemonUnavailable`: no daemon answers (no socket, refused, closed, timed out, shutting down);
 *   transient, worth retrying later.
 * - `unsafeSocket`: the socket belongs to another user; we refuse to talk to it.
 * - `protocolViolation`: the other end broke the wire protocol (bad preamble, frame or channel).
 * - `messageTooLarge`: a message is over the size cap of one daemon message (the text names both).
 * - `daemonRefused`: the daemon answered a request with an error frame; `code` is its machine code
 *   (`notebook_unavailable`, `cell_not_found`, `bad_request`, `file_conflict`, …).
 */
export type RuntimedProtocolErrorKind =
  | 'daemonUnavailable'
  | 'unsafeSocket'
  | 'protocolViolation'
  | 'messageTooLarge'
  | 'daemonRefused';

/** Options of a {@link RuntimedProtocolError}: the cause, and the daemon's (or the OS's) error code. */
export interface RuntimedProtocolErrorOptions extends ErrorOptions {
  readonly code?: string;
}

const brand: unique symbol = Symbol.for('@nteract-mcp/runtimed-protocol/RuntimedProtocolError');

/**
 * The one error class of `@nteract-mcp/runtimed-protocol`. Clients translate it into their own
 * errors at their boundary (the local-daemon plugin into `CoreError`); the daemon answers it as an
 * error frame. Use {@link RuntimedProtocolError.is} rather than `instanceof`.
 */
export class RuntimedProtocolError extends Error {
  public readonly [brand] = true as const;
  /** The daemon's error code, or the OS code of a failed connect (`ENOENT`, `ECONNREFUSED`, …). */
  public readonly code: string | undefined;

  public constructor(
    public readonly kind: RuntimedProtocolErrorKind,
    message: string,
    options?: RuntimedProtocolErrorOptions,
  ) {
    super(message, options);
    this.name = 'RuntimedProtocolError';
    this.code = options?.code;
  }

  /** True for a `RuntimedProtocolError` from any copy of this package, optionally of the given kind. */
  public static is(value: unknown, kind?: RuntimedProtocolErrorKind): value is RuntimedProtocolError {
    if (typeof value !== 'object' || value === null) return false;
    if ((value as { [brand]?: unknown })[brand] !== true) return false;
    return kind === undefined || (value as RuntimedProtocolError).kind === kind;
  }
}
