import * as z from 'zod';
import { wireCellSchema, wireCellSourceSchema } from './wire-cell.js';
import { wireCommentAnswerSchemas } from './wire-comment.js';
import { wireExecutionStateSchema } from './wire-execution-state.js';
import { wireInputReplyAnswerSchema } from './wire-input-request.js';
import type { WireNotebookRequestType } from './wire-notebook-request.js';
import { wireRuntimeStateSchema } from './wire-runtime-state.js';

const documentVersion = z.int().nonnegative();
/** A mutation's answer may carry one: something the agent must be told (e.g. journaled edits kept aside). */
const warning = z.string().optional();
/**
 * The request replaced a change another peer made after the `seen_version` it named: who, and the
 * cell's version it replaced.
 */
const replaced = z.object({ by: z.string(), version: z.string() }).optional();

/** What changed a cell in a room, by whom (a peer label), at which document version. */
export const wireCellChangeSchema = z.object({
  document_version: documentVersion,
  at: z.string(),
  by: z.string(),
  kind: z.enum(['inserted', 'edited', 'deleted', 'moved', 'cleared', 'ran']),
  cell_id: z.string().min(1),
  /** Where the cell is after it (inserted, moved). */
  index: z.int().nonnegative().optional(),
  /** How a run ended (ran). */
  status: z.string().optional(),
  /** Made by an undo of the peer's own earlier edit. */
  undo: z.literal(true).optional(),
});
export type WireCellChange = z.infer<typeof wireCellChangeSchema>;

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
  /**
   * The cell as the edit left it: whole (`cell`), or, to a peer whose handshake declared
   * `source_edits` and for an edit that kept the cell's type, its source fields (`cell_source`; the
   * rest of the cell is as that peer holds it). A replayed request is answered in the form its peer reads.
   */
  update_cell: z.union([
    z.object({ cell: wireCellSchema, document_version: documentVersion, warning, replaced }),
    z.object({ cell_source: wireCellSourceSchema, document_version: documentVersion, warning, replaced }),
  ]),
  delete_cell: z.object({ document_version: documentVersion, warning, replaced }),
  move_cell: z.object({ index: z.int().nonnegative(), document_version: documentVersion, warning }),
  clear_outputs: z.object({ cell: wireCellSchema, document_version: documentVersion, warning }),
  execute_cell: wireExecutionStateSchema.extend({ warning }),
  /** With `outputs_page` asked: `outputs` is empty and `outputs_page` the page (see the request). */
  get_execution: wireExecutionStateSchema.extend({
    outputs_page: z
      .object({
        offset: z.int().nonnegative(),
        length: z.int().nonnegative(),
        total_chars: z.int().nonnegative(),
        next_offset: z.int().nonnegative().optional(),
        note: z.string().optional(),
        text: z.string(),
      })
      .optional(),
  }),
  start_code: wireExecutionStateSchema,
  run_code: z.object({
    status: z.enum(['ok', 'error', 'aborted']),
    outputs: wireExecutionStateSchema.shape.outputs,
    /** Set when the code ran in a new kernel: why the one that ran earlier code is gone. */
    kernel_notice: z.string().optional(),
  }),
  /**
   * `cancelled`: what was done: `dequeued` (it never runs), `interrupted` (it ended after the
   * interrupt), `still_running` (interrupted, and it still runs some seconds later: the code ignores
   * the interrupt; only a restart stops it), or `none` (it had already finished). Daemons before
   * `still_running` answered `interrupted` then.
   */
  cancel_execution: z.object({
    execution_id: z.string().min(1),
    cancelled: z.enum(['dequeued', 'interrupted', 'still_running', 'none']),
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
  /**
   * `cursor` names this answer's end (give it as the next `since`); `complete` is false when changes
   * after `since` are no longer known (the room keeps the last few hundred; a daemon restart or a
   * reload from disk starts afresh), and `note` says which.
   */
  get_changes: z.object({
    cursor: z.string().min(1),
    changes: z.array(wireCellChangeSchema),
    complete: z.boolean(),
    note: z.string().optional(),
  }),
  /** What was reverted, newest first (each as the change it made now). */
  undo: z.object({ undone: z.array(wireCellChangeSchema), document_version: documentVersion }),
  input_reply: wireInputReplyAnswerSchema,
  ...wireCommentAnswerSchemas,
  leave: z.object({ left: z.literal(true) }),
} as const satisfies Record<WireNotebookRequestType, z.ZodType>;

/** The answer to a notebook request of type `T`. */
export type WireNotebookAnswer<T extends WireNotebookRequestType> = z.infer<(typeof wireNotebookAnswerSchemas)[T]>;
