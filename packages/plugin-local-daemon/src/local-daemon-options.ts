import { defineToken } from '@nteract-mcp/core';
import type { RuntimedSocketEnvironment } from '@nteract-mcp/runtimed-protocol';

/** How the child finds the local daemon. Every field is optional; the defaults follow the daemon's own discovery. */
export interface LocalDaemonOptions {
  /** The daemon socket; overrides discovery. */
  readonly socketPath?: string;
  /** Environment read by socket discovery; defaults to `process.env`. */
  readonly env?: RuntimedSocketEnvironment;
  /**
   * How to start the daemon when opening, attaching, creating or listing finds none running
   * (no socket, or connection refused). The command is spawned detached with stdio ignored and
   * `RUNTIMED_SOCKET_PATH` set to the socket in use; the caller then waits up to 15 s for the daemon
   * to answer. Default (`undefined` or `false`): never start one. Identity queries and the event
   * stream never start a daemon, so the watch loop can still observe absence.
   */
  readonly autoStart?: { readonly command: string; readonly args: readonly string[] } | false;
  /** How often the event stream asks the daemon who it is (a `heartbeat` event each time). Default 10 000 ms. */
  readonly heartbeatMs?: number;
  /**
   * Time allowed to connect and for the daemon's first answer, for control answers and the
   * heartbeat. Default 5 000 ms; opening a notebook has at least 60 000 ms (the daemon reads its file).
   */
  readonly connectTimeoutMs?: number;
  /**
   * The environment this client's kernels start from, sent to the daemon when a notebook is opened
   * (after `kernelEnvironmentOf`: no internal variables, no hosted tokens, none that
   * `NTERACT_MCP_KERNEL_ENV_DROP` names). Defaults to `process.env`.
   */
  readonly kernelEnv?: Readonly<Record<string, string | undefined>>;
  /** This client's working directory (an untitled notebook's kernel runs there). Defaults to `process.cwd()`. */
  readonly cwd?: string;
}

export const LocalDaemonOptions = defineToken<LocalDaemonOptions>('plugin-local-daemon', 'LocalDaemonOptions');
