import type { ChildExitClass } from '@nteract-mcp/core';
import { type ChildExit, ChildProcessPort, Clock, Logger } from '@nteract-mcp/core';
import { createTestContainer, FakeChildProcessPort } from '@nteract-mcp/core/testing';
import { ManualClock, RecordingLogger } from '@nteract-mcp/foundation/testing';
import { describe, expect, it } from 'vitest';
import { createProxyPlugin } from './create-proxy-plugin.js';
import {
  defaultRestartPolicySettings,
  type RestartDecision,
  RestartPolicy,
  RestartPolicySettings,
} from './restart-policy.js';

const crashed: ChildExit = { code: 1, signal: null };
const handedOff: ChildExit = { code: 75, signal: null };
const missingBinary: ChildExit = { code: null, signal: null, spawnError: 'spawn /opt/runt-mcp ENOENT' };

function setup(settings?: Partial<RestartPolicySettings>) {
  const clock = new ManualClock(0);
  const builder = createTestContainer({ plugins: [createProxyPlugin()] })
    .override(ChildProcessPort, new FakeChildProcessPort())
    .override(Clock, clock)
    .override(Logger, new RecordingLogger());
  if (settings) builder.override(RestartPolicySettings, settings);
  const policy = builder.build().get(RestartPolicy);

  /** A child starts, runs for `uptimeMs`, and exits. */
  const run = (uptimeMs: number, exitClass: ChildExitClass = 'crash', exit: ChildExit = crashed): RestartDecision => {
    policy.recordStart();
    clock.advance(uptimeMs);
    return policy.onExit(exitClass, exit);
  };
  const delays = (decisions: readonly RestartDecision[]) =>
    decisions.map((decision) => (decision.kind === 'restart' ? decision.delayMs : decision.kind));
  return { clock, policy, run, delays };
}

/** Five quick crashes, then the sixth (refused). */
function trip(context: ReturnType<typeof setup>): RestartDecision {
  for (let i = 0; i < 5; i++) expect(context.run(100).kind).toBe('restart');
  return context.run(100);
}

