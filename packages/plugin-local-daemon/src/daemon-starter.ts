import { defineToken } from '@nteract-mcp/core';

/**
 * Starts the local daemon when none answers, through the auto-start the plugin was configured
 * with (`LocalDaemonOptions.autoStart`). The watch loop uses it to bring a crashed daemon back
 * without waiting for a tool call.
 *
 * Guarantees expected of implementations: `start` resolves once a daemon answers (one already
 * running counts: several children racing to start one daemon are settled by the daemon's own
 * singleton lock, and a loser connects to the winner); concurrent calls share one attempt; it
 * rejects with a `CoreError` (`daemonUnavailable`) when no daemon answered in time or when
 * starting is not configured (`enabled` is then `false`).
 */
export interface DaemonStarter {
  /** Whether a start is configured at all (`autoStart` given and not `false`). */
  readonly enabled: boolean;
  start(): Promise<void>;
}

export const DaemonStarter = defineToken<DaemonStarter>('plugin-local-daemon', 'DaemonStarter');
