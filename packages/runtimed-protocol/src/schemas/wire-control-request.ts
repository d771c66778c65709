import * as z from 'zod';
import { wireClientContextSchema } from './wire-client-context.js';

/** The requests of the `control` channel. */
export const wireControlRequestTypes = [
  'ping',
  'get_daemon_info',
  'list_rooms',
  'list_kernels',
  'shutdown_notebook',
  'subscribe',
  'shutdown_daemon',
  'get_page',
  'rotate_page_token',
] as const;
export type WireControlRequestType = (typeof wireControlRequestTypes)[number];

/** Each control request's fields (the `id` is the connection's business, see {@link wireRequestEnvelopeSchema}). */
export const wireControlRequestSchemas = {
  ping: z.object({ type: z.literal('ping') }),
  get_daemon_info: z.object({ type: z.literal('get_daemon_info') }),
  list_rooms: z.object({ type: z.literal('list_rooms') }),
  /** The Jupyter kernelspecs installed where the daemon runs (see `wireKernelspecSchema`), as `client` would run them. */
  list_kernels: z.object({ type: z.literal('list_kernels'), client: wireClientContextSchema.optional() }),
  shutdown_notebook: z.object({ type: z.literal('shutdown_notebook'), notebook_id: z.string().min(1) }),
  /** Streams daemon events (`type: 'event'` frames) on this connection from now on. */
  subscribe: z.object({ type: z.literal('subscribe') }),
  /** The daemon saves every room, stops its kernels and exits. */
  shutdown_daemon: z.object({ type: z.literal('shutdown_daemon') }),
  /**
   * Where the daemon's web page is, and an address that opens it once (the index, or the page of
   * `notebook_id`): for the user who asked (the socket is theirs only).
   */
  get_page: z.object({ type: z.literal('get_page'), notebook_id: z.string().min(1).optional() }),
  /** The page gets a new token: every page session and launch address so far stops working. */
  rotate_page_token: z.object({ type: z.literal('rotate_page_token') }),
} as const satisfies Record<WireControlRequestType, z.ZodType>;

export const wireControlRequestSchema = z.discriminatedUnion('type', [
  wireControlRequestSchemas.ping,
  wireControlRequestSchemas.get_daemon_info,
  wireControlRequestSchemas.list_rooms,
  wireControlRequestSchemas.list_kernels,
  wireControlRequestSchemas.shutdown_notebook,
  wireControlRequestSchemas.subscribe,
  wireControlRequestSchemas.shutdown_daemon,
  wireControlRequestSchemas.get_page,
  wireControlRequestSchemas.rotate_page_token,
]);
export type WireControlRequest = z.infer<typeof wireControlRequestSchema>;

/** What every request carries: a numeric `id` (echoed by its answer) and a string `type`. */
export const wireRequestEnvelopeSchema = z.looseObject({ id: z.number(), type: z.string() });
