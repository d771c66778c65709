import { CoreError, type CoreErrorKind } from '@nteract-mcp/core';
import { RuntimedProtocolError } from '@nteract-mcp/runtimed-protocol';

/** What a daemon refusal code means to core; other refusals are `invalidRequest` with the daemon's code kept. */
const refusalKinds: Readonly<Record<string, CoreErrorKind>> = {
  notebook_unavailable: 'notebookUnavailable',
  cell_not_found: 'cellNotFound',
  stale_cell: 'staleCell',
  undo_refused: 'undoRefused',
};

/**
 * The one place where the daemon wire's errors become core's: a {@link RuntimedProtocolError}
 * turns into the {@link CoreError} of the same meaning (the daemon's code and the cause kept);
 * anything else is returned as it is. Pure.
 */
export function toCoreError(error: unknown): unknown {
  if (!RuntimedProtocolError.is(error)) return error;
  const kind: CoreErrorKind =
    error.kind === 'daemonRefused' ? (refusalKinds[error.code ?? ''] ?? 'invalidRequest') : error.kind;
  return new CoreError(kind, error.message, {
    cause: error,
    ...(error.code === undefined ? {} : { code: error.code }),
  });
}

/** Rejects with {@link toCoreError} of `error`: for `.catch()` on a daemon connection's promises. */
export function rethrowAsCoreError(error: unknown): never {
  throw toCoreError(error);
}

/**
 * Why a request to the daemon failed, as core names it: {@link toCoreError} of `error` when that is
 * a {@link CoreError}, else `daemonUnavailable` naming the request (the connection broke under it).
 */
export function requestFailure(requestType: string, error: unknown): CoreError {
  const converted = toCoreError(error);
  if (CoreError.is(converted)) return converted;
  return new CoreError('daemonUnavailable', `Request '${requestType}' failed: ${(error as Error).message}`, {
    cause: error,
  });
}

/** `undefined` for a `cellNotFound` failure (the cell is gone); any other failure is thrown again. */
export function absentWhenNotFound(error: unknown): undefined {
  if (CoreError.is(error, 'cellNotFound')) return undefined;
  throw error;
}
