import { defineToken, type RuntimedSocketEnvironment } from '@nteract-mcp/core';

/** How the child finds the local daemon. Every field is optional; the defaults follow the daemon's own discovery. */
export interface LocalDaemonOptions {
  /** The daemon socket; overrides discovery. */
  readonly socketPath?: string;
  /** Environment read by socket discovery; defaults to `process.env`. */
  readonly env?: RuntimedSocketEnvironment;
}

export const LocalDaemonOptions = defineToken<LocalDaemonOptions>('plugin-local-daemon', 'LocalDaemonOptions');
