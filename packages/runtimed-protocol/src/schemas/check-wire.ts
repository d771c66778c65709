import type * as z from 'zod';
import { describeWireIssue, formatWirePath } from './describe-wire-issue.js';

/** What {@link checkWire} found: the typed value, or the first problem, naming its field. */
export type WireCheck<T> =
  | { readonly ok: true; readonly value: T }
  | {
      readonly ok: false;
      /** The field's path (`cells[3].id`); empty for the message itself. */
      readonly field: string;
      /** A sentence for a `bad_request` answer: `Missing required string field 'cell_id'`. */
      readonly message: string;
    };

/**
 * Checks a message against its schema. Never throws: a value the schema refuses comes back as
 * the first issue's sentence naming the field (the daemon answers it as `bad_request`; clients use
 * `parseFromDaemon`, which throws it as a `protocolViolation`). Fields the schema does not
 * name are dropped from the value (tolerated, not used).
 */
export function checkWire<S extends z.ZodType>(schema: S, value: unknown): WireCheck<z.infer<S>> {
  // Without parse options first: zod's compiled fast path is several times faster than a parse
  // with a per-parse error map, which only a refused value needs (to word its issues).
  const result = schema.safeParse(value);
  if (result.success) return { ok: true, value: result.data };
  const worded = schema.safeParse(value, { error: describeWireIssue });
  const issue = (worded.error ?? result.error).issues[0];
  return {
    ok: false,
    field: formatWirePath(issue?.path ?? []),
    message: issue?.message ?? 'The message is invalid',
  };
}
