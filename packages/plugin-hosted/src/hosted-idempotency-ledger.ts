/** Keys a ledger keeps per notebook at most; the oldest is forgotten first. */
export const maxKeptKeysPerNotebook = 1024;

/**
 * What the calls with an idempotency key did, per hosted notebook, for every handle of it this
 * process opens: a mutation or execution replayed into a new handle (the session was lost and
 * came back, e.g. after the server culled the kernel, and core ran the call once more with the
 * same key) is answered with the first call's result instead of being applied again.
 *
 * Guarantees: a key seen before for the notebook answers the first call's promise (while it is
 * pending too); a call that failed is forgotten (it may be tried again with its key); at most
 * {@link maxKeptKeysPerNotebook} keys per notebook, the oldest forgotten first.
 * Does not guarantee: anything across processes (a restarted child starts empty), nor that a call
 * that failed after the server applied it is not applied again.
 */
export class HostedIdempotencyLedger {
  readonly #byNotebook = new Map<string, Map<string, Promise<unknown>>>();

  /** `run`'s promise, or the first one of an earlier call on `notebookId` with the same `key`. */
  public once<R>(notebookId: string, key: string | undefined, run: () => Promise<R>): Promise<R> {
    if (key === undefined) return run();
    let calls = this.#byNotebook.get(notebookId);
    const known = calls?.get(key) as Promise<R> | undefined;
    if (known) return known;
    if (!calls) {
      calls = new Map();
      this.#byNotebook.set(notebookId, calls);
    }
    const result = run();
    calls.set(key, result);
    if (calls.size > maxKeptKeysPerNotebook) calls.delete(calls.keys().next().value as string);
    const kept = calls;
    // A refused call may be tried again with the same key.
    result.catch(() => {
      if (kept.get(key) === result) kept.delete(key);
    });
    return result;
  }
}
