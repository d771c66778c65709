import {
  type ChildProcessHandle,
  ChildProcessPort,
  type ChildSpawnSpec,
  Clock,
  CoreError,
  Logger,
} from '@nteract-mcp/core';
import { createTestContainer, type FakeChildProcess, FakeChildProcessPort } from '@nteract-mcp/core/testing';
import { ManualClock, RecordingLogger } from '@nteract-mcp/foundation/testing';
import { describe, expect, it, vi } from 'vitest';
import { type ChildExitEvent, type ChildRefusal, type ChildSpawnInfo, ChildSupervisor } from './child-supervisor.js';
import { createProxyPlugin } from './create-proxy-plugin.js';

/** Lets stream events and promise continuations run (no clock time passes). */
async function settle(): Promise<void> {
  for (let i = 0; i < 10; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

function setup() {
  const clock = new ManualClock(0);
  const port = new FakeChildProcessPort();
  const logger = new RecordingLogger();
  const container = createTestContainer({ plugins: [createProxyPlugin()] })
    .override(ChildProcessPort, port)
    .override(Clock, clock)
    .override(Logger, logger)
    .build();
  const supervisor = container.get(ChildSupervisor);

  let binary = '/opt/runt/1.0/runt-mcp';
  const resolveCommand = vi.fn((): ChildSpawnSpec => ({ command: binary, args: ['mcp'], env: { HOME: '/home/a' } }));
  const spawns: { child: ChildProcessHandle; info: ChildSpawnInfo }[] = [];
  const exits: ChildExitEvent[] = [];
  const refusals: ChildRefusal[] = [];
  let overlaps = 0;
  port.onSpawn(() => {
    if (port.spawned.slice(0, -1).some((child) => !child.hasExited)) overlaps += 1;
  });
  supervisor.onDidSpawn((child, info) => spawns.push({ child, info }));
  supervisor.onDidExit((event) => exits.push(event));
  supervisor.onDidRefuse((refusal) => refusals.push(refusal));

  const child = (index: number): FakeChildProcess => {
    const found = port.spawned[index];
    if (!found) throw new Error(`no child #${index}`);
    return found;
  };
  /** The latest child exits with `code` (default 1, a crash); time does not move. */
  const exitLatest = async (code: number | null = 1, signal: NodeJS.Signals | null = null) => {
    port.latest.exit(code, signal);
    await settle();
  };
  const advance = async (ms: number) => {
    clock.advance(ms);
    await settle();
  };
  return {
    clock,
    port,
    logger,
    supervisor,
    resolveCommand,
    spawns,
    exits,
    refusals,
    child,
    exitLatest,
    advance,
    overlaps: () => overlaps,
    upgradeBinary: (path: string) => {
      binary = path;
    },
    start: () => supervisor.start(resolveCommand, { killGraceMs: 5_000 }),
  };
}

/** Starts, then makes five quick crashes (each restarted after its delay) and a sixth that is refused. */
async function tripBreaker(context: ReturnType<typeof setup>): Promise<void> {
  await context.start();
  for (const delay of [0, 250, 500, 1_000, 2_000]) {
    await context.exitLatest(1);
    await context.advance(delay);
  }
  expect(context.port.spawned).toHaveLength(6);
  await context.exitLatest(1);
}

describe(ChildSupervisor, () => {
  it('spawns the child and restarts it at once after its first crash', async () => {
    const { start, supervisor, port, spawns, exits, exitLatest, resolveCommand } = setup();
    const first = await start();
    expect(first).toBe(port.latest);
    expect(supervisor.current).toBe(first);
    expect(port.latest.spec).toEqual({ command: '/opt/runt/1.0/runt-mcp', args: ['mcp'], env: { HOME: '/home/a' } });
    expect(spawns.map((spawn) => spawn.info)).toEqual([{ restartCount: 0, reason: 'start' }]);

    await exitLatest(1);
    expect(port.spawned).toHaveLength(2);
    expect(supervisor.current).toBe(port.latest);
    expect(supervisor.restartCount).toBe(1);
    expect(spawns.map((spawn) => spawn.info)).toEqual([
      { restartCount: 0, reason: 'start' },
      { restartCount: 1, reason: 'after crash' },
    ]);
    expect(exits).toHaveLength(1);
    expect(exits[0]).toMatchObject({
      child: first,
      exit: { code: 1, signal: null },
      exitClass: 'crash',
      decision: { kind: 'restart', delayMs: 0 },
      intentional: false,
    });
    expect(resolveCommand).toHaveBeenCalledTimes(2);
  });

  it('resolves the command again at every spawn, so an upgraded binary is used', async () => {
    const { start, port, exitLatest, resolveCommand, upgradeBinary } = setup();
    await start();
    expect(resolveCommand).toHaveBeenCalledTimes(1);
    upgradeBinary('/opt/runt/2.0/runt-mcp');
    await exitLatest(1);
    expect(resolveCommand).toHaveBeenCalledTimes(2);
    expect(port.spawned.map((child) => child.spec.command)).toEqual([
      '/opt/runt/1.0/runt-mcp',
      '/opt/runt/2.0/runt-mcp',
    ]);
  });

  it('waits the growing delay on the clock before respawning', async () => {
    const { start, port, exitLatest, advance } = setup();
    await start();
    await exitLatest(1); // delay 0
    expect(port.spawned).toHaveLength(2);
    await exitLatest(1); // delay 250
    expect(port.spawned).toHaveLength(2);
    await advance(249);
    expect(port.spawned).toHaveLength(2);
    await advance(1);
    expect(port.spawned).toHaveLength(3);
    await exitLatest(1); // delay 500
    await advance(499);
    expect(port.spawned).toHaveLength(3);
    await advance(1);
    expect(port.spawned).toHaveLength(4);
  });

  it('allows 5 crash restarts in 30 s; the 6th crash opens the breaker and calls fail fast', async () => {
    const context = setup();
    await tripBreaker(context);
    const { port, supervisor, refusals, exits, clock, logger } = context;
    expect(port.spawned).toHaveLength(6);
    expect(supervisor.current).toBeUndefined();
    expect(exits.at(-1)?.decision.kind).toBe('refuse');
    const nextAttemptAt = clock.now() + 60_000;
    expect(refusals).toHaveLength(1);
    expect(refusals[0]).toMatchObject({ cause: 'budget-exhausted', nextAttemptAt, lastExit: { code: 1 } });
    expect(supervisor.status()).toMatchObject({
      breaker: 'open',
      budgetLeft: 0,
      restartCount: 5,
      lastExitClass: 'crash',
      nextAttemptAt,
      pid: undefined,
    });
    expect(logger.find('child restart refused', 'error')).toHaveLength(1);

    const error = await supervisor.waitForChild(30_000).catch((caught: unknown) => caught);
    expect(CoreError.is(error, 'restartBudgetExhausted')).toBe(true);
    expect((error as CoreError).message).toContain('exit code 1');
    expect((error as CoreError).message).toContain(new Date(nextAttemptAt).toISOString());
    expect(port.spawned).toHaveLength(6);
  });

  it('makes one half-open attempt after the cool-down: a crash opens again, a healthy run closes', async () => {
    const context = setup();
    await tripBreaker(context);
    const { port, supervisor, advance, exitLatest, refusals } = context;

    await advance(59_999);
    expect(port.spawned).toHaveLength(6);
    await advance(1);
    expect(port.spawned).toHaveLength(7);
    expect(supervisor.status().breaker).toBe('half-open');
    expect(context.spawns.at(-1)?.info.reason).toBe('half-open attempt after the cool-down');

    await advance(10_000);
    await exitLatest(1);
    expect(port.spawned).toHaveLength(7);
    expect(supervisor.status().breaker).toBe('open');
    expect(refusals).toHaveLength(2);
    const retry = await supervisor.waitForChild(1_000).catch((caught: unknown) => caught);
    expect(CoreError.is(retry, 'restartBudgetExhausted')).toBe(true);

    await advance(60_000);
    expect(port.spawned).toHaveLength(8);
    await advance(60_000);
    expect(supervisor.status()).toMatchObject({ breaker: 'closed', budgetLeft: 5, restartsInWindow: 0 });
    await exitLatest(1);
    expect(port.spawned).toHaveLength(9);
  });

  it('restart() closes an open breaker at once and spawns a new child', async () => {
    const context = setup();
    await tripBreaker(context);
    const { supervisor, port } = context;
    const fresh = await supervisor.restart('reconnect');
    expect(fresh).toBe(port.latest);
    expect(port.spawned).toHaveLength(7);
    expect(supervisor.status()).toMatchObject({ breaker: 'closed', budgetLeft: 5, restartCount: 6 });
    expect(context.spawns.at(-1)?.info).toEqual({ restartCount: 6, reason: 'reconnect' });
    expect(await supervisor.waitForChild(1_000)).toBe(fresh);
  });

  it('does not charge a reconnect restart to the crash budget, however often it is asked', async () => {
    const { start, port, supervisor, exits } = setup();
    await start();
    for (let i = 1; i <= 6; i++) {
      await supervisor.restart('the reconnect tool');
      // The killed child's exit is intended: no crash is counted, however the exit looks (SIGTERM).
      expect(supervisor.status()).toMatchObject({
        breaker: 'closed',
        budgetLeft: 5,
        restartsInWindow: 0,
        restartCount: i,
      });
    }
    expect(port.spawned).toHaveLength(7);
    expect(exits.map((event) => [event.intentional, event.decision])).toEqual(
      Array(6).fill([true, { kind: 'restart', delayMs: 0 }]),
    );
  });

  it('restarts an exit 75 handoff at once without using the crash budget', async () => {
    const { start, port, supervisor, exitLatest, exits } = setup();
    await start();
    for (let i = 0; i < 6; i++) await exitLatest(75);
    expect(port.spawned).toHaveLength(7);
    expect(exits.map((event) => event.exitClass)).toEqual(Array(6).fill('handoff'));
    expect(exits.map((event) => event.decision)).toEqual(Array(6).fill({ kind: 'restart', delayMs: 0 }));
    expect(supervisor.status()).toMatchObject({ breaker: 'closed', budgetLeft: 5, handoffsInWindow: 6 });

    await exitLatest(1);
    expect(port.spawned).toHaveLength(8);
    expect(supervisor.status()).toMatchObject({ budgetLeft: 4, restartsInWindow: 1, lastExitClass: 'crash' });
  });

  it('counts the 11th handoff within a minute as a crash', async () => {
    const { start, port, supervisor, exitLatest } = setup();
    await start();
    for (let i = 0; i < 10; i++) await exitLatest(75);
    expect(supervisor.status()).toMatchObject({ handoffsInWindow: 10, restartsInWindow: 0 });
    await exitLatest(75);
    expect(port.spawned).toHaveLength(12);
    expect(supervisor.status()).toMatchObject({ handoffsInWindow: 10, restartsInWindow: 1, budgetLeft: 4 });
  });

  it('does not restart a clean stop by itself; a later call starts a child on demand', async () => {
    const { start, port, supervisor, exitLatest, exits, advance, spawns } = setup();
    await start();
    await exitLatest(0);
    expect(exits.at(-1)).toMatchObject({ exitClass: 'clean-stop', decision: { kind: 'stop' } });
    await advance(600_000);
    expect(port.spawned).toHaveLength(1);
    expect(supervisor.current).toBeUndefined();

    const next = await supervisor.waitForChild(1_000);
    expect(next).toBe(port.latest);
    expect(port.spawned).toHaveLength(2);
    expect(spawns.at(-1)?.info).toEqual({ restartCount: 1, reason: 'on-demand' });
  });

  it('stops on a spawn failure (missing binary is fatal) and retries only on restart()', async () => {
    const { start, port, supervisor, advance, exits, refusals, resolveCommand } = setup();
    port.failNextSpawn('spawn /opt/runt/1.0/runt-mcp ENOENT');
    const started = await start().catch((caught: unknown) => caught);
    expect(CoreError.is(started, 'childStartFailed')).toBe(true);
    expect((started as CoreError).message).toContain('spawn failed (spawn /opt/runt/1.0/runt-mcp ENOENT)');
    expect(port.spawned).toHaveLength(0);
    expect(port.failedSpawns).toHaveLength(1);
    expect(exits.at(-1)).toMatchObject({ exitClass: 'fatal', decision: { kind: 'refuse', cause: 'fatal' } });
    expect(refusals).toHaveLength(1);
    expect(supervisor.status()).toMatchObject({ breaker: 'open', restartCount: 0, lastExitClass: 'fatal' });
    expect(supervisor.status().nextAttemptAt).toBeUndefined();

    await advance(600_000);
    expect(resolveCommand).toHaveBeenCalledTimes(1);
    const waited = await supervisor.waitForChild(1_000).catch((caught: unknown) => caught);
    expect(CoreError.is(waited, 'childStartFailed')).toBe(true);

    const child = await supervisor.restart('reconnect');
    expect(child).toBe(port.latest);
    expect(resolveCommand).toHaveBeenCalledTimes(2);
    expect(supervisor.status()).toMatchObject({ breaker: 'closed', restartCount: 0 });
  });

  it('stops when a respawn fails, and rejects the calls waiting for it', async () => {
    const { start, port, supervisor, exitLatest, advance } = setup();
    await start();
    await exitLatest(1);
    port.failNextSpawn();
    await exitLatest(1); // restart after 250 ms, which fails
    const waiting = supervisor.waitForChild(60_000).catch((caught: unknown) => caught);
    await advance(250);
    expect(CoreError.is(await waiting, 'childStartFailed')).toBe(true);
    expect(port.failedSpawns).toHaveLength(1);
    await advance(600_000);
    expect(port.spawned).toHaveLength(2);
    expect(supervisor.current).toBeUndefined();
  });

  it('deduplicates a restart requested while one is in progress', async () => {
    const { start, supervisor, port, resolveCommand, spawns } = setup();
    await start();
    const first = supervisor.restart('reconnect');
    const second = supervisor.restart('reconnect again');
    expect(second).toBe(first);
    const child = await first;
    expect(port.spawned).toHaveLength(2);
    expect(child).toBe(port.latest);
    expect(supervisor.restartCount).toBe(1);
    expect(resolveCommand).toHaveBeenCalledTimes(2);
    expect(spawns.map((spawn) => spawn.info.reason)).toEqual(['start', 'reconnect']);
  });

  it('returns the pending crash restart to restart() instead of starting another', async () => {
    const { start, supervisor, port, exitLatest, advance } = setup();
    await start();
    await exitLatest(1);
    await exitLatest(1); // waits 250 ms
    const pending = supervisor.restart('reconnect');
    await advance(250);
    expect(await pending).toBe(port.latest);
    expect(port.spawned).toHaveLength(3);
  });

  it('never runs two children: restart() waits for the old child to exit, escalating to SIGKILL', async () => {
    const { start, supervisor, port, advance, child, exits, overlaps } = setup();
    await start();
    child(0).ignoreSignals = true;
    const restarted = supervisor.restart('reconnect');
    await settle();
    expect(child(0).signals).toEqual(['SIGTERM']);
    expect(port.spawned).toHaveLength(1);
    expect(supervisor.current).toBeUndefined();

    await advance(4_999);
    expect(child(0).signals).toEqual(['SIGTERM']);
    await advance(1);
    expect(child(0).signals).toEqual(['SIGTERM', 'SIGKILL']);
    expect(port.spawned).toHaveLength(1);

    child(0).exit(null, 'SIGKILL');
    const fresh = await restarted;
    expect(port.spawned).toHaveLength(2);
    expect(fresh).toBe(child(1));
    expect(exits.at(-1)).toMatchObject({ child: child(0), intentional: true, decision: { kind: 'restart' } });
    expect(overlaps()).toBe(0);
  });

  it('keeps one child at a time through crashes, handoffs, restarts and a half-open attempt', async () => {
    const context = setup();
    await tripBreaker(context);
    const { supervisor, advance, exitLatest } = context;
    await advance(60_000);
    await exitLatest(75);
    await supervisor.restart('reconnect');
    await supervisor.restart('reconnect');
    await exitLatest(1);
    await exitLatest(1);
    await advance(250);
    expect(context.port.spawned.filter((child) => !child.hasExited)).toHaveLength(1);
    expect(context.overlaps()).toBe(0);
  });

  it("stop() closes the child's input and lets it exit by itself: a clean exit, no signal", async () => {
    const { start, supervisor, child, exits } = setup();
    await start();
    await supervisor.stop();
    expect(child(0).signals).toEqual([]);
    expect(exits.at(-1)).toMatchObject({ intentional: true, exit: { code: 0, signal: null }, exitClass: 'clean-stop' });
  });

  it('stop() sends SIGTERM when the child does not exit after its input closed, then SIGKILL, and never respawns', async () => {
    const { start, supervisor, port, advance, child, exits } = setup();
    await start();
    child(0).ignoreSignals = true;
    child(0).ignoreInputEnd = true;
    let stopped = false;
    const stopping = supervisor.stop().then(() => {
      stopped = true;
    });
    await settle();
    expect(child(0).signals).toEqual([]);
    await advance(5_000);
    expect(child(0).signals).toEqual(['SIGTERM']);
    await advance(4_999);
    expect(child(0).signals).toEqual(['SIGTERM']);
    await advance(1);
    expect(child(0).signals).toEqual(['SIGTERM', 'SIGKILL']);
    expect(stopped).toBe(false);

    child(0).exit(null, 'SIGKILL');
    await stopping;
    expect(exits.at(-1)).toMatchObject({ intentional: true, decision: { kind: 'stop' } });
    await advance(600_000);
    expect(port.spawned).toHaveLength(1);
    expect(supervisor.status().stopped).toBe(true);
    const waited = await supervisor.waitForChild(1_000).catch((caught: unknown) => caught);
    expect(CoreError.is(waited, 'childUnavailable')).toBe(true);
    const restarted = await supervisor.restart('reconnect').catch((caught: unknown) => caught);
    expect(CoreError.is(restarted, 'childUnavailable')).toBe(true);
    expect(port.spawned).toHaveLength(1);
  });

  it('stop() during a restart delay cancels the respawn and rejects the waiting calls', async () => {
    const { start, supervisor, port, exitLatest, advance } = setup();
    await start();
    await exitLatest(1);
    await exitLatest(1); // waits 250 ms
    const waiting = supervisor.waitForChild(60_000).catch((caught: unknown) => caught);
    await supervisor.stop();
    expect(CoreError.is(await waiting, 'childUnavailable')).toBe(true);
    await advance(10_000);
    expect(port.spawned).toHaveLength(2);
  });

  it('waitForChild resolves with the respawned child, or rejects when none comes in time', async () => {
    const { start, supervisor, port, exitLatest, advance } = setup();
    const first = await start();
    expect(await supervisor.waitForChild(1_000)).toBe(first);
    await exitLatest(1);
    await exitLatest(1); // waits 250 ms

    let resolved: ChildProcessHandle | undefined;
    const waiting = supervisor.waitForChild(10_000).then((child) => {
      resolved = child;
    });
    const impatient = supervisor.waitForChild(100).catch((caught: unknown) => caught);
    await advance(100);
    const timedOut = await impatient;
    expect(CoreError.is(timedOut, 'childUnavailable')).toBe(true);
    expect((timedOut as CoreError).message).toContain('did not come up');
    expect(resolved).toBeUndefined();

    await advance(150);
    await waiting;
    expect(resolved).toBe(port.latest);
    expect(port.spawned).toHaveLength(3);
  });

  it('kills a child whose stdout ended but that does not exit', async () => {
    const { start, supervisor, advance, child } = setup();
    await start();
    child(0).ignoreSignals = true;
    child(0).stdout.end();
    child(0).stdout.resume();
    await settle();
    expect(supervisor.current).toBe(child(0));
    await advance(4_999);
    expect(child(0).signals).toEqual([]);
    await advance(1);
    expect(child(0).signals).toEqual(['SIGTERM']);
    await advance(5_000);
    expect(child(0).signals).toEqual(['SIGTERM', 'SIGKILL']);
  });

  it('restarts a child that dies the moment it is spawned', async () => {
    const clock = new ManualClock(0);
    const fakes = new FakeChildProcessPort();
    let instantDeaths = 1;
    const port: ChildProcessPort = {
      spawn: (spec) => {
        const child = fakes.spawn(spec);
        if (instantDeaths-- <= 0) return child;
        return { ...child, pid: child.pid, exited: Promise.resolve({ code: 1, signal: null }), kill: () => undefined };
      },
    };
    const supervisor = createTestContainer({ plugins: [createProxyPlugin()] })
      .override(ChildProcessPort, port)
      .override(Clock, clock)
      .override(Logger, new RecordingLogger())
      .build()
      .get(ChildSupervisor);
    await supervisor.start(() => ({ command: 'runt-mcp', args: ['mcp'], env: {} }));
    await settle();
    expect(fakes.spawned).toHaveLength(2);
    expect(supervisor.current).toBe(fakes.latest);
    expect(supervisor.restartCount).toBe(1);
  });

  it('keeps supervising when a listener throws', async () => {
    const { start, supervisor, port, exitLatest, logger } = setup();
    supervisor.onDidExit(() => {
      throw new Error('listener bug');
    });
    await start();
    await exitLatest(1);
    expect(port.spawned).toHaveLength(2);
    expect(logger.find('listener threw', 'error')).toHaveLength(1);
  });

  it('is a singleton of the container and refuses a second start', async () => {
    const { start, supervisor } = setup();
    await start();
    expect(() => supervisor.start(() => ({ command: 'x', args: [], env: {} }))).toThrow(CoreError);
  });
});
