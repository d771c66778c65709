import * as z from 'zod';

/**
 * The contract of a kernel asking for a line of input (`input()`, `getpass()`) during an
 * execution: the daemon sends an `input_request` event to the peer that started the execution
 * (when it is gone, to a peer of the same label: the same agent after a restart of its server),
 * and that peer answers with an `input_reply` request. An execution allows it only when its
 * `execute_cell` said `allow_input: true`. The daemon gives the kernel an empty line when nobody
 * answers within its bound, or when the peer answers `cancelled`. A password's value is never
 * stored, journaled or logged by either side.
 */

/** Sent (a `type: 'broadcast'` frame, to one peer only): execution `execution_id` waits for a line. */
export const wireInputRequestEventSchema = z.object({
  event: z.literal('input_request'),
  execution_id: z.string().min(1),
  /** Names this request: the answer gives it back. */
  input_id: z.string().min(1),
  cell_id: z.string().min(1),
  prompt: z.string(),
  /** `getpass()`: the answer is a secret (never echoed, stored or logged). */
  password: z.boolean(),
});
export type WireInputRequestEvent = z.infer<typeof wireInputRequestEventSchema>;

/** The answer to an `input_request`: the line (`value`), or `cancelled` (the kernel gets an empty line). */
export const wireInputReplyRequestSchema = z.object({
  type: z.literal('input_reply'),
  execution_id: z.string().min(1),
  input_id: z.string().min(1),
  value: z.string().nullish(),
  cancelled: z.boolean().nullish(),
});

/** `accepted`: the kernel got it (false: the request was answered already, or is no longer waiting). */
export const wireInputReplyAnswerSchema = z.object({ accepted: z.boolean() });
