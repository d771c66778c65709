/** Timings and bounds of a room; all configurable so tests run in milliseconds. */
export interface RoomSettings {
  /** How long the kernel outlives the last peer when it left cleanly (sent `leave`). */
  readonly keepAliveMs: number;
  /**
   * How long the kernel outlives a last peer whose connection dropped without `leave` (a crashed
   * child): longer than the proxy's restart back-off, so the restarted child finds its kernel.
   */
  readonly vanishedPeerKeepAliveMs: number;
  readonly autosaveDebounceMs: number;
  /** A busy notebook is still written at least this often. */
  readonly autosaveMaxDelayMs: number;
  readonly ledgerCapacity: number;
  /** Finished executions kept for `get_execution`. */
  readonly executionHistory: number;
}