describe(RestartPolicy, () => {
  it('is bound in the container with the defaults of decision 1', () => {
    const { policy } = setup();
    expect(policy.settings).toEqual(defaultRestartPolicySettings);
    expect(defaultRestartPolicySettings).toMatchObject({
      crashBudget: 5,
      crashWindowMs: 30_000,
      maxCrashDelayMs: 5_000,
      healthyUptimeMs: 60_000,
      coolDownMs: 60_000,
      handoffCap: 10,
      handoffWindowMs: 60_000,
    });
    expect(policy.snapshot()).toEqual({
      breaker: 'closed',
      restartsInWindow: 0,
      budgetLeft: 5,
      handoffsInWindow: 0,
      lastExitClass: undefined,
      lastExit: undefined,
    });
  });

  it('allows 5 crash restarts within 30 s and refuses the 6th, naming the last exit and the next attempt', () => {
    const context = setup();
    const { run, policy, clock } = context;
    const allowed = [run(100), run(100), run(100), run(100), run(100)];
    expect(allowed.every((decision) => decision.kind === 'restart')).toBe(true);
    expect(policy.snapshot()).toMatchObject({ breaker: 'closed', restartsInWindow: 5, budgetLeft: 0 });

    const sixth = run(100, 'crash', { code: null, signal: 'SIGSEGV' });
    expect(clock.now()).toBe(600);
    expect(sixth).toMatchObject({
      kind: 'refuse',
      cause: 'budget-exhausted',
      nextAttemptAt: 60_600,
      lastExit: { code: null, signal: 'SIGSEGV' },
    });
    if (sixth.kind !== 'refuse') throw new Error('unreachable');
    expect(sixth.reason).toContain('signal SIGSEGV');
    expect(sixth.reason).toContain(new Date(60_600).toISOString());
    expect(sixth.reason).toContain('in 60 s');
    expect(sixth.reason).toContain('reconnect');
    expect(policy.snapshot()).toMatchObject({
      breaker: 'open',
      budgetLeft: 0,
      lastExitClass: 'crash',
      nextAttemptAt: 60_600,
    });
  });

  it('keeps refusing while open, with the remaining wait, until the cool-down has passed', () => {
    const context = setup();
    trip(context);
    const { policy, clock } = context;
    for (let i = 0; i < 10; i++) expect(policy.canAttemptNow().kind).toBe('refuse');
    clock.advance(30_000);
    const later = policy.canAttemptNow();
    expect(later).toMatchObject({ kind: 'refuse', nextAttemptAt: 60_600 });
    expect(later.kind === 'refuse' && later.reason).toContain('in 30 s');
    clock.advance(29_999);
    expect(policy.canAttemptNow().kind).toBe('refuse');
    expect(policy.snapshot().breaker).toBe('open');
    clock.advance(1);
    expect(policy.canAttemptNow()).toEqual({ kind: 'restart', delayMs: 0 });
    expect(policy.snapshot().breaker).toBe('half-open');
    expect(policy.snapshot().nextAttemptAt).toBeUndefined();
  });

  it('slides the crash window: a crash 30 s old no longer counts, one a millisecond younger does', () => {
    const fill = () => {
      const context = setup();
      expect(context.run(1_000).kind).toBe('restart'); // crash at t = 1 s
      context.clock.advance(19_000 - 4 * 100);
      for (let i = 0; i < 4; i++) expect(context.run(100).kind).toBe('restart'); // crashes at t ≈ 20 s
      return context;
    };

    const stillCounted = fill();
    expect(stillCounted.run(30_999 - stillCounted.clock.now()).kind).toBe('refuse');

    const slidOut = fill();
    expect(slidOut.run(31_000 - slidOut.clock.now()).kind).toBe('restart');
    expect(slidOut.policy.snapshot()).toMatchObject({ restartsInWindow: 5, budgetLeft: 0 });
    expect(slidOut.run(1).kind).toBe('refuse');
  });

  it('grows the crash delay 0, 250, 500, 1 s, 2 s, 4 s and caps it at 5 s', () => {
    const { run, delays } = setup();
    // 10 s apart: never more than 4 crashes in a 30 s window, never healthy.
    const decisions = Array.from({ length: 9 }, () => run(10_000));
    expect(delays(decisions)).toEqual([0, 250, 500, 1_000, 2_000, 4_000, 5_000, 5_000, 5_000]);
  });

  it('resets the delay after 60 s of healthy uptime, not before', () => {
    const healthy = setup();
    expect(healthy.delays([healthy.run(100), healthy.run(100), healthy.run(100)])).toEqual([0, 250, 500]);
    expect(healthy.delays([healthy.run(60_000), healthy.run(100)])).toEqual([0, 250]);

    const almost = setup();
    expect(almost.delays([almost.run(100), almost.run(100), almost.run(100)])).toEqual([0, 250, 500]);
    expect(almost.delays([almost.run(59_999), almost.run(100)])).toEqual([1_000, 2_000]);
  });

  it('half-opens after the cool-down: a crash of the attempt before it is healthy opens again', () => {
    const context = setup();
    trip(context);
    const { policy, clock, run } = context;
    clock.advance(60_000);
    expect(policy.canAttemptNow().kind).toBe('restart');

    const again = run(1_000);
    expect(again).toMatchObject({ kind: 'refuse', cause: 'budget-exhausted', nextAttemptAt: clock.now() + 60_000 });
    expect(again.kind === 'refuse' && again.reason).toContain('failed again after the cool-down');
    expect(again.kind === 'refuse' && again.reason).toContain('exit code 1');
    expect(policy.snapshot().breaker).toBe('open');
    expect(policy.canAttemptNow().kind).toBe('refuse');
  });

  it('half-open: an attempt that stays up for 60 s closes the breaker and starts a fresh window', () => {
    const context = setup();
    trip(context);
    const { policy, clock, run, delays } = context;
    clock.advance(60_000);
    policy.recordStart();
    clock.advance(59_999);
    expect(policy.snapshot().breaker).toBe('half-open');
    clock.advance(1);
    expect(policy.snapshot()).toMatchObject({ breaker: 'closed', restartsInWindow: 0, budgetLeft: 5 });
    expect(policy.onExit('crash', crashed)).toEqual({ kind: 'restart', delayMs: 0 });
    expect(delays([run(100), run(100), run(100), run(100)])).toEqual([250, 500, 1_000, 2_000]);
    expect(run(100).kind).toBe('refuse');
  });

  it('half-open: closing forgets the crashes still inside the window (short cool-down)', () => {
    const context = setup({ coolDownMs: 1_000, healthyUptimeMs: 5_000 });
    trip(context);
    const { policy, clock, run } = context;
    clock.advance(1_000);
    policy.recordStart();
    clock.advance(5_000);
    expect(clock.now()).toBeLessThan(30_000);
    expect(policy.snapshot()).toMatchObject({ breaker: 'closed', restartsInWindow: 0, budgetLeft: 5 });
    expect(policy.onExit('crash', crashed)).toEqual({ kind: 'restart', delayMs: 0 });
    for (let i = 0; i < 4; i++) expect(run(100).kind).toBe('restart');
    expect(run(100).kind).toBe('refuse');
  });

  it('half-open: a handoff of the attempt restarts at once and keeps the breaker half-open', () => {
    const context = setup();
    trip(context);
    const { policy, clock, run } = context;
    clock.advance(60_000);
    expect(run(1_000, 'handoff', handedOff)).toEqual({ kind: 'restart', delayMs: 0 });
    expect(policy.snapshot().breaker).toBe('half-open');
    expect(run(1_000).kind).toBe('refuse');
  });

  it('reset() closes an open breaker at once and gives a full budget again', () => {
    const context = setup();
    expect(trip(context).kind).toBe('refuse');
    const { policy, run } = context;
    policy.reset();
    expect(policy.snapshot()).toMatchObject({ breaker: 'closed', restartsInWindow: 0, budgetLeft: 5 });
    expect(policy.snapshot().nextAttemptAt).toBeUndefined();
    expect(policy.canAttemptNow()).toEqual({ kind: 'restart', delayMs: 0 });
    for (let i = 0; i < 5; i++) expect(run(100).kind).toBe('restart');
    expect(run(100).kind).toBe('refuse');
  });

  it('restarts a handoff at once without charging the crash budget', () => {
    const { run, policy, delays } = setup();
    const handoffs = Array.from({ length: 6 }, () => run(100, 'handoff', handedOff));
    expect(delays(handoffs)).toEqual([0, 0, 0, 0, 0, 0]);
    expect(policy.snapshot()).toMatchObject({
      restartsInWindow: 0,
      budgetLeft: 5,
      handoffsInWindow: 6,
      lastExitClass: 'handoff',
    });
    expect(run(100)).toEqual({ kind: 'restart', delayMs: 0 });
    expect(policy.snapshot()).toMatchObject({ restartsInWindow: 1, budgetLeft: 4 });
  });

  it('restarts a handoff even when the crash budget is used up', () => {
    const { run } = setup();
    for (let i = 0; i < 5; i++) expect(run(100).kind).toBe('restart');
    expect(run(100, 'handoff', handedOff)).toEqual({ kind: 'restart', delayMs: 0 });
    expect(run(100).kind).toBe('refuse');
  });

  it('counts the 11th handoff within 60 s as a crash', () => {
    const { run, policy, delays } = setup();
    const ten = Array.from({ length: 10 }, () => run(100, 'handoff', handedOff));
    expect(delays(ten)).toEqual(Array(10).fill(0));
    expect(policy.snapshot()).toMatchObject({ handoffsInWindow: 10, restartsInWindow: 0 });
    expect(run(100, 'handoff', handedOff)).toEqual({ kind: 'restart', delayMs: 0 });
    expect(policy.snapshot()).toMatchObject({ handoffsInWindow: 10, restartsInWindow: 1, budgetLeft: 4 });
    expect(delays([run(100, 'handoff', handedOff)])).toEqual([250]);
  });

  it('refuses handoffs beyond the cap once the crash budget is gone too, saying why', () => {
    const { run } = setup();
    for (let i = 0; i < 10; i++) run(10, 'handoff', handedOff);
    for (let i = 0; i < 5; i++) expect(run(10, 'handoff', handedOff).kind).toBe('restart');
    const refused = run(10, 'handoff', handedOff);
    expect(refused).toMatchObject({ kind: 'refuse', cause: 'budget-exhausted' });
    expect(refused.kind === 'refuse' && refused.reason).toContain('exit code 75, a handoff beyond the cap of 10');
  });

  it('slides the handoff window: after 60 s the cap is available again', () => {
    const { run, policy, clock } = setup();
    for (let i = 0; i < 10; i++) run(100, 'handoff', handedOff); // t = 100 … 1000
    clock.advance(60_000);
    expect(policy.snapshot().handoffsInWindow).toBe(0);
    expect(run(100, 'handoff', handedOff)).toEqual({ kind: 'restart', delayMs: 0 });
    expect(policy.snapshot()).toMatchObject({ restartsInWindow: 0, handoffsInWindow: 1 });
  });

  it('does not restart a clean stop by itself, but a later call may start a child', () => {
    const { run, policy } = setup();
    const decision = run(5_000, 'clean-stop', { code: 0, signal: null });
    expect(decision).toMatchObject({ kind: 'stop' });
    expect(decision.kind === 'stop' && decision.reason).toContain('exit code 0');
    expect(policy.snapshot()).toMatchObject({ breaker: 'closed', restartsInWindow: 0, lastExitClass: 'clean-stop' });
    expect(policy.canAttemptNow()).toEqual({ kind: 'restart', delayMs: 0 });
  });

  it('opens the breaker without a cool-down on a fatal exit; only reset() allows another attempt', () => {
    const { run, policy, clock } = setup();
    const decision = run(0, 'fatal', missingBinary);
    expect(decision).toMatchObject({ kind: 'refuse', cause: 'fatal', lastExit: missingBinary });
    expect(decision.kind === 'refuse' && decision.nextAttemptAt).toBeUndefined();
    expect(decision.kind === 'refuse' && decision.reason).toContain('spawn failed (spawn /opt/runt-mcp ENOENT)');
    expect(decision.kind === 'refuse' && decision.reason).toContain('reconnect');
    expect(policy.snapshot()).toMatchObject({ breaker: 'open', budgetLeft: 0, lastExitClass: 'fatal' });
    clock.advance(600_000);
    expect(policy.canAttemptNow()).toMatchObject({ kind: 'refuse', cause: 'fatal' });
    policy.reset();
    expect(policy.canAttemptNow()).toEqual({ kind: 'restart', delayMs: 0 });
  });

  it('takes partial overrides through the settings token', () => {
    const { run, policy } = setup({ crashBudget: 2, coolDownMs: 1_000 });
    expect(policy.settings).toMatchObject({ crashBudget: 2, coolDownMs: 1_000, crashWindowMs: 30_000 });
    expect(run(10).kind).toBe('restart');
    expect(run(10).kind).toBe('restart');
    expect(run(10)).toMatchObject({ kind: 'refuse', nextAttemptAt: 1_030 });
  });
});
