import type { NotebookReadiness } from './notebook-handle.js';

/**
 * The callers of a notebook handle's `waitUntilReady`, for backends to share: each waits until
 * the handle's runtime is no longer `pending`, and the handle calls {@link wake} whenever its
 * readiness or its open state may have changed.
 *
 * Guarantees: a wait settles once, resolved with the readiness, rejected with `failure()` when
 * that names an error (the handle closed) or with the signal's reason when it aborts; a settled
 * wait is forgotten (no listener stays on the signal).
 */
export class ReadinessWaiters {
  readonly #waiters = new Set<() => void>();

  public constructor(
    private readonly readiness: () => NotebookReadiness,
    private readonly failure: () => Error | undefined,
  ) {}

  public wait(signal?: AbortSignal): Promise<NotebookReadiness> {
    return new Promise((resolve, reject) => {
      const settled = (): boolean => {
        const failed = this.failure();
        if (failed !== undefined) reject(failed);
        else if (signal?.aborted) reject(signal.reason);
        else {
          const readiness = this.readiness();
          if (readiness.runtime === 'pending') return false;
          resolve(readiness);
        }
        return true;
      };
      if (settled()) return;
      const wake = (): void => {
        if (!settled()) return;
        this.#waiters.delete(wake);
        signal?.removeEventListener('abort', wake);
      };
      this.#waiters.add(wake);
      signal?.addEventListener('abort', wake, { once: true });
    });
  }

  /** Every waiter looks again. */
  public wake(): void {
    for (const wake of [...this.#waiters]) wake();
  }

  /** Waits not settled yet. */
  public get size(): number {
    return this.#waiters.size;
  }
}
