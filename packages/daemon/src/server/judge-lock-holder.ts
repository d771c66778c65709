import { compareIdentity, type ProcessProbe } from '../process/probe-process.js';
import type { DaemonLockRecord } from './daemon-lock-record.js';

/** What was observed about a lock's holder, all probed just now. */
export interface LockHolderObservation {
  /** The holder's pid, probed. */
  readonly process: ProcessProbe;
  /** This machine's boot id now (`undefined` off Linux). */
  readonly bootId: string | undefined;
  /** The pid that answered a protocol ping on the holder's socket, or `undefined` if none did. */
  readonly answeringPid: number | undefined;
  /** The pid of the process judging (a lock naming it, without its nonce, is a dead predecessor's). */
  readonly ownPid: number;
}

/**
 * - `answering`: the holder answers on its socket: it is the running daemon.
 * - `dead`: the holder is gone (exited, a zombie, another boot, or the pid was reused by an
 *   unrelated process): the lock is stale and may be taken over; nothing may be signalled.
 * - `unreachable`: the holder runs (identity verified) but does not answer: it may be starting;
 *   after a grace it may be terminated by its pid.
 * - `unverifiable`: a process with the holder's pid runs, but the lock (an older version's) or
 *   the platform gives no start time to confirm it is the holder; it must not be signalled.
 */
export type LockHolderVerdict =
  | { readonly kind: 'answering' }
  | { readonly kind: 'dead'; readonly why: string }
  | { readonly kind: 'unreachable' }
  | { readonly kind: 'unverifiable' };

/** Decides what a lock's holder is from what cannot lie: a protocol answer, and the process's identity. */
export function judgeLockHolder(record: DaemonLockRecord, observed: LockHolderObservation): LockHolderVerdict {
  if (observed.answeringPid !== undefined && observed.answeringPid === record.pid) return { kind: 'answering' };
  if (record.pid === observed.ownPid) return { kind: 'dead', why: 'its pid is ours now' };
  const { process } = observed;
  if (process.kind === 'gone') {
    return { kind: 'dead', why: process.zombie ? 'it exited (a zombie nobody reaped)' : 'no such process' };
  }
  switch (compareIdentity(record, process, observed.bootId)) {
    case 'same':
      return { kind: 'unreachable' };
    case 'other':
      return {
        kind: 'dead',
        why:
          record.bootId !== undefined && observed.bootId !== undefined && record.bootId !== observed.bootId
            ? 'the lock is from an earlier boot'
            : 'its pid now belongs to another process',
      };
    case 'unknown':
      return { kind: 'unverifiable' };
  }
}
