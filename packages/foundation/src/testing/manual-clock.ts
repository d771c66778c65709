import type { Clock, Timer } from '../clock.js';

interface PendingTimer {
  readonly dueAt: number;
  readonly order: number;
  readonly callback: () => void;
  cancelled: boolean;
}

/**
 * A clock that moves only when told. Timers fire in due order (ties in scheduling order) during
 * {@link ManualClock.advance}, including timers scheduled by callbacks when they fall due within
 * the advanced span.
 */
export class ManualClock implements Clock {
  #now: number;
  #order = 0;
  readonly #timers: PendingTimer[] = [];

  public constructor(startAt = Date.UTC(2026, 0, 1)) {
    this.#now = startAt;
  }

  public now(): number {
    return this.#now;
  }

  public setTimer(delayMs: number, callback: () => void): Timer {
    const timer: PendingTimer = {
      dueAt: this.#now + Math.max(0, delayMs),
      order: this.#order++,
      callback,
      cancelled: false,
    };
    this.#timers.push(timer);
    return {
      cancel: () => {
        timer.cancelled = true;
      },
    };
  }

  public sleep(delayMs: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
      if (signal?.aborted) {
        reject(signal.reason);
        return;
      }
      const timer = this.setTimer(delayMs, () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      });
      const onAbort = (): void => {
        timer.cancel();
        reject(signal?.reason);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** Moves time forward by `ms`, firing every timer that falls due on the way. */
  public advance(ms: number): void {
    if (!(ms >= 0)) throw new RangeError(`ManualClock#advance(${ms}): time only moves forward`);
    const target = this.#now + ms;
    for (let next = this.nextDue(target); next; next = this.nextDue(target)) {
      this.#timers.splice(this.#timers.indexOf(next), 1);
      this.#now = next.dueAt;
      next.callback();
    }
    this.#now = target;
  }

  /** {@link ManualClock.advance}, then lets promise continuations (e.g. resolved sleeps) run. */
  public async advanceAndSettle(ms: number): Promise<void> {
    this.advance(ms);
    await new Promise<void>((resolve) => setImmediate(resolve));
  }

  /** Timers scheduled and neither fired nor cancelled. */
  public get pendingTimerCount(): number {
    return this.#timers.filter((timer) => !timer.cancelled).length;
  }

  private nextDue(limit: number): PendingTimer | undefined {
    let best: PendingTimer | undefined;
    for (const timer of this.#timers) {
      if (timer.cancelled || timer.dueAt > limit) continue;
      if (!best || timer.dueAt < best.dueAt || (timer.dueAt === best.dueAt && timer.order < best.order)) best = timer;
    }
    // Drop cancelled timers as we go so the list does not grow without bound.
    for (let i = this.#timers.length - 1; i >= 0; i--) if (this.#timers[i]?.cancelled) this.#timers.splice(i, 1);
    return best;
  }
}
