import type { Clock, Timer } from './clock.js';

/** The real clock: `Date.now()` and unref'd Node timers. */
export class SystemClock implements Clock {
  public now(): number {
    return Date.now();
  }

  public setTimer(delayMs: number, callback: () => void): Timer {
    const handle = setTimeout(callback, Math.max(0, delayMs));
    handle.unref();
    return { cancel: () => clearTimeout(handle) };
  }

  public sleep(delayMs: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
      if (signal?.aborted) {
        reject(signal.reason);
        return;
      }
      const onAbort = (): void => {
        timer.cancel();
        reject(signal?.reason);
      };
      const timer = this.setTimer(delayMs, () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      });
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }
}
