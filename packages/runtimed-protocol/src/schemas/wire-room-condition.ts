import * as z from 'zod';

/**
 * The kinds of condition a room reports today. A client shows the `message` of any kind, so a
 * newer daemon may add kinds without a client change; these names are what tests and status read.
 */
export const wireRoomConditionKinds = [
  /** Autosave (or the last save) of the notebook's file failed; edits are kept in the journal. */
  'autosave_failing',
  /** The notebook's file was deleted or moved away by another program. */
  'file_missing',
  /** The notebook's file is read-only: autosave leaves it as it is. */
  'file_read_only',
  /** The room's kernel could not be started. */
  'kernel_failed',
] as const;
export type WireRoomConditionKind = (typeof wireRoomConditionKinds)[number];

/**
 * Something about a room that its peers must know while it lasts (autosave failing, the file gone,
 * …): its kind, the sentence an agent is told, and since when (ISO 8601). A room's peers get the
 * whole list in the greeting and again in a `conditions` broadcast whenever it changes.
 */
export const wireRoomConditionSchema = z.object({
  kind: z.string().min(1),
  message: z.string().min(1),
  since: z.string().min(1),
});
export type WireRoomCondition = z.infer<typeof wireRoomConditionSchema>;
