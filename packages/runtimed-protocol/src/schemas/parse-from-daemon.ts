import type * as z from 'zod';
import { RuntimedProtocolError } from '../runtimed-protocol-error.js';
import { checkWire } from './check-wire.js';

/**
 * Reads a message the daemon sent (the client side): the typed value, or a
 * {@link RuntimedProtocolError} of kind `protocolViolation` whose message names `what` and the
 * field (`The daemon sent an invalid get_cells answer: Field 'cells[3].id' must be a string, got 7`).
 * Fields the schema does not name are dropped (a newer daemon may send more).
 */
export function parseFromDaemon<S extends z.ZodType>(schema: S, value: unknown, what: string): z.infer<S> {
  const checked = checkWire(schema, value);
  if (checked.ok) return checked.value;
  throw new RuntimedProtocolError('protocolViolation', `The daemon sent an invalid ${what}: ${checked.message}`);
}
