import * as z from 'zod';

/** Machine-readable reasons in error frames. */
export const runtimedErrorCodes = [
  'bad_preamble',
  'unsupported_protocol',
  'bad_frame',
  'oversized_frame',
  'oversized_message',
  'unknown_channel',
  'bad_request',
  'unknown_request',
  'notebook_unavailable',
  'load_failed',
  'path_already_open',
  'no_path',
  'cell_not_found',
  'stale_cell',
  'undo_refused',
  'runtime_unavailable',
  'idempotency_conflict',
  'execution_not_found',
  'file_conflict',
  'save_failed',
  'shutting_down',
  'internal',
] as const;
export type RuntimedErrorCode = (typeof runtimedErrorCodes)[number];

/**
 * An error answer. With an `id` it answers that request; without, it ends the connection. A
 * client reads any string `code` (a newer daemon may have more); the daemon sends a
 * {@link RuntimedErrorCode}.
 */
export const runtimedErrorFrameSchema = z.object({
  type: z.literal('error'),
  id: z.number().optional(),
  code: z.string(),
  message: z.string(),
});
export type RuntimedErrorFrame = z.infer<typeof runtimedErrorFrameSchema>;
