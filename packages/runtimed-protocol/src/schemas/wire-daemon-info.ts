import { z } from 'zod';

/** Who the daemon is: `get_daemon_info`'s answer, and the body of the control channel's `hello`. */
export const wireDaemonInfoSchema = z.object({
  pid: z.int().positive(),
  /** RFC 3339, fixed for the life of the daemon process. */
  started_at: z.string().min(1),
  version: z.string(),
  protocol_version: z.int(),
});
export type WireDaemonInfo = z.infer<typeof wireDaemonInfoSchema>;

/** One entry of `list_rooms`. */
export const wireRoomInfoSchema = z.object({
  notebook_id: z.string().min(1),
  active_peers: z.int().nonnegative(),
  has_kernel: z.boolean(),
  kernel_status: z.string().nullable(),
  ephemeral: z.boolean(),
  notebook_path: z.string().nullable(),
  /** Set while the notebook's file was changed by another program under unsaved edits: what to do. */
  file_conflict: z.string().optional(),
  /** The directory the room's kernel runs in (its file's directory, or the creating client's). */
  working_dir: z.string().optional(),
  /** The program running the room's kernel (for Python, the interpreter), once one was started. */
  kernel_interpreter: z.string().optional(),
});
export type WireRoomInfo = z.infer<typeof wireRoomInfoSchema>;
