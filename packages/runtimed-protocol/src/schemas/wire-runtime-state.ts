import * as z from 'zod';

/** The states of a room's kernel side. */
export const wireRuntimeStateNames = ['not_started', 'starting', 'ready', 'stopped', 'unavailable'] as const;

/** The kernel side of a room. `unavailable` carries the reason (e.g. no kernelspec with ipykernel). */
export const wireRuntimeStateSchema = z.object({
  state: z.enum(wireRuntimeStateNames),
  kernel_status: z.string().nullable(),
  reason: z.string().optional(),
});
export type WireRuntimeState = z.infer<typeof wireRuntimeStateSchema>;
