import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { isAlive, processesWithHome, shippedBins, startUserSession, type UserSession } from './support/index.js';

const sessions: UserSession[] = [];
afterEach(async () => {
  for (const session of sessions.splice(0)) await session.stop();
});

function environOf(pid: number): Record<string, string> {
  const env: Record<string, string> = {};
  for (const entry of readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').filter(Boolean)) {
    const at = entry.indexOf('=');
    env[entry.slice(0, at)] = entry.slice(at + 1);
  }
  return env;
}

describe('startUserSession: the product as a user starts it', () => {
  it('runs the shipped proxy, which starts the child, which auto-starts the daemon found by discovery; stop() leaves nothing behind', {
    timeout: 120_000,
  }, async () => {
    const session = await startUserSession();
    sessions.push(session);
    expect(existsSync(session.socketPath)).toBe(false);
    // Listing finds no daemon and starts none (nothing is open); the first notebook starts it.
    const rooms = await session.call('list_active_notebooks');
    expect(rooms.isError, rooms.text).toBe(false);
    expect(rooms.text).toBe('[]');
    expect(existsSync(session.socketPath)).toBe(false);
    expect((await session.call('create_notebook', {})).isError).toBe(false);
    expect(existsSync(session.socketPath)).toBe(true);

    const status = await session.call('session_status');
    const daemon = session.pids.daemon();
    const child = session.pids.child();
    expect(status.json?.daemon).toMatchObject({ live: true, pid: daemon });
    expect(status.json?.proxy).toMatchObject({ child_pid: child });
    expect(await session.pids.childFromStatus()).toBe(child);
    expect(readFileSync(`/proc/${session.pids.proxy}/cmdline`, 'utf8').split('\0')).toContain(shippedBins.proxy);
    for (const pid of [session.pids.proxy, child as number, daemon as number]) {
      const env = environOf(pid);
      expect(env.HOME).toBe(session.dirs.home);
      expect(env.NTERACT_MCP_NO_AUTOSTART).toBeUndefined();
      expect(env.NODE_OPTIONS).toBeUndefined();
    }
    // The product's long-lived processes run with their malloc arenas limited (unless the user set
    // it); the proxy runs as the client started it.
    const userArenas = process.env.MALLOC_ARENA_MAX;
    expect(environOf(child as number).MALLOC_ARENA_MAX).toBe(userArenas ?? '2');
    expect(environOf(daemon as number).MALLOC_ARENA_MAX).toBe(userArenas ?? '2');
    expect(environOf(session.pids.proxy).MALLOC_ARENA_MAX).toBe(userArenas);
    expect(environOf(session.pids.proxy).RUNTIMED_SOCKET_PATH).toBeUndefined();
    expect(environOf(child as number).RUNTIMED_SOCKET_PATH).toBeUndefined();
    expect(() => session.faults.failDaemonInfo()).toThrow(/faultHooks/);

    const started = [session.pids.proxy, child as number, daemon as number];
    await session.stop();
    for (const pid of started) expect(isAlive(pid), `pid ${pid}`).toBe(false);
    expect(processesWithHome(session.dirs.home)).toEqual([]);
    expect(existsSync(session.dirs.root)).toBe(false);
  });

  it('counts the answers per request on the tapped transport, and its hooks fire only when armed', {
    timeout: 120_000,
  }, async () => {
    const session = await startUserSession({ faultHooks: true });
    sessions.push(session);
    await session.call('create_notebook', {});
    await session.call('list_active_notebooks');
    expect(session.faults.fired()).toEqual([]);

    // Armed for many answers: the child's own background queries may take some of them first.
    session.faults.failDaemonInfo(1000);
    const failed = await session.call('session_status');
    expect(failed.json?.daemon).toMatchObject({ live: 'unknown' });
    rmSync(join(session.dirs.faults, 'daemon-info.json'), { force: true });
    expect((await session.call('session_status')).json?.daemon).toMatchObject({ live: true });

    const child = session.pids.child() as number;
    session.faults.killChildOnRequest('list_active_notebooks');
    const answer = await session.send('list_active_notebooks');
    expect(answer.ok).toBe(true);
    expect(isAlive(child)).toBe(false);
    expect([...new Set(session.faults.fired().map((entry) => entry.hook))]).toEqual(['daemon-info-fail', 'child-kill']);
    const calls = session.transport.requests().filter((request) => request.method === 'tools/call');
    expect(calls.map((request) => request.answers)).toEqual(calls.map(() => 1));
    expect(session.transport.strays()).toEqual([]);
  });
});
