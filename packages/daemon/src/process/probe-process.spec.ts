import { type ChildProcess, spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { compareIdentity, currentBootId, identifyProcess, probeProcess } from './probe-process.js';

const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) child.kill('SIGKILL');
});

async function waitFor<T>(read: () => Promise<T>, accept: (value: T) => boolean, what: string): Promise<T> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const value = await read();
    if (accept(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** A shell that starts `sleep 0` in the background, prints its pid, and execs a sleep that never reaps it. */
function zombieMaker(): Promise<{ parent: ChildProcess; zombie: number }> {
  const parent = spawn('sh', ['-c', 'sleep 0 & echo $!; exec sleep 60'], { stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(parent);
  return new Promise((resolve) => {
    parent.stdout?.once('data', (chunk: Buffer) => resolve({ parent, zombie: Number(chunk.toString().trim()) }));
  });
}

describe(probeProcess, { timeout: 60_000 }, () => {
  it('reads this process as alive with a start time from /proc', async () => {
    const probe = await probeProcess(process.pid);
    expect(probe.kind).toBe('alive');
    const stat = await readFile(`/proc/${process.pid}/stat`, 'utf8');
    const field22 = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
    expect(probe).toEqual({ kind: 'alive', startTime: `proc:${field22}` });
  });

  it('reads an exited, unreaped child as a zombie, which counts as gone', async () => {
    const { zombie } = await zombieMaker();
    const probe = await waitFor(
      () => probeProcess(zombie),
      (found) => found.kind === 'gone',
      'the zombie',
    );
    expect(probe).toEqual({ kind: 'gone', zombie: true });
    expect((await readFile(`/proc/${zombie}/stat`, 'utf8')).split(') ')[1]?.[0]).toBe('Z');
    // kill(pid, 0) still succeeds on a zombie: that is why it cannot be the liveness test.
    expect(() => process.kill(zombie, 0)).not.toThrow();
  });

  it('reads a reaped pid and nonsense pids as gone', async () => {
    const child = spawn('true');
    await new Promise((resolve) => child.once('exit', resolve));
    expect((await probeProcess(child.pid as number)).kind).toBe('gone');
    expect(await probeProcess(0)).toEqual({ kind: 'gone', zombie: false });
    expect(await probeProcess(-5)).toEqual({ kind: 'gone', zombie: false });
  });
});

describe('probeProcess without /proc', { timeout: 60_000 }, () => {
  it('reads liveness, zombies and a start time from ps', async () => {
    const own = await probeProcess(process.pid, 'ps');
    expect(own.kind).toBe('alive');
    expect(own.kind === 'alive' && own.startTime?.startsWith('ps:')).toBe(true);
    expect(await probeProcess(process.pid, 'ps')).toEqual(own);
    const { zombie } = await zombieMaker();
    await waitFor(
      () => probeProcess(zombie, 'proc'),
      (found) => found.kind === 'gone',
      'the zombie',
    );
    expect(await probeProcess(zombie, 'ps')).toEqual({ kind: 'gone', zombie: true });
    const child = spawn('true');
    await new Promise((resolve) => child.once('exit', resolve));
    expect(await probeProcess(child.pid as number, 'ps')).toEqual({ kind: 'gone', zombie: false });
  });

  it('falls back to kill(pid, 0), which cannot tell a zombie from a live process', async () => {
    expect(await probeProcess(process.pid, 'signal')).toEqual({ kind: 'alive', startTime: undefined });
    const { zombie } = await zombieMaker();
    await waitFor(
      () => probeProcess(zombie, 'proc'),
      (found) => found.kind === 'gone',
      'the zombie',
    );
    expect((await probeProcess(zombie, 'signal')).kind).toBe('alive');
  });
});

describe(compareIdentity, () => {
  it('matches a live process with its own identity and not with another start time or boot', async () => {
    const identity = await identifyProcess(process.pid);
    expect(identity?.bootId).toBe(await currentBootId());
    const probe = await probeProcess(process.pid);
    const bootId = await currentBootId();
    if (identity === undefined) throw new Error('this process must be alive');
    expect(compareIdentity(identity, probe, bootId)).toBe('same');
    expect(compareIdentity({ ...identity, startTime: 'proc:1' }, probe, bootId)).toBe('other');
    expect(compareIdentity(identity, probe, 'another-boot')).toBe('other');
    expect(compareIdentity({ pid: process.pid }, probe, bootId)).toBe('unknown');
    expect(compareIdentity(identity, { kind: 'gone', zombie: true }, bootId)).toBe('other');
  });
});
