import { describe, expect, it } from 'vitest';
import type { NotebookReadiness } from './notebook-handle.js';
import { ReadinessWaiters } from './readiness-waiters.js';

function harness(initial: NotebookReadiness) {
  let readiness = initial;
  let failure: Error | undefined;
  const waiters = new ReadinessWaiters(
    () => readiness,
    () => failure,
  );
  return {
    waiters,
    set(next: NotebookReadiness) {
      readiness = next;
      waiters.wake();
    },
    fail(error: Error) {
      failure = error;
      waiters.wake();
    },
  };
}

describe(ReadinessWaiters, () => {
  it('resolves at once when the runtime has settled, and on the wake after it settles otherwise', async () => {
    const h = harness({ document: 'ready', runtime: 'unavailable', reason: 'no kernel' });
    await expect(h.waiters.wait()).resolves.toEqual({ document: 'ready', runtime: 'unavailable', reason: 'no kernel' });
    h.set({ document: 'ready', runtime: 'pending' });
    let settled = false;
    const waiting = h.waiters.wait().then((readiness) => {
      settled = true;
      return readiness;
    });
    h.waiters.wake();
    await Promise.resolve();
    expect(settled).toBe(false);
    h.set({ document: 'ready', runtime: 'ready' });
    await expect(waiting).resolves.toEqual({ document: 'ready', runtime: 'ready' });
    expect(h.waiters.size).toBe(0);
  });

  it('rejects with the failure when the handle closes, and with the reason when the signal aborts', async () => {
    const h = harness({ document: 'ready', runtime: 'pending' });
    const closed = h.waiters.wait();
    h.fail(new Error('closed'));
    await expect(closed).rejects.toThrow('closed');

    const other = harness({ document: 'ready', runtime: 'pending' });
    const controller = new AbortController();
    const aborted = other.waiters.wait(controller.signal);
    controller.abort(new Error('the caller gave up'));
    await expect(aborted).rejects.toThrow('the caller gave up');
    expect(other.waiters.size).toBe(0);
  });
});
