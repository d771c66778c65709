import type { DaemonObservation, DaemonPort } from '@nteract-mcp/core';

/** The section of `session_status` the local daemon's backends answer in. */
export const daemonStatusSection = 'daemon';

/**
 * The local daemon as `session_status` shows it, asked of the daemon itself: live with its version,
 * pid and start time; absent with why; or `live: 'unknown'` with the error when it cannot be asked
 * now. Never throws.
 */
export async function describeDaemonStatus(daemon: DaemonPort): Promise<Record<string, unknown>> {
  let observation: DaemonObservation;
  try {
    observation = await daemon.queryInfo();
  } catch (error) {
    return { live: 'unknown', error: error instanceof Error ? error.message : String(error) };
  }
  if (observation.kind === 'absent') return { live: false, reason: observation.reason };
  const { info } = observation;
  return { live: true, version: info.version, pid: info.incarnation.pid, started_at: info.incarnation.startedAt };
}
