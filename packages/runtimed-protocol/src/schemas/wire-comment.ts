import * as z from 'zod';

/**
 * Comments on cells: threads of messages a room keeps beside its notebook (never in its cells or
 * metadata: the saved `.ipynb` is the same with or without them). A thread is on one cell, and
 * optionally on a range of its source (character offsets, with the text quoted as it was, so a
 * later edit can say the range moved or vanished). Its author and every message's are the peer
 * labels of the peers that wrote them (from their handshakes), never a request's field.
 *
 * A peer that reads them declares `comments` in its handshake; the daemon's `connected` says
 * `comments: true` when it keeps them (a daemon before comments says nothing: a client then does
 * not send these requests, which that daemon would answer `unknown_request` and close), and sends
 * the `comment_thread` broadcast only to the peers that declared them.
 */

/** The most characters of one message. */
export const maxCommentTextLength = 4000;
/** The most threads of one notebook. */
export const maxCommentThreads = 200;
/** The most messages of one thread (its first included). */
export const maxCommentMessages = 100;
/** The most characters of all the messages of one notebook. */
export const maxCommentCharacters = 1_000_000;

const commentText = z
  .string({ error: "Field 'text' must be a string" })
  .refine((text) => text.trim().length > 0, { error: "Field 'text' must not be blank" })
  .refine((text) => text.length <= maxCommentTextLength, {
    error: `Field 'text' must be at most ${maxCommentTextLength} characters`,
  });
const threadId = z.string().min(1, { error: "Field 'thread_id' must be a non-empty string" });
const offset = z.int({ error: 'A range offset must be a non-negative integer' }).nonnegative();
const idempotencyKey = z.string().nullish();

/** A range of a cell's source as asked: `start` to `end` (exclusive), in characters. */
export const wireCommentRangeRequestSchema = z
  .object({ start: offset, end: offset })
  .refine((range) => range.end > range.start, { error: "Field 'range' must have 'end' after 'start'" });

/**
 * The range a thread is on: where it was (`start`, `end`, the `quote` it held then), and where it
 * is in the cell's source now: `intact` (the quote is still there), `moved` (the quote is found
 * elsewhere: `now_start`, `now_end`) or `vanished` (the quote is no longer in the source, or the
 * cell is gone).
 */
export const wireCommentRangeSchema = z.object({
  start: offset,
  end: offset,
  quote: z.string(),
  state: z.enum(['intact', 'moved', 'vanished']),
  now_start: offset.optional(),
  now_end: offset.optional(),
});
export type WireCommentRange = z.infer<typeof wireCommentRangeSchema>;

export const wireCommentMessageSchema = z.object({
  id: z.string().min(1),
  /** The peer label of the peer that wrote it (`human:<name>`, `agent:<client>:<session>`). */
  author: z.string().min(1),
  text: z.string(),
  /** ISO 8601. */
  at: z.string().min(1),
});
export type WireCommentMessage = z.infer<typeof wireCommentMessageSchema>;

export const wireCommentThreadSchema = z.object({
  id: z.string().min(1),
  cell_id: z.string().min(1),
  range: wireCommentRangeSchema.optional(),
  resolved: z.boolean(),
  resolved_by: z.string().optional(),
  resolved_at: z.string().optional(),
  /** The cell is no longer in the notebook: the thread is kept (an undo may bring the cell back). */
  orphaned: z.boolean(),
  messages: z.array(wireCommentMessageSchema).min(1),
});
export type WireCommentThread = z.infer<typeof wireCommentThreadSchema>;

/** The comment requests of the `notebook` channel (see `wire-notebook-request.ts`). */
export const wireCommentRequestSchemas = {
  /** Starts a thread on `cell_id` (and `range` of its source) with its first message. */
  add_comment: z.object({
    type: z.literal('add_comment'),
    cell_id: z.string().min(1),
    text: commentText,
    range: wireCommentRangeRequestSchema.nullish(),
    idempotency_key: idempotencyKey,
  }),
  reply_comment: z.object({
    type: z.literal('reply_comment'),
    thread_id: threadId,
    text: commentText,
    idempotency_key: idempotencyKey,
  }),
  resolve_comment: z.object({ type: z.literal('resolve_comment'), thread_id: threadId }),
  reopen_comment: z.object({ type: z.literal('reopen_comment'), thread_id: threadId }),
  /** The notebook's threads (of `cell_id` only, when named), oldest first; resolved ones only with `include_resolved`. */
  list_comments: z.object({
    type: z.literal('list_comments'),
    cell_id: z.string().min(1).nullish(),
    include_resolved: z.boolean().nullish(),
  }),
} as const;

/** The answers of the comment requests. */
export const wireCommentAnswerSchemas = {
  add_comment: z.object({ thread: wireCommentThreadSchema }),
  reply_comment: z.object({ thread: wireCommentThreadSchema }),
  resolve_comment: z.object({ thread: wireCommentThreadSchema }),
  reopen_comment: z.object({ thread: wireCommentThreadSchema }),
  /** `total`: the notebook's threads, resolved ones included; `resolved`: how many of them are resolved. */
  list_comments: z.object({
    threads: z.array(wireCommentThreadSchema),
    total: z.int().nonnegative(),
    resolved: z.int().nonnegative(),
  }),
} as const;

/** What happened to a thread, as the `comment_thread` broadcast says. */
export const wireCommentActions = ['added', 'replied', 'resolved', 'reopened'] as const;
export type WireCommentAction = (typeof wireCommentActions)[number];

/**
 * A thread changed: the thread as it is now, what was done to it and by which peer. Sent to every
 * peer that declared `comments`, the one that made the change too (its answer carried the thread).
 */
export const wireCommentThreadEventSchema = z.object({
  event: z.literal('comment_thread'),
  action: z.enum(wireCommentActions),
  peer_id: z.string(),
  peer_label: z.string(),
  thread: wireCommentThreadSchema,
});
export type WireCommentThreadEvent = z.infer<typeof wireCommentThreadEventSchema>;
