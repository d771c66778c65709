import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';

/**
 * What can be told about a process id now. `gone`: no such process, or a zombie (it has exited and
 * only waits to be reaped: under a container init that never reaps it stays so for good).
 * `alive`: it runs; `startTime` identifies this process among all that ever had the pid (absent
 * when the platform cannot tell), prefixed by how it was read (`proc:` clock ticks since boot
 * from `/proc/<pid>/stat`, `ps:` the `lstart` column), so only like is compared with like.
 */
export type ProcessProbe =
  | { readonly kind: 'gone'; readonly zombie: boolean }
  | { readonly kind: 'alive'; readonly startTime: string | undefined };

/** Who a process is, as far as the platform lets us tell: what a lock or kernel record stores. */
export interface ProcessIdentity {
  readonly pid: number;
  readonly startTime?: string;
  /** `/proc/sys/kernel/random/boot_id` (Linux): a pid and start time are only meaningful within one boot. */
  readonly bootId?: string;
}

let procAvailable: Promise<boolean> | undefined;
let bootIdRead: Promise<string | undefined> | undefined;

/**
 * How to probe: `auto` (the default) uses `/proc` where it exists, else `ps`, else `signal`;
 * the others force one way (for tests). `signal` (`kill(pid, 0)`) cannot see zombies or start times.
 */
export type ProbeMethod = 'auto' | 'proc' | 'ps' | 'signal';

/** Probes `pid`: Linux `/proc/<pid>/stat` (state and field 22, starttime), else `ps`, else `kill(pid, 0)`. */
export async function probeProcess(pid: number, method: ProbeMethod = 'auto'): Promise<ProcessProbe> {
  if (!Number.isInteger(pid) || pid <= 0) return { kind: 'gone', zombie: false };
  if (method === 'auto') {
    procAvailable ??= readFile('/proc/self/stat', 'utf8').then(
      () => true,
      () => false,
    );
  }
  if (method === 'proc' || (method === 'auto' && (await procAvailable))) return probeWithProc(pid);
  if (method !== 'signal') {
    const fromPs = await probeWithPs(pid);
    if (fromPs !== undefined) return fromPs;
  }
  return signalZero(pid) ? { kind: 'alive', startTime: undefined } : { kind: 'gone', zombie: false };
}

/** This machine's boot id, or `undefined` where there is none (non-Linux). */
export function currentBootId(): Promise<string | undefined> {
  bootIdRead ??= readFile('/proc/sys/kernel/random/boot_id', 'utf8').then(
    (text) => text.trim() || undefined,
    () => undefined,
  );
  return bootIdRead;
}

/** The identity of a process that is alive now (`undefined` when it is gone). */
export async function identifyProcess(pid: number): Promise<ProcessIdentity | undefined> {
  const probe = await probeProcess(pid);
  if (probe.kind === 'gone') return undefined;
  const bootId = await currentBootId();
  return {
    pid,
    ...(probe.startTime === undefined ? {} : { startTime: probe.startTime }),
    ...(bootId === undefined ? {} : { bootId }),
  };
}

/**
 * Whether `probe` (taken now, on the boot `bootId`) shows the very process `identity` recorded:
 * `same`, `other` (gone, a zombie, another boot, or the pid now belongs to another process) or
 * `unknown` (alive, but start times cannot be compared).
 */
export function compareIdentity(
  identity: ProcessIdentity,
  probe: ProcessProbe,
  bootId: string | undefined,
): 'same' | 'other' | 'unknown' {
  if (probe.kind === 'gone') return 'other';
  if (identity.bootId !== undefined && bootId !== undefined && identity.bootId !== bootId) return 'other';
  const recorded = identity.startTime;
  const now = probe.startTime;
  if (recorded === undefined || now === undefined || scheme(recorded) !== scheme(now)) return 'unknown';
  return recorded === now ? 'same' : 'other';
}

function scheme(startTime: string): string {
  return startTime.slice(0, startTime.indexOf(':') + 1);
}

async function probeWithProc(pid: number): Promise<ProcessProbe> {
  let text: string;
  try {
    text = await readFile(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return { kind: 'gone', zombie: false };
  }
  // The command name (field 2) is in parentheses and may itself contain spaces or ')'.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  const state = fields[0];
  if (state === 'Z' || state === 'X' || state === 'x') return { kind: 'gone', zombie: state === 'Z' };
  const startTime = fields[19];
  return { kind: 'alive', startTime: startTime && /^\d+$/.test(startTime) ? `proc:${startTime}` : undefined };
}

function probeWithPs(pid: number): Promise<ProcessProbe | undefined> {
  return new Promise((resolve) => {
    execFile(
      'ps',
      ['-o', 'stat=', '-o', 'lstart=', '-p', String(pid)],
      { timeout: 5000, env: { ...process.env, LC_ALL: 'C', TZ: 'UTC' } },
      (error, stdout) => {
        const line = String(stdout ?? '').trim();
        if (line === '') {
          // ps exits 1 with no output for a pid that does not exist; any other failure: no answer.
          resolve(error && (error as { code?: unknown }).code === 1 ? { kind: 'gone', zombie: false } : undefined);
          return;
        }
        const [state = '', ...start] = line.split(/\s+/);
        if (state.startsWith('Z')) resolve({ kind: 'gone', zombie: true });
        else resolve({ kind: 'alive', startTime: start.length > 0 ? `ps:${start.join(' ')}` : undefined });
      },
    );
  });
}

function signalZero(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
