import type { RuntimedErrorCode } from '@nteract-mcp/runtimed-protocol';
import { DaemonError, type DaemonErrorKind } from '../daemon-error.js';

const errorCodes: Readonly<Record<DaemonErrorKind, RuntimedErrorCode>> = {
  invalidOption: 'bad_request',
  alreadyRunning: 'internal',
  unsafeSocketDir: 'internal',
  notebookLoadFailed: 'load_failed',
  notebookUnavailable: 'notebook_unavailable',
  cellNotFound: 'cell_not_found',
  badRequest: 'bad_request',
  pathAlreadyOpen: 'path_already_open',
  noPath: 'no_path',
  runtimeUnavailable: 'runtime_unavailable',
  idempotencyConflict: 'idempotency_conflict',
  kernelUnavailable: 'runtime_unavailable',
  kernelStartFailed: 'runtime_unavailable',
  kernelDied: 'runtime_unavailable',
  kernelShutdown: 'runtime_unavailable',
  fileConflict: 'file_conflict',
  saveFailed: 'save_failed',
  fileReadOnly: 'save_failed',
  notDurable: 'internal',
  staleCell: 'stale_cell',
  undoRefused: 'undo_refused',
};

/** The error frame for anything thrown while serving a request. */
export function errorFrame(error: unknown, id?: number): Record<string, unknown> {
  if (error instanceof RangeError) {
    // A client value nested thousands of levels deep overflowed the stack: the input's fault.
    return {
      type: 'error',
      ...(id === undefined ? {} : { id }),
      code: 'bad_request',
      message: 'The request is nested too deeply to handle.',
    };
  }
  if (DaemonError.is(error))
    return { type: 'error', ...(id === undefined ? {} : { id }), code: errorCodes[error.kind], message: error.message };
  return {
    type: 'error',
    ...(id === undefined ? {} : { id }),
    code: 'internal',
    message: (error as Error)?.message ?? String(error),
  };
}
