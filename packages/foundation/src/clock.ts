/** A scheduled callback that can be cancelled. Cancelling a fired or cancelled timer does nothing. */
export interface Timer {
  cancel(): void;
}

/**
 * Time as every nteract-mcp process sees it. Every delay, deadline and retry schedule goes through this port, so tests
 * drive time with `ManualClock` instead of sleeping.
 *
 * Guarantees: `now()` never goes backwards; a timer fires at most once, not before its delay.
 * Does not guarantee: that a timer fires exactly on time, or that it keeps the process alive
 * (the system clock unrefs its timers; whoever needs the process alive holds a handle of its own).
 */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Runs `callback` once, `delayMs` from now. */
  setTimer(delayMs: number, callback: () => void): Timer;
  /** Resolves after `delayMs`; rejects with the signal's reason when aborted first. */
  sleep(delayMs: number, signal?: AbortSignal): Promise<void>;
}
