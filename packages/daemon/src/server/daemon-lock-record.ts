import type { ProcessIdentity } from '../process/probe-process.js';

/**
 * What a daemon writes into its lock files (JSON): who holds the lock and where it answers.
 * `nonce` tells this daemon's lock from any other's (pids repeat; nonces do not). A lock from an
 * older version holds only a pid: it parses with the other fields absent.
 */
export interface DaemonLockRecord extends ProcessIdentity {
  readonly nonce?: string;
  /** The socket the holder listens on (the data-dir lock may name a socket elsewhere). */
  readonly socket?: string;
  readonly startedAt?: string;
  /** `starting` until the socket is bound, then `serving`. */
  readonly state?: 'starting' | 'serving';
}

/** The record in a lock file's text, or `undefined` when it is not one (empty, garbage). */
export function parseDaemonLockRecord(text: string): DaemonLockRecord | undefined {
  const trimmed = text.trim();
  if (/^\d+$/.test(trimmed)) {
    const pid = Number(trimmed);
    return pid > 0 ? { pid } : undefined;
  }
  let value: unknown;
  try {
    value = JSON.parse(trimmed);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const fields = value as Record<string, unknown>;
  const pid = fields.pid;
  if (typeof pid !== 'number' || !Number.isInteger(pid) || pid <= 0) return undefined;
  const record: Record<string, unknown> = { pid };
  const copy = {
    startTime: 'start_time',
    bootId: 'boot_id',
    nonce: 'nonce',
    socket: 'socket',
    startedAt: 'started_at',
    state: 'state',
  };
  for (const [key, wire] of Object.entries(copy)) {
    if (typeof fields[wire] === 'string') record[key] = fields[wire];
  }
  if (record.state !== 'starting' && record.state !== 'serving') delete record.state;
  return record as unknown as DaemonLockRecord;
}

/** The lock file's text for `record`. */
export function formatDaemonLockRecord(record: DaemonLockRecord): string {
  return `${JSON.stringify({
    pid: record.pid,
    start_time: record.startTime,
    boot_id: record.bootId,
    nonce: record.nonce,
    socket: record.socket,
    started_at: record.startedAt,
    state: record.state,
  })}\n`;
}
