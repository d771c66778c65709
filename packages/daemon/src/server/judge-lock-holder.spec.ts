import { describe, expect, it } from 'vitest';
import type { DaemonLockRecord } from './daemon-lock-record.js';
import { judgeLockHolder, type LockHolderObservation } from './judge-lock-holder.js';

const boot = 'b-1';
const holder: DaemonLockRecord = { pid: 4242, startTime: 'proc:1000', bootId: boot, nonce: 'n', socket: '/s' };
const alive = (startTime: string | undefined): LockHolderObservation['process'] => ({ kind: 'alive', startTime });
const observed = (overrides: Partial<LockHolderObservation>): LockHolderObservation => ({
  process: alive('proc:1000'),
  bootId: boot,
  answeringPid: undefined,
  ownPid: 7,
  ...overrides,
});

describe(judgeLockHolder, () => {
  it('keeps a holder that answers the ping as the running daemon', () => {
    expect(judgeLockHolder(holder, observed({ answeringPid: 4242 }))).toEqual({ kind: 'answering' });
  });

  it('does not count an answer from another pid as the holder answering', () => {
    expect(judgeLockHolder(holder, observed({ answeringPid: 99 })).kind).toBe('unreachable');
    expect(judgeLockHolder(holder, observed({ answeringPid: 99, process: { kind: 'gone', zombie: false } })).kind).toBe(
      'dead',
    );
  });

  it('declares a zombie holder dead, even though kill(pid, 0) would still succeed', () => {
    expect(judgeLockHolder(holder, observed({ process: { kind: 'gone', zombie: true } }))).toEqual({
      kind: 'dead',
      why: 'it exited (a zombie nobody reaped)',
    });
  });

  it('declares a holder dead when its pid belongs to a process started at another time', () => {
    expect(judgeLockHolder(holder, observed({ process: alive('proc:2000') }))).toEqual({
      kind: 'dead',
      why: 'its pid now belongs to another process',
    });
  });

  it('declares a lock from an earlier boot dead, whatever runs under the pid now', () => {
    expect(judgeLockHolder(holder, observed({ bootId: 'b-2' }))).toEqual({
      kind: 'dead',
      why: 'the lock is from an earlier boot',
    });
  });

  it('declares a lock naming the judging process dead (a predecessor with the same pid)', () => {
    expect(judgeLockHolder(holder, observed({ ownPid: 4242 })).kind).toBe('dead');
  });

  it('calls a verified, live, silent holder unreachable', () => {
    expect(judgeLockHolder(holder, observed({}))).toEqual({ kind: 'unreachable' });
  });

  it('calls a live silent holder unverifiable when start times cannot be compared', () => {
    const legacy: DaemonLockRecord = { pid: 4242 };
    expect(judgeLockHolder(legacy, observed({})).kind).toBe('unverifiable');
    expect(judgeLockHolder(holder, observed({ process: alive(undefined) })).kind).toBe('unverifiable');
    expect(judgeLockHolder(holder, observed({ process: alive('ps:Tue Dec  1 07:00:00 2026') })).kind).toBe(
      'unverifiable',
    );
    expect(judgeLockHolder(legacy, observed({ answeringPid: 4242 })).kind).toBe('answering');
  });
});
