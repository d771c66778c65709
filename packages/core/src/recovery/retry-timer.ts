import type { Clock, Timer } from '../ports/clock.js';

/** A doubling back-off: `initialMs` after the first failure, doubling up to `maxMs`; optionally bounded. */
export interface RetrySchedule {
  readonly initialMs: number;
  readonly maxMs: number;
  /** Attempts in all (the first one included) after which to give up; unbounded when absent. */
  readonly maxAttempts?: number;
}

/**
 * The wait before the next attempt after `failures` failed attempts in a row (at least 1):
 * `initialMs · 2^(failures-1)`, at most `maxMs`; `undefined` once `maxAttempts` attempts failed. Pure.
 */
export function retryDelay(schedule: RetrySchedule, failures: number): number | undefined {
  if (schedule.maxAttempts !== undefined && failures >= schedule.maxAttempts) return undefined;
  return Math.min(schedule.initialMs * 2 ** Math.max(0, failures - 1), schedule.maxMs);
}

/**
 * A bounded retry timer on the {@link Clock} port: each failure schedules the next attempt after
 * the schedule's delay, until the attempts are used up. At most one retry is scheduled at a time.
 */
export class RetryTimer {
  #failures = 0;
  #timer: Timer | undefined;

  public constructor(
    private readonly clock: Clock,
    private readonly schedule: RetrySchedule,
  ) {}

  /** Failed attempts in a row so far. */
  public get failures(): number {
    return this.#failures;
  }

  /** Whether a retry is scheduled. */
  public get scheduled(): boolean {
    return this.#timer !== undefined;
  }

  /**
   * Counts a failed attempt and schedules `retry` after the schedule's delay (a retry already
   * scheduled is kept). Returns the delay, or `undefined` when the attempts are used up (then
   * nothing is scheduled).
   */
  public fail(retry: () => void): number | undefined {
    this.#failures += 1;
    const delay = retryDelay(this.schedule, this.#failures);
    if (delay === undefined || this.#timer) return delay;
    this.#timer = this.clock.setTimer(delay, () => {
      this.#timer = undefined;
      retry();
    });
    return delay;
  }

  /** Cancels a scheduled retry and starts counting failures from zero. */
  public reset(): void {
    this.cancel();
    this.#failures = 0;
  }

  /** Cancels a scheduled retry; the failure count stays. */
  public cancel(): void {
    this.#timer?.cancel();
    this.#timer = undefined;
  }
}
