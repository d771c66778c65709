/** What {@link UnsettledCalls} keeps, at most, and for how long. */
export interface UnsettledCallsOptions {
  readonly now: () => number;
  /** Calls remembered at once; the oldest is forgotten first. Default 64. */
  readonly capacity?: number;
  /** A call older than this is forgotten (its retry is then a new call). Default 30 minutes. */
  readonly ttlMs?: number;
}

/**
 * Mutating calls whose outcome is unknown (the daemon stopped answering while they were in flight,
 * and they wait for the session to come back, or were answered that the outcome is unknown), by
 * tool and exact arguments, with the idempotency key they were sent with. When the agent calls the
 * same tool with the same arguments again meanwhile, that retry is sent with the first call's key,
 * so the daemon's ledger applies the mutation at most once: a first call that did land is answered
 * from the ledger, one that did not is applied now. The entry stays until a call with its key is
 * done ({@link UnsettledCalls.settle}): a retry that found no session yet keeps it for the next.
 *
 * Arguments are compared as canonical JSON (object keys sorted), so a retry that orders its
 * arguments differently still matches. Once settled, an identical call is a call of its own.
 */
export class UnsettledCalls {
  readonly #calls = new Map<string, { readonly key: string; readonly at: number }>();
  readonly #now: () => number;
  readonly #capacity: number;
  readonly #ttlMs: number;

  public constructor(options: UnsettledCallsOptions) {
    this.#now = options.now;
    this.#capacity = options.capacity ?? 64;
    this.#ttlMs = options.ttlMs ?? 30 * 60_000;
  }

  public get size(): number {
    return this.#calls.size;
  }

  /** Remembers that the call of `tool` with `args`, sent with `key`, has an unknown outcome. */
  public remember(tool: string, args: unknown, key: string): void {
    const id = callId(tool, args);
    this.#calls.delete(id);
    this.#calls.set(id, { key, at: this.#now() });
    for (const oldest of this.#calls.keys()) {
      if (this.#calls.size <= this.#capacity) break;
      this.#calls.delete(oldest);
    }
  }

  /** Forgets the call of `tool` with `args` when it is the one sent with `key`: a call with that key was done. */
  public settle(tool: string, args: unknown, key: string): void {
    const id = callId(tool, args);
    if (this.#calls.get(id)?.key === key) this.#calls.delete(id);
  }

  /** The key of an unsettled call of `tool` with exactly `args`; `undefined` when none (or it is too old). */
  public keyOf(tool: string, args: unknown): string | undefined {
    const id = callId(tool, args);
    const entry = this.#calls.get(id);
    if (!entry) return undefined;
    if (this.#now() - entry.at <= this.#ttlMs) return entry.key;
    this.#calls.delete(id);
    return undefined;
  }
}

function callId(tool: string, args: unknown): string {
  return `${tool}\u0000${canonicalJson(args ?? {})}`;
}

/** JSON with every object's keys sorted, so equal values give equal text. */
function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, inner: unknown) => {
    if (inner === null || typeof inner !== 'object' || Array.isArray(inner)) return inner;
    return Object.fromEntries(Object.entries(inner).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  });
}
