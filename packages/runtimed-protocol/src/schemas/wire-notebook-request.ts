import * as z from 'zod';
import { wireCellTypeSchema } from './wire-cell.js';
import { wireCommentRequestSchemas } from './wire-comment.js';
import { wireInputReplyRequestSchema } from './wire-input-request.js';

/**
 * The requests of the `notebook` channel. `leave` is a peer's goodbye before it closes the
 * connection on purpose (answer `{left: true}`, then the daemon ends the connection): the room then
 * keeps its kernel for the normal keep-alive. A connection that ends without `leave` is a vanished
 * peer (a crashed client), for which the kernel is kept longer so the client can come back to it.
 */
export const wireNotebookRequestTypes = [
  'get_cells',
  'get_cell',
  'get_runtime',
  'insert_cell',
  'update_cell',
  'delete_cell',
  'move_cell',
  'clear_outputs',
  'execute_cell',
  'get_execution',
  'run_code',
  'start_code',
  'cancel_execution',
  'interrupt',
  'restart_kernel',
  'save',
  'get_changes',
  'undo',
  'input_reply',
  'add_comment',
  'reply_comment',
  'resolve_comment',
  'reopen_comment',
  'list_comments',
  'leave',
] as const;
export type WireNotebookRequestType = (typeof wireNotebookRequestTypes)[number];

const cellId = z.string().min(1);
/** Mutations may carry one: a repeated key answers the first result without applying again. */
const idempotencyKey = z.string().nullish();
const indexMessage = "Field 'index' must be a non-negative integer";
/**
 * A request on one cell may name the cell's `version` it was written against: refused
 * (`stale_cell`, nothing changed) when the cell has changed since.
 */
const expectedVersion = z.string().min(1).nullish();
/**
 * The cell's `version` the asking peer last saw: the answer says (`replaced`) when the request
 * replaces a change another peer made since.
 */
const seenVersion = z.string().min(1).nullish();

