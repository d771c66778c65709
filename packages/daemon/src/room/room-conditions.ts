import type { WireRoomCondition } from '@nteract-mcp/runtimed-protocol';

/**
 * What a room's peers must know while it lasts (autosave failing, the file gone, a kernel that
 * could not start), by kind: at most one condition of each kind. `set` and `clear` return whether
 * the list changed, so the room broadcasts only real changes; `since` is kept while the same
 * condition is set again with a new message (e.g. a retry that failed once more).
 */
export class RoomConditions {
  readonly #byKind = new Map<string, WireRoomCondition>();

  public constructor(private readonly now: () => number) {}

  /** Sets the condition of `kind` to `message`; `false` when it already said exactly that. */
  public set(kind: string, message: string): boolean {
    const current = this.#byKind.get(kind);
    if (current?.message === message) return false;
    const since = current?.since ?? new Date(this.now()).toISOString();
    this.#byKind.set(kind, { kind, message, since });
    return true;
  }

  /** Clears the condition of `kind`; `false` when there was none. */
  public clear(kind: string): boolean {
    return this.#byKind.delete(kind);
  }

  public has(kind: string): boolean {
    return this.#byKind.has(kind);
  }

  /** The conditions now, in the order they were first set. */
  public list(): WireRoomCondition[] {
    return [...this.#byKind.values()];
  }
}
