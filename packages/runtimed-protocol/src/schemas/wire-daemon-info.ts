import * as z from 'zod';
import { wireRoomConditionSchema } from './wire-room-condition.js';
import { wireRuntimeStateSchema } from './wire-runtime-state.js';

/** Who the daemon is: `get_daemon_info`'s answer, and the body of the control channel's `hello`. */
export const wireDaemonInfoSchema = z.object({
  pid: z.int().positive(),
  /** RFC 3339, fixed for the life of the daemon process. */
  started_at: z.string().min(1),
  version: z.string(),
  protocol_version: z.int(),
});
export type WireDaemonInfo = z.infer<typeof wireDaemonInfoSchema>;

/**
 * One entry of `list_rooms`. The fields from `peer_labels` on were added for `runtimed status`; they
 * are optional, so the answer of a daemon without them still reads.
 */
export const wireRoomInfoSchema = z.object({
  notebook_id: z.string().min(1),
  active_peers: z.int().nonnegative(),
  has_kernel: z.boolean(),
  kernel_status: z.string().nullable(),
  ephemeral: z.boolean(),
  notebook_path: z.string().nullable(),
  /** Set while the notebook's file was changed by another program under unsaved edits: what to do. */
  file_conflict: z.string().optional(),
  /** What the room's peers must know now (autosave failing, the file gone, …). */
  conditions: z.array(wireRoomConditionSchema).optional(),
  /** The labels of the peers in the room, in the order they joined. */
  peer_labels: z.array(z.string()).optional(),
  /** The same peers with where they are: the cell each is on and the cell its execution runs (or waits) in. */
  peers: z
    .array(z.object({ label: z.string(), cell_id: z.string().nullable(), running_cell_id: z.string().nullable() }))
    .optional(),
  /** The kernel side, as the room's peers see it. */
  runtime: wireRuntimeStateSchema.optional(),
  /** The kernelspec the notebook asks for (`metadata.kernelspec.name`, else `python3`). */
  kernel_name: z.string().optional(),
  /** The running kernel's process id. */
  kernel_pid: z.int().positive().optional(),
  /** The room's last write of its document (the file, the conflict copy or the untitled store); `null` before the first. */
  last_saved: z
    .object({
      /** RFC 3339. */
      at: z.string().min(1),
      path: z.string().min(1),
    })
    .nullable()
    .optional(),
  /** The directory the room's kernel runs in (its file's directory, or the creating client's). */
  working_dir: z.string().optional(),
  /** The program running the room's kernel (for Python, the interpreter), once one was started. */
  kernel_interpreter: z.string().optional(),
});
export type WireRoomInfo = z.infer<typeof wireRoomInfoSchema>;
