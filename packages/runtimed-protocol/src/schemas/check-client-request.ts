import type * as z from 'zod';
import { checkWire } from './check-wire.js';
import {
  type WireControlRequest,
  wireControlRequestSchemas,
  wireRequestEnvelopeSchema,
} from './wire-control-request.js';
import { type WireNotebookRequest, wireNotebookRequestSchemas } from './wire-notebook-request.js';

/**
 * What {@link checkClientRequest} found in one request frame:
 * - `malformed`: no numeric `id` or no string `type` (the daemon fails the connection, `bad_frame`);
 * - `unknown`: a `type` the channel does not have (`unknown_request`, then the close);
 * - `invalid`: a known type whose fields fail its schema (`bad_request` naming the field; the
 *   connection goes on);
 * - `ok`: the typed request (fields its schema does not name are dropped).
 */
export type ClientRequestCheck<R> =
  | { readonly kind: 'malformed' }
  | { readonly kind: 'unknown'; readonly id: number; readonly type: string }
  | {
      readonly kind: 'invalid';
      readonly id: number;
      readonly type: string;
      readonly field: string;
      readonly message: string;
    }
  | { readonly kind: 'ok'; readonly id: number; readonly request: R };

const schemasByChannel: Readonly<Record<'control' | 'notebook', Readonly<Record<string, z.ZodType>>>> = {
  control: wireControlRequestSchemas,
  notebook: wireNotebookRequestSchemas,
};

/** Checks a request frame a client sent on `channel` (the daemon side). Never throws. */
export function checkClientRequest(channel: 'control', frame: unknown): ClientRequestCheck<WireControlRequest>;
export function checkClientRequest(channel: 'notebook', frame: unknown): ClientRequestCheck<WireNotebookRequest>;
export function checkClientRequest(
  channel: 'control' | 'notebook',
  frame: unknown,
): ClientRequestCheck<WireControlRequest | WireNotebookRequest> {
  const envelope = checkWire(wireRequestEnvelopeSchema, frame);
  if (!envelope.ok) return { kind: 'malformed' };
  const { id, type } = envelope.value;
  const schemas = schemasByChannel[channel];
  if (!Object.hasOwn(schemas, type)) return { kind: 'unknown', id, type };
  const checked = checkWire(schemas[type] as z.ZodType, frame);
  if (!checked.ok) return { kind: 'invalid', id, type, field: checked.field, message: checked.message };
  return { kind: 'ok', id, request: checked.value as WireControlRequest | WireNotebookRequest };
}
