import * as z from 'zod';
import { wireOutputSchema } from './wire-cell.js';

/** The execution statuses after which nothing changes any more. */
export const wireFinalExecutionStatuses = ['ok', 'error', 'aborted'] as const;
export type WireFinalExecutionStatus = (typeof wireFinalExecutionStatuses)[number];

/** Where an execution stands: the answer to `execute_cell` and `get_execution`. */
export const wireExecutionStateSchema = z.object({
  execution_id: z.string().min(1),
  cell_id: z.string().min(1),
  status: z.enum(['queued', 'running', ...wireFinalExecutionStatuses]),
  outputs: z.array(wireOutputSchema),
  execution_count: z.number().nullable(),
  /** Set when the execution ran (or was aborted) in a new kernel: what the agent must know. */
  kernel_notice: z.string().optional(),
});
export type WireExecutionState = z.infer<typeof wireExecutionStateSchema>;
