import { compareIdentity, currentBootId, type ProcessIdentity, probeProcess } from './probe-process.js';

export interface TerminateVerifiedOptions {
  /** How long the process may take to exit after SIGTERM before it gets SIGKILL. */
  readonly termGraceMs: number;
  /** How long to wait for it to be gone after SIGKILL. */
  readonly killGraceMs: number;
  /** Signal the process group `-pid` (the process leads its own group), falling back to the pid. */
  readonly group?: boolean;
}

/**
 * How it ended: `gone` (it had already exited, or the pid belongs to another process now: nothing
 * was signalled), `terminated` (exited after SIGTERM), `killed` (after SIGKILL), `unverifiable`
 * (alive, but the platform cannot confirm it is the recorded process: nothing was signalled), or
 * `survived` (still there after SIGKILL, e.g. stuck in the kernel).
 */
export type TerminateOutcome = 'gone' | 'terminated' | 'killed' | 'unverifiable' | 'survived';

/**
 * Stops the process `identity` names, and only that one: its identity (start time, boot id) is
 * checked again before every signal, so a pid that was reused is never signalled. A zombie counts
 * as gone.
 */
export async function terminateVerifiedProcess(
  identity: ProcessIdentity,
  options: TerminateVerifiedOptions,
): Promise<TerminateOutcome> {
  const check = () => recheck(identity);
  const first = await check();
  if (first === 'other') return 'gone';
  if (first === 'unknown') return 'unverifiable';
  signal(identity.pid, 'SIGTERM', options.group === true);
  if (await waitUntilGone(check, options.termGraceMs)) return 'terminated';
  if ((await check()) !== 'same') return 'terminated';
  signal(identity.pid, 'SIGKILL', options.group === true);
  return (await waitUntilGone(check, options.killGraceMs)) ? 'killed' : 'survived';
}

/**
 * Whether the process `identity` names is gone (exited, a zombie, or its pid now another
 * process's) within `timeoutMs`; polls, signals nothing.
 */
export function waitForExit(identity: ProcessIdentity, timeoutMs: number): Promise<boolean> {
  return waitUntilGone(() => recheck(identity), timeoutMs);
}

/** Whether the process `identity` names is still the one running under its pid, now. */
async function recheck(identity: ProcessIdentity): Promise<'same' | 'other' | 'unknown'> {
  return compareIdentity(identity, await probeProcess(identity.pid), await currentBootId());
}

async function waitUntilGone(check: () => Promise<'same' | 'other' | 'unknown'>, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if ((await check()) === 'other') return true;
    if (Date.now() >= deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function signal(pid: number, name: NodeJS.Signals, group: boolean): void {
  if (group) {
    try {
      process.kill(-pid, name);
      return;
    } catch {
      // Not a group leader (or the group is gone): signal the process itself.
    }
  }
  try {
    process.kill(pid, name);
  } catch {
    // Exited in between.
  }
}
