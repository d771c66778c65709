import * as z from 'zod';
import type { WireControlRequestType } from './wire-control-request.js';
import { wireDaemonInfoSchema, wireRoomInfoSchema } from './wire-daemon-info.js';
import { wireKernelspecSchema } from './wire-kernelspec.js';

/**
 * The fields of each control request's `ok` answer (the answer also carries `type: 'ok'` and the
 * request's `id`, which these schemas do not keep).
 */
export const wireControlAnswerSchemas = {
  ping: z.object({ pong: z.literal(true), version: z.string(), protocol_version: z.int() }),
  get_daemon_info: wireDaemonInfoSchema,
  list_rooms: z.object({ rooms: z.array(wireRoomInfoSchema) }),
  list_kernels: z.object({ kernels: z.array(wireKernelspecSchema) }),
  shutdown_notebook: z.object({ found: z.boolean() }),
  subscribe: z.object({ subscribed: z.literal(true) }),
  shutdown_daemon: z.object({ stopping: z.literal(true) }),
  /**
   * `url`: the page's base address on 127.0.0.1 (`http://127.0.0.1:<port>/`), or `null` when this
   * daemon serves no page; `launch_url`: an address that opens the page once within an hour (its
   * code in the fragment), `null` likewise. `token`: what daemons before launch addresses sent
   * (append `?token=`); a daemon with `launch_url` sends none.
   */
  get_page: z.object({
    url: z.string().nullable(),
    launch_url: z.string().nullable().optional(),
    token: z.string().nullable().optional(),
  }),
  /** `rotated`: false when this daemon serves no page. */
  rotate_page_token: z.object({ rotated: z.boolean() }),
} as const satisfies Record<WireControlRequestType, z.ZodType>;

/** The answer to a control request of type `T`. */
export type WireControlAnswer<T extends WireControlRequestType> = z.infer<(typeof wireControlAnswerSchemas)[T]>;
