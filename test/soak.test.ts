import { afterEach, describe, expect, it } from 'vitest';
import { isAlive, startUserSession, type UserSession, waitFor } from './support/index.js';
import { runSoak } from './support/soak/run-soak.js';

/**
 * Soak: mixed tool calls through the shipped proxy, as a user starts it (fresh HOME, nothing
 * pre-started, the daemon auto-started), with the child SIGKILLed every 100–300 calls.
 *
 * SOAK_CALLS sets the number of calls (default 300; `npm run test:soak` runs 10,000), SOAK_SEED
 * replays a run (every run prints its seed).
 */
const calls = Number(process.env.SOAK_CALLS ?? 300);
// `npm test` replays one fixed seed (a CI run is deterministic); long runs draw a new one each time.
const seed = Number(process.env.SOAK_SEED ?? (process.env.SOAK_CALLS ? Date.now() % 2 ** 31 : 20_261_201));
/** Kills every 100–300 calls; a short run kills more often so that it still kills at least twice. */
const killEvery: [number, number] = [Math.min(100, Math.floor(calls / 4)), Math.min(300, Math.floor(calls / 3))];
const callTimeoutMs = 120_000;

const sessions: UserSession[] = [];
afterEach(async () => {
  for (const session of sessions.splice(0)) await session.stop();
});

describe(`soak (${calls} calls, seed ${seed})`, () => {
  it('answers every call once, never doubles or loses an acknowledged edit or execution across child kills', {
    timeout: 300_000 + calls * 1_000,
  }, async () => {
    const session = await startUserSession({ requestTimeoutMs: callTimeoutMs });
    sessions.push(session);
    const result = await runSoak({
      session,
      calls,
      seed,
      killEvery,
      callTimeoutMs,
      log: (line) => process.stderr.write(`${line}\n`),
    });
    const requests = session.transport.requests().filter((request) => request.method === 'tools/call');
    const answeredTwice = requests.filter((request) => request.answers > 1).length;
    const report = [result.summary, ...result.problems, 'errors (samples):', ...result.errorSamples].join('\n');
    process.stderr.write(`${report}\n`);
    expect(
      {
        doubled: result.counts.doubled,
        lost: result.counts.lost,
        hung: result.counts.hung,
        answeredTwice,
        strays: session.transport.strays().length,
      },
      report,
    ).toEqual({ doubled: 0, lost: 0, hung: 0, answeredTwice: 0, strays: 0 });
    expect(result.counts.answered, report).toBe(result.counts.calls);
    expect(result.counts.kills, report).toBeGreaterThanOrEqual(2);
    expect(result.counts.executions, report).toBeGreaterThan(0);

    // Stop everything, the auto-started daemon included, the way a user would.
    const daemon = session.pids.daemon();
    expect(daemon, 'the daemon was auto-started').toBeDefined();
    const processes = [session.pids.proxy, session.pids.child()].filter((pid) => pid !== undefined);
    await session.client.close();
    await waitFor('the proxy and its child to exit', () => processes.every((pid) => !isAlive(pid)));
    await session.faults.stopDaemon();
    expect(isAlive(daemon as number)).toBe(false);
  });
});
