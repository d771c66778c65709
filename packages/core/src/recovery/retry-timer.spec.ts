import { ManualClock } from '@nteract-mcp/foundation/testing';
import { describe, expect, it } from 'vitest';
import { RetryTimer, retryDelay } from './retry-timer.js';

describe(retryDelay, () => {
  it('doubles from the initial delay up to the cap, and ends after the last allowed attempt', () => {
    const schedule = { initialMs: 1_000, maxMs: 30_000, maxAttempts: 4 };
    expect([1, 2, 3, 4].map((failures) => retryDelay(schedule, failures))).toEqual([1_000, 2_000, 4_000, undefined]);
    expect(retryDelay({ initialMs: 100, maxMs: 5_000 }, 40)).toBe(5_000);
  });
});

describe(RetryTimer, () => {
  it('schedules one retry at a time on the clock, and nothing once the attempts are used up', async () => {
    const clock = new ManualClock();
    const timer = new RetryTimer(clock, { initialMs: 10, maxMs: 15, maxAttempts: 3 });
    let retries = 0;
    expect(timer.fail(() => retries++)).toBe(10);
    expect(timer.fail(() => retries++)).toBe(15);
    expect(clock.pendingTimerCount).toBe(1);
    await clock.advanceAndSettle(10);
    expect(retries).toBe(1);
    expect(timer.scheduled).toBe(false);
    expect(timer.fail(() => retries++)).toBeUndefined();
    expect(clock.pendingTimerCount).toBe(0);
    timer.reset();
    expect(timer.failures).toBe(0);
    expect(timer.fail(() => retries++)).toBe(10);
    timer.cancel();
    await clock.advanceAndSettle(100);
    expect(retries).toBe(1);
  });
});
