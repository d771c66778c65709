import * as z from 'zod';
import { wireRuntimeStateSchema } from './wire-runtime-state.js';

const notebookId = z.string().min(1);
const peerEvent = { notebook_id: notebookId, peer_label: z.string(), active_peers: z.int().nonnegative() };

/** What `subscribe` on the control channel streams; a `type: 'event'` frame carries one. */
export const wireDaemonEventSchema = z.discriminatedUnion('event', [
  z.object({ event: z.literal('room_opened'), notebook_id: notebookId }),
  z.object({ event: z.literal('room_closed'), notebook_id: notebookId }),
  z.object({ event: z.literal('peer_joined'), ...peerEvent }),
  /** `departure`: whether the peer sent `leave` first or its connection just ended. */
  z.object({ event: z.literal('peer_left'), ...peerEvent, departure: z.enum(['left', 'vanished']).optional() }),
  z.object({ event: z.literal('kernel_status'), notebook_id: notebookId, runtime: wireRuntimeStateSchema }),
  z.object({ event: z.literal('daemon_shutting_down') }),
]);
export type WireDaemonEvent = z.infer<typeof wireDaemonEventSchema>;
export type WireDaemonEventName = WireDaemonEvent['event'];
