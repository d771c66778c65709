import type { ReaperSettings } from '../room/room-catalog.js';
import type { RoomSettings } from '../room/room-settings.js';

/** Room and reaper settings for specs: short keep-alives and autosave, a small ledger and a soft cap of 3 rooms. */
export const testRoomSettings: RoomSettings & ReaperSettings = {
  keepAliveMs: 1000,
  vanishedPeerKeepAliveMs: 5000,
  autosaveDebounceMs: 10,
  autosaveMaxDelayMs: 50,
  ledgerCapacity: 16,
  executionHistory: 16,
  reaperIntervalMs: 60_000,
  roomTtlMs: 10_000,
  roomSoftCap: 3,
};
