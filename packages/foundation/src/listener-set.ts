import type { Subscription } from './subscription.js';

/**
 * The listeners of one event: each `add` is a listener of its own (the same function added twice
 * is called twice), `tell` calls every listener added before it, in order, and a listener that
 * throws is given to `onError` while the others are still called.
 */
export class ListenerSet<T> {
  readonly #entries = new Set<{ readonly listener: (value: T) => void }>();

  /** `onError`: what to do with a listener's exception (log it); never rethrown. */
  public constructor(private readonly onError: (error: unknown) => void) {}

  public get size(): number {
    return this.#entries.size;
  }

  public add(listener: (value: T) => void): Subscription {
    const entry = { listener };
    this.#entries.add(entry);
    return { dispose: () => this.#entries.delete(entry) };
  }

  public tell(value: T): void {
    for (const { listener } of [...this.#entries]) {
      try {
        listener(value);
      } catch (error) {
        this.onError(error);
      }
    }
  }

  /** Tells `value` to every listener, then forgets them all: for an event that happens once. */
  public tellOnce(value: T): void {
    const entries = [...this.#entries];
    this.#entries.clear();
    for (const { listener } of entries) {
      try {
        listener(value);
      } catch (error) {
        this.onError(error);
      }
    }
  }

  public clear(): void {
    this.#entries.clear();
  }
}
