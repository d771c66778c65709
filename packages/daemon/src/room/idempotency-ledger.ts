import { DaemonError } from '../daemon-error.js';

interface LedgerEntry {
  readonly operation: string;
  readonly result: Promise<unknown>;
}

/**
 * The keys of mutations a room has applied (or is applying), with their results, newest last; the
 * oldest are forgotten beyond `capacity`. A repeated key answers the first result instead of
 * applying again, also while the first attempt is still running; the same key for a different
 * operation is refused.
 */
export class IdempotencyLedger {
  readonly #entries = new Map<string, LedgerEntry>();

  public constructor(private readonly capacity: number) {}

  /**
   * Runs `apply` unless `key` was seen before. A failed attempt is forgotten, so it can be retried.
   * Without a key, always applies.
   */
  public run<T>(key: string | undefined, operation: string, apply: () => Promise<T> | T): Promise<T> {
    if (key === undefined) return Promise.resolve().then(apply);
    const previous = this.#entries.get(key);
    if (previous) {
      if (previous.operation !== operation) {
        return Promise.reject(
          new DaemonError(
            'idempotencyConflict',
            `Idempotency key '${key}' was already used for ${previous.operation}, not ${operation}`,
          ),
        );
      }
      return previous.result as Promise<T>;
    }
    const result = Promise.resolve().then(apply);
    this.#entries.set(key, { operation, result });
    result.catch(() => {
      if (this.#entries.get(key)?.result === result) this.#entries.delete(key);
    });
    while (this.#entries.size > this.capacity) {
      const oldest = this.#entries.keys().next().value as string;
      this.#entries.delete(oldest);
    }
    return result;
  }

  public get size(): number {
    return this.#entries.size;
  }
}
