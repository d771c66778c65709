import { DaemonError } from '../daemon-error.js';
import type { LedgerRecord } from '../persistence/room-journal.js';

interface LedgerEntry {
  readonly operation: string;
  readonly result: Promise<unknown>;
  /** Set once the result resolved: what the journal keeps. */
  settled?: { readonly value: unknown };
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
    const entry: LedgerEntry = { operation, result };
    this.#entries.set(key, entry);
    result.then(
      (value) => {
        entry.settled = { value };
      },
      () => {
        if (this.#entries.get(key)?.result === result) this.#entries.delete(key);
      },
    );
    this.trim();
    return result;
  }

  /** Puts back entries read from a journal (oldest first), as if their requests had just been answered. */
  public restore(records: readonly LedgerRecord[]): void {
    for (const record of records) {
      this.#entries.delete(record.key);
      this.#entries.set(record.key, {
        operation: record.operation,
        result: Promise.resolve(record.result),
        settled: { value: record.result },
      });
    }
    this.trim();
  }

  /** The answered entries, oldest first, for a journal header. */
  public snapshot(): LedgerRecord[] {
    return [...this.#entries].flatMap(([key, entry]) =>
      entry.settled ? [{ key, operation: entry.operation, result: entry.settled.value }] : [],
    );
  }

  private trim(): void {
    while (this.#entries.size > this.capacity) {
      const oldest = this.#entries.keys().next().value as string;
      this.#entries.delete(oldest);
    }
  }

  public get size(): number {
    return this.#entries.size;
  }
}
