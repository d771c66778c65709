import { ManualClock } from '@nteract-mcp/foundation/testing';
import { describe, expect, it } from 'vitest';
import { Clock } from '../ports/clock.js';
import { createTestContainer } from '../testing/create-test-container.js';
import { FakeNotebookHandle } from '../testing/fake-notebook-handle.js';
import { SessionActivation } from './session-activation.js';
import { SessionRecoveryState } from './session-recovery-state.js';
import { SessionSlot } from './session-slot.js';

function setup() {
  const clock = new ManualClock();
  const container = createTestContainer().override(Clock, clock).build();
  const slot = container.get(SessionSlot);
  const recovery = container.get(SessionRecoveryState);
  const install = (path: string) =>
    container.get(SessionActivation).activate({
      key: path,
      target: { kind: 'local-path', path, existed: true },
      origin: 'rejoin',
      connect: async () => new FakeNotebookHandle({ notebookId: 'nb-1', notebookPath: path }),
    });
  return { clock, slot, recovery, install };
}

const lost = { kind: 'local-path', path: '/n/a.ipynb', existed: true } as const;

describe(SessionRecoveryState, () => {
  it('reports a recovery target only under the intent epoch it was recorded in', () => {
    const t = setup();
    t.recovery.setRecovering(lost, t.slot.intentEpoch);
    expect(t.recovery.report()).toEqual({ target: '/n/a.ipynb' });
    t.slot.disconnect();
    expect(t.recovery.recovering).toBeUndefined();
    expect(t.recovery.report()).toEqual({ target: null });
  });

  it('settles a requested rejoin once, from pending only', () => {
    const t = setup();
    expect(t.recovery.settleRejoin('rejoined')).toBe(false);
    t.recovery.requestRejoin('/n/a.ipynb');
    t.recovery.requestRejoin('/n/other.ipynb');
    expect(t.recovery.rejoin).toEqual({ requested: '/n/a.ipynb', outcome: 'pending' });
    expect(t.recovery.settleRejoin('failed', 'gone')).toBe(true);
    expect(t.recovery.settleRejoin('rejoined')).toBe(false);
    expect(t.recovery.report()).toEqual({
      target: null,
      rejoin: { requested: '/n/a.ipynb', outcome: 'failed', reason: 'gone' },
    });
  });

  it('lets a waiter go when the session is back, when the attempt stops, on timeout and on abort', async () => {
    const t = setup();
    await t.recovery.whenRecovered(1_000); // nothing being recovered: at once
    t.recovery.setRecovering(lost, t.slot.intentEpoch);
    await t.recovery.whenRecovered(1_000); // no attempt running: at once
    t.recovery.setAttempting(true);
    expect(t.recovery.isRecovering).toBe(true);

    let installed = false;
    const untilInstalled = t.recovery.whenRecovered(60_000).then(() => {
      installed = true;
    });
    await Promise.resolve();
    expect(installed).toBe(false);
    await t.install('/n/a.ipynb');
    await untilInstalled;
    t.slot.disconnect();

    t.recovery.setRecovering(lost, t.slot.intentEpoch);
    const untilStopped = t.recovery.whenRecovered(60_000);
    t.recovery.setAttempting(false);
    await untilStopped;

    t.recovery.setAttempting(true);
    const timedOut = t.recovery.whenRecovered(500);
    t.clock.advance(500);
    await timedOut;
    const controller = new AbortController();
    const aborted = t.recovery.whenRecovered(60_000, controller.signal);
    controller.abort();
    await aborted;
    expect(t.clock.pendingTimerCount).toBe(0);
  });
});
