/** How many slots an {@link IdSlots} has: more than the requests a client keeps in flight at once. */
const slotCount = 1024;
const slotMask = slotCount - 1;

/**
 * Values by whole-number id, for ids that come and go by the thousand (requests in flight): each
 * id has a slot in two arrays made once (`id mod 1024`), and an id whose slot is taken by another
 * live id goes to a `Map` beside them (a request still in flight 1,024 ids later).
 *
 * Why not a `Map` alone: a `Map` that requests pass through reallocates its table every few
 * additions and removals, and V8 links each old table to the one that replaced it. Once a
 * collection has moved one table to the old generation (an idle process's memory-reducing GC
 * does), every scavenge keeps the next tables, and the requests they held, alive through that
 * link, and moves them to the old generation too, where they wait for the next full GC (about
 * 60 KB per scavenge at 64 calls in flight, measured). The slots never move, and a removed value
 * is cleared from its slot.
 *
 * Ids are told apart by value (`-0` is `0`, as in a `Map`); only safe integers are accepted.
 */
export class IdSlots<V> {
  /** The id in each slot; `NaN` (equal to nothing) when the slot is free. */
  readonly #ids: number[] = new Array<number>(slotCount).fill(Number.NaN);
  readonly #values: (V | undefined)[] = new Array<V | undefined>(slotCount).fill(undefined);
  /** Ids whose slot was taken when they came. */
  readonly #overflow = new Map<number, V>();

  public get(id: number): V | undefined {
    const slot = id & slotMask;
    if (this.#ids[slot] === id) return this.#values[slot];
    return this.#overflow.size === 0 ? undefined : this.#overflow.get(id);
  }

  /** Records `value` under `id`, which has no value yet. */
  public set(id: number, value: V): void {
    const slot = id & slotMask;
    if (Number.isNaN(this.#ids[slot])) {
      this.#ids[slot] = id;
      this.#values[slot] = value;
    } else this.#overflow.set(id, value);
  }

  public delete(id: number): void {
    const slot = id & slotMask;
    if (this.#ids[slot] === id) {
      this.#ids[slot] = Number.NaN;
      this.#values[slot] = undefined;
    } else if (this.#overflow.size > 0) this.#overflow.delete(id);
  }
}
