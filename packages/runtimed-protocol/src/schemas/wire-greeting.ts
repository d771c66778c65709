import * as z from 'zod';
import { wireCellSchema } from './wire-cell.js';
import { wireDaemonInfoSchema } from './wire-daemon-info.js';
import { wireRoomConditionSchema } from './wire-room-condition.js';
import { wireRuntimeStateSchema } from './wire-runtime-state.js';

/** The daemon's answer to a control handshake: who it is. */
export const wireControlHelloSchema = wireDaemonInfoSchema.extend({ type: z.literal('hello') });
export type WireControlHello = z.infer<typeof wireControlHelloSchema>;

/** The daemon's answer to a notebook handshake: the whole document, the runtime, and the daemon life. */
export const wireNotebookConnectedSchema = z.object({
  type: z.literal('connected'),
  notebook_id: z.string().min(1),
  notebook_path: z.string().nullable(),
  ephemeral: z.boolean(),
  document_version: z.int().nonnegative(),
  cells: z.array(wireCellSchema),
  runtime: wireRuntimeStateSchema,
  /** What the room's peers must know now (see the `conditions` broadcast); absent from an older daemon. */
  conditions: z.array(wireRoomConditionSchema).optional(),
  /** The kernel the notebook asks for (its `metadata.kernelspec.name`; for `create`, the one chosen). */
  kernel_name: z.string().optional(),
  peer_id: z.string().min(1),
  /** The daemon life this connection belongs to (its incarnation). */
  daemon_pid: z.int().positive(),
  daemon_started_at: z.string().min(1),
  /**
   * The daemon's blob directory, when it sends this peer references in place of large output
   * values (the handshake asked for `blob_references`): where their files are. Absent otherwise.
   */
  blob_dir: z.string().min(1).optional(),
  /**
   * The daemon keeps comment threads (see `wire-comment.ts`) and serves their requests. Absent from
   * a daemon before comments, which would answer them `unknown_request` and close the connection.
   */
  comments: z.literal(true).optional(),
});
export type WireNotebookConnected = z.infer<typeof wireNotebookConnectedSchema>;
