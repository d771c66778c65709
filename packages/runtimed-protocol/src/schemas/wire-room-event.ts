import * as z from 'zod';
import { wireCellSchema, wireCellSourceSchema, wireOutputSchema } from './wire-cell.js';
import { wireCommentThreadEventSchema } from './wire-comment.js';
import { wireFinalExecutionStatuses } from './wire-execution-state.js';
import { wireInputRequestEventSchema } from './wire-input-request.js';
import { wireRoomConditionSchema } from './wire-room-condition.js';
import { wireRuntimeStateSchema } from './wire-runtime-state.js';

const documentVersion = z.int().nonnegative();
const index = z.int().nonnegative();
const peerEvent = {
  peer_id: z.string(),
  peer_label: z.string(),
  active_peers: z.int().nonnegative(),
};

/**
 * What every output event of a running cell names: the document version the change made (the
 * next one: a peer that sees a gap reads the cell again), the execution, the cell, and `seq`, the
 * event's number among this execution's output events (from 1; `execution_done` says how many
 * there were, so a peer that missed one knows its copy of the outputs is short).
 */
const outputEvent = {
  document_version: documentVersion,
  execution_id: z.string().min(1),
  cell_id: z.string().min(1),
  seq: z.int().positive(),
};

/** The cell's output at `index` is now `output`: a new one (`index` = the count so far) or an updated display. */
export const wireOutputSetEventSchema = z.object({
  event: z.literal('output_set'),
  ...outputEvent,
  index,
  output: wireOutputSchema,
});

/**
 * The stream output at `index` is now its first `keep` characters followed by `text`: the text a
 * cell printed since the last event (several prints merged), with `\r` and `\b` applied (a
 * `keep` below the text's length rewrote the end of its last line: a progress bar stays one line).
 */
export const wireStreamAppendedEventSchema = z.object({
  event: z.literal('stream_appended'),
  ...outputEvent,
  index,
  keep: index,
  text: z.string(),
});

/** The cell's outputs were cleared (the code's `clear_output`). */
export const wireOutputsClearedEventSchema = z.object({ event: z.literal('outputs_cleared'), ...outputEvent });

/**
 * An output of a running execution, whole, as daemons before the output edits sent it (with a
 * `cell_updated` carrying every output so far). Read from such daemons only.
 */
export const wireExecutionOutputEventSchema = z.object({
  event: z.literal('execution_output'),
  execution_id: z.string().min(1),
  cell_id: z.string().min(1),
  output: wireOutputSchema,
});

/**
 * An execution finished: how it ended, its execution count and, when it ran in a new kernel, the
 * notice. Its outputs are not repeated: they are what its output events built, `output_events` of
 * them (a peer that saw fewer reads the execution with `get_execution`). `document_version` is the
 * version that set the cell's execution count (absent for a cell no longer in the notebook).
 * Daemons before the output edits sent `outputs` instead of `output_events`, and no version.
 */
export const wireExecutionDoneEventSchema = z.object({
  event: z.literal('execution_done'),
  execution_id: z.string().min(1),
  cell_id: z.string().min(1),
  status: z.enum(wireFinalExecutionStatuses),
  execution_count: z.number().nullable(),
  document_version: documentVersion.optional(),
  output_events: z.int().nonnegative().optional(),
  outputs: z.array(wireOutputSchema).optional(),
  kernel_notice: z.string().optional(),
  /**
   * Sent only to peers that read blob references: the run's outputs whose large values went to the
   * blob store as it ended, by index, each with references in place of those values. They are the
   * outputs the output events built (no change of the document): such a peer may hold the
   * references instead of its copies of the texts.
   */
  blob_outputs: z.array(z.object({ index, output: wireOutputSchema })).optional(),
});

/**
 * A cell's source was edited, and nothing else of it: its new source, `version` and `edited_by`
 * (see `wireCellSourceSchema`); its type is the one the peer holds (a copy of another type is out of
 * step: read the cell again), its outputs, count and metadata stay as the peer holds them. Sent in
 * place of `cell_updated` (the whole cell) to peers whose handshake declared `source_edits`.
 */
export const wireCellSourceSetEventSchema = z.object({
  event: z.literal('cell_source_set'),
  document_version: documentVersion,
  cell: wireCellSourceSchema,
});

/** What a room's peers are told when something changes; a `type: 'broadcast'` frame carries one. */
export const wireRoomEventSchema = z.discriminatedUnion('event', [
  z.object({ event: z.literal('cell_inserted'), document_version: documentVersion, index, cell: wireCellSchema }),
  z.object({ event: z.literal('cell_updated'), document_version: documentVersion, cell: wireCellSchema }),
  wireCellSourceSetEventSchema,
  z.object({ event: z.literal('cell_deleted'), document_version: documentVersion, cell_id: z.string().min(1) }),
  z.object({
    event: z.literal('cell_moved'),
    document_version: documentVersion,
    cell_id: z.string().min(1),
    index,
  }),
  z.object({ event: z.literal('runtime'), runtime: wireRuntimeStateSchema }),
  z.object({ event: z.literal('saved'), notebook_path: z.string().min(1) }),
  wireOutputSetEventSchema,
  wireStreamAppendedEventSchema,
  wireOutputsClearedEventSchema,
  wireExecutionOutputEventSchema,
  wireExecutionDoneEventSchema,
  wireInputRequestEventSchema,
  z.object({ event: z.literal('peer_joined'), ...peerEvent }),
  z.object({ event: z.literal('peer_left'), ...peerEvent }),
  /** A peer said which cell it is on (`null`: none); a person's page does, as they move between cells. */
  z.object({
    event: z.literal('presence'),
    peer_id: z.string(),
    peer_label: z.string(),
    cell_id: z.string().nullable(),
  }),
  /** The room's conditions changed: the whole list as it is now (empty: all is well again). */
  z.object({ event: z.literal('conditions'), conditions: z.array(wireRoomConditionSchema) }),
  /** Something happened that the room's peers should hear once (the file was reloaded, autosave works again, …). */
  z.object({ event: z.literal('notice'), message: z.string().min(1) }),
  /** A comment thread changed (sent only to peers that declared `comments`; see `wire-comment.ts`). */
  wireCommentThreadEventSchema,
]);
export type WireRoomEvent = z.infer<typeof wireRoomEventSchema>;
export type WireRoomEventName = WireRoomEvent['event'];

/** The room events this protocol version knows; a client ignores a broadcast of any other (a newer daemon's). */
export const wireRoomEventNames: ReadonlySet<string> = new Set<WireRoomEventName>([
  'cell_inserted',
  'cell_updated',
  'cell_source_set',
  'cell_deleted',
  'cell_moved',
  'runtime',
  'saved',
  'output_set',
  'stream_appended',
  'outputs_cleared',
  'execution_output',
  'execution_done',
  'input_request',
  'peer_joined',
  'peer_left',
  'presence',
  'conditions',
  'notice',
  'comment_thread',
]);

/** Why a room closed under its peers: the daemon stops (rejoin later), or the notebook was shut down. */
export const wireRoomCloseCodes = ['daemon_shutdown', 'notebook_shutdown'] as const;

/** Sent to a room's peers (then disconnected) when the room closes. */
export const wireRoomClosedSchema = z.object({
  type: z.literal('room_closed'),
  reason: z.string(),
  code: z.enum(wireRoomCloseCodes),
});
export type WireRoomClosed = z.infer<typeof wireRoomClosedSchema>;
