import * as z from 'zod';
import { wireCellSchema, wireOutputSchema } from './wire-cell.js';
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

/** One output of a running execution, as the kernel produced it. */
export const wireExecutionOutputEventSchema = z.object({
  event: z.literal('execution_output'),
  execution_id: z.string().min(1),
  cell_id: z.string().min(1),
  output: wireOutputSchema,
});

/**
 * An execution finished, with its final state: the outputs as they ended (the `execution_output`
 * broadcasts were the changes on the way) and, when it ran in a new kernel, the notice. A peer
 * following the execution needs no `get_execution` read. `outputs` is absent only from daemons
 * before it was added (then read the state with `get_execution`).
 */
export const wireExecutionDoneEventSchema = z.object({
  event: z.literal('execution_done'),
  execution_id: z.string().min(1),
  cell_id: z.string().min(1),
  status: z.enum(wireFinalExecutionStatuses),
  execution_count: z.number().nullable(),
  outputs: z.array(wireOutputSchema).optional(),
  kernel_notice: z.string().optional(),
});

/** What a room's peers are told when something changes; a `type: 'broadcast'` frame carries one. */
export const wireRoomEventSchema = z.discriminatedUnion('event', [
  z.object({ event: z.literal('cell_inserted'), document_version: documentVersion, index, cell: wireCellSchema }),
  z.object({ event: z.literal('cell_updated'), document_version: documentVersion, cell: wireCellSchema }),
  z.object({ event: z.literal('cell_deleted'), document_version: documentVersion, cell_id: z.string().min(1) }),
  z.object({
    event: z.literal('cell_moved'),
    document_version: documentVersion,
    cell_id: z.string().min(1),
    index,
  }),
  z.object({ event: z.literal('runtime'), runtime: wireRuntimeStateSchema }),
  z.object({ event: z.literal('saved'), notebook_path: z.string().min(1) }),
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
]);
export type WireRoomEvent = z.infer<typeof wireRoomEventSchema>;
export type WireRoomEventName = WireRoomEvent['event'];

/** The room events this protocol version knows; a client ignores a broadcast of any other (a newer daemon's). */
export const wireRoomEventNames: ReadonlySet<string> = new Set<WireRoomEventName>([
  'cell_inserted',
  'cell_updated',
  'cell_deleted',
  'cell_moved',
  'runtime',
  'saved',
  'execution_output',
  'execution_done',
  'input_request',
  'peer_joined',
  'peer_left',
  'presence',
  'conditions',
  'notice',
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
