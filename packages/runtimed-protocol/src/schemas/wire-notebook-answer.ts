import * as z from 'zod';
import { wireCellSchema } from './wire-cell.js';
import { wireExecutionStateSchema } from './wire-execution-state.js';
import type { WireNotebookRequestType } from './wire-notebook-request.js';
import { wireRuntimeStateSchema } from './wire-runtime-state.js';

const documentVersion = z.int().nonnegative();
/** A mutation's answer may carry one: something the agent must be told (e.g. journaled edits kept aside). */
const warning = z.string().optional();

/**
 * The fields of each notebook request's `ok` answer (the answer also carries `type: 'ok'` and the
 * request's `id`, which these schemas do not keep).
 */
export const wireNotebookAnswerSchemas = {
  get_cells: z.object({ document_version: documentVersion, cells: z.array(wireCellSchema) }),
  get_cell: z.object({ cell: wireCellSchema }),
  get_runtime: z.object({ runtime: wireRuntimeStateSchema }),
  insert_cell: z.object({
    cell: wireCellSchema,
    index: z.int().nonnegative(),
    document_version: documentVersion,
    warning,
  }),
  update_cell: z.object({ cell: wireCellSchema, document_version: documentVersion, warning }),
  delete_cell: z.object({ document_version: documentVersion, warning }),
  move_cell: z.object({ index: z.int().nonnegative(), document_version: documentVersion, warning }),
  clear_outputs: z.object({ cell: wireCellSchema, document_version: documentVersion, warning }),
  execute_cell: wireExecutionStateSchema.extend({ warning }),
  get_execution: wireExecutionStateSchema,
  run_code: z.object({
    status: z.enum(['ok', 'error', 'aborted']),
    outputs: wireExecutionStateSchema.shape.outputs,
    /** Set when the code ran in a new kernel: why the one that ran earlier code is gone. */
    kernel_notice: z.string().optional(),
  }),
  /** `cancelled`: what was done (`dequeued`, `interrupted`, or `none` for an execution already finished). */
  cancel_execution: z.object({
    execution_id: z.string().min(1),
    cancelled: z.enum(['dequeued', 'interrupted', 'none']),
  }),
  /**
   * `outcome`: the running execution ended after the interrupt (`interrupted`), nothing was running
   * (`nothing_running`: nothing sent), or it still runs a few seconds later (`still_running`: the
   * code ignores the interrupt; only a restart stops it). A daemon before `outcome` answers
   * `interrupted: true` alone.
   */
  interrupt: z.object({
    interrupted: z.boolean(),
    outcome: z.enum(['interrupted', 'nothing_running', 'still_running']).optional(),
  }),
  restart_kernel: z.object({ restarted: z.literal(true), runtime: wireRuntimeStateSchema }),
  save: z.object({ notebook_id: z.string().min(1), notebook_path: z.string().min(1) }),
  leave: z.object({ left: z.literal(true) }),
} as const satisfies Record<WireNotebookRequestType, z.ZodType>;

/** The answer to a notebook request of type `T`. */
export type WireNotebookAnswer<T extends WireNotebookRequestType> = z.infer<(typeof wireNotebookAnswerSchemas)[T]>;
