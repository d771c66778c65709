import { join } from 'node:path';
import { type Logger, SystemClock } from '@nteract-mcp/foundation';
import { NotebookRegistry } from '../persistence/notebook-registry.js';
import { UntitledStore } from '../persistence/untitled-store.js';
import { type ReaperSettings, RoomCatalog } from '../room/room-catalog.js';
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

/** A room catalog for specs over `dir` (registry and untitled notebooks in it), whose rooms get no kernel. */
export async function createKernellessCatalog(dir: string, logger: Logger): Promise<RoomCatalog> {
  return new RoomCatalog({
    settings: testRoomSettings,
    launcher: { launch: async () => ({ kind: 'unavailable', reason: 'no kernels in this test' }) },
    registry: await NotebookRegistry.load(join(dir, 'registry.json'), logger),
    untitled: new UntitledStore(join(dir, 'untitled')),
    clock: new SystemClock(),
    logger,
    emit: () => undefined,
  });
}