/** Each notebook request's fields (the `id` is the connection's business). */
export const wireNotebookRequestSchemas = {
  get_cells: z.object({ type: z.literal('get_cells') }),
  get_cell: z.object({ type: z.literal('get_cell'), cell_id: cellId }),
  get_runtime: z.object({ type: z.literal('get_runtime') }),
  /** Appends without `index`; `cell_type` defaults to `code`, `source` to empty. */
  insert_cell: z.object({
    type: z.literal('insert_cell'),
    source: z.string().nullish(),
    cell_type: wireCellTypeSchema.nullish(),
    index: z.int({ error: indexMessage }).nonnegative({ error: indexMessage }).nullish(),
    idempotency_key: idempotencyKey,
  }),
  update_cell: z.object({
    type: z.literal('update_cell'),
    cell_id: cellId,
    source: z.string().nullish(),
    cell_type: wireCellTypeSchema.optional(),
    idempotency_key: idempotencyKey,
    expected_version: expectedVersion,
    seen_version: seenVersion,
  }),
  delete_cell: z.object({
    type: z.literal('delete_cell'),
    cell_id: cellId,
    idempotency_key: idempotencyKey,
    expected_version: expectedVersion,
    seen_version: seenVersion,
  }),
  /** `after_cell_id` `null` (or absent) moves the cell to the start. */
  move_cell: z.object({
    type: z.literal('move_cell'),
    cell_id: cellId,
    after_cell_id: z.string({ error: "Field 'after_cell_id' must be a string or null" }).nullish(),
    idempotency_key: idempotencyKey,
    expected_version: expectedVersion,
  }),
  clear_outputs: z.object({
    type: z.literal('clear_outputs'),
    cell_id: cellId,
    idempotency_key: idempotencyKey,
    expected_version: expectedVersion,
  }),
  /**
   * Answers at once (`queued`); progress arrives as `execution_output` and `execution_done`
   * broadcasts (`run_after`: see below). `allow_input`: the asking peer answers the code's `input()` (`input_request` /
   * `input_reply`, see `wire-input-request.ts`); without it `input()` raises in the kernel.
   */
  execute_cell: z.object({
    type: z.literal('execute_cell'),
    cell_id: cellId,
    idempotency_key: idempotencyKey,
    expected_version: expectedVersion,
    allow_input: z.boolean().nullish(),
    /**
     * Runs only when the execution it names ended `ok` (else it ends `aborted`, not run): a run of
     * several cells queued at once stops at the first that fails, whoever follows it.
     */
    run_after: z.string().min(1).nullish(),
  }),
  /**
   * With `outputs_page`: the answer carries one page of the execution's outputs read as one text
   * (output-shaping's `OutputsDocument`: `length` characters from `offset`, fewer when more would
   * take the escaped page past `budget_bytes`) instead of its outputs, so a reader of a large
   * output is sent what it reads, not all of it each time. A daemon before it answers the outputs.
   */
  get_execution: z.object({
    type: z.literal('get_execution'),
    execution_id: z.string().min(1),
    outputs_page: z
      .object({
        offset: z.int().nonnegative(),
        length: z.int().positive(),
        budget_bytes: z.int().positive(),
      })
      .nullish(),
  }),
  /**
   * Runs `source` in the room's kernel after the executions queued before it, without a cell: the
   * document, the kernel's history and execution count stay as they were. Answers when it is done.
   */
  run_code: z.object({ type: z.literal('run_code'), source: z.string() }),
  /**
   * A scratch run (as `run_code`) kept as an execution: answers at once (`queued`, with its
   * `execution_id`; its `cell_id` is `scratch`); `get_execution` and `cancel_execution` take the
   * id, and its end is journaled like a cell's. No broadcast: it is the asking peer's alone.
   * `allow_input` as with `execute_cell`.
   */
  start_code: z.object({ type: z.literal('start_code'), source: z.string(), allow_input: z.boolean().nullish() }),
  /**
   * Stops one execution and nothing else: a queued one is taken off the queue (it ends `aborted`),
   * a running one is interrupted (the kernel's interrupt), a finished one is left as it is.
   */
  cancel_execution: z.object({ type: z.literal('cancel_execution'), execution_id: z.string().min(1) }),
  interrupt: z.object({ type: z.literal('interrupt') }),
  restart_kernel: z.object({ type: z.literal('restart_kernel') }),
  /** To `path` (absolute, `.ipynb`), or to the file the notebook is bound to. */
  save: z.object({ type: z.literal('save'), path: z.string().nullish() }),
  /**
   * What the room's peers did after `since` (a cursor from an earlier answer; absent: everything
   * the room still keeps), oldest first.
   */
  get_changes: z.object({ type: z.literal('get_changes'), since: z.string().min(1).nullish() }),
  /**
   * Reverts the asking peer's (by its label) last `count` edits (default 1), newest first, each only
   * when no other peer changed that cell since; refused, changing nothing, otherwise.
   */
  undo: z.object({
    type: z.literal('undo'),
    count: z.int().min(1).max(50).nullish(),
    idempotency_key: idempotencyKey,
  }),
  input_reply: wireInputReplyRequestSchema,
  /** The comment requests: see `wire-comment.ts` (sent only to a daemon whose `connected` said `comments`). */
  ...wireCommentRequestSchemas,
  leave: z.object({ type: z.literal('leave') }),
} as const satisfies Record<WireNotebookRequestType, z.ZodType>;

export const wireNotebookRequestSchema = z.discriminatedUnion('type', [
  wireNotebookRequestSchemas.get_cells,
  wireNotebookRequestSchemas.get_cell,
  wireNotebookRequestSchemas.get_runtime,
  wireNotebookRequestSchemas.insert_cell,
  wireNotebookRequestSchemas.update_cell,
  wireNotebookRequestSchemas.delete_cell,
  wireNotebookRequestSchemas.move_cell,
  wireNotebookRequestSchemas.clear_outputs,
  wireNotebookRequestSchemas.execute_cell,
  wireNotebookRequestSchemas.get_execution,
  wireNotebookRequestSchemas.run_code,
  wireNotebookRequestSchemas.start_code,
  wireNotebookRequestSchemas.cancel_execution,
  wireNotebookRequestSchemas.interrupt,
  wireNotebookRequestSchemas.restart_kernel,
  wireNotebookRequestSchemas.save,
  wireNotebookRequestSchemas.get_changes,
  wireNotebookRequestSchemas.undo,
  wireNotebookRequestSchemas.input_reply,
  wireNotebookRequestSchemas.add_comment,
  wireNotebookRequestSchemas.reply_comment,
  wireNotebookRequestSchemas.resolve_comment,
  wireNotebookRequestSchemas.reopen_comment,
  wireNotebookRequestSchemas.list_comments,
  wireNotebookRequestSchemas.leave,
]);
export type WireNotebookRequest = z.infer<typeof wireNotebookRequestSchema>;
/** The request of one type. */
export type WireNotebookRequestOf<T extends WireNotebookRequestType> = z.infer<(typeof wireNotebookRequestSchemas)[T]>;
