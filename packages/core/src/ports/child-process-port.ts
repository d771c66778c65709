import type { Duplex, Readable, Writable } from 'node:stream';
import { defineToken } from '../di/define-token.js';

export interface ChildSpawnSpec {
  readonly command: string;
  readonly args: readonly string[];
  /** The complete environment of the child (not merged with ours). */
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly cwd?: string;
  /**
   * Open the credential channel: a private pipe on the child's file descriptor
   * `credentialChannelFd` (`handoff/credential-channel.ts`), given back as the handle's `credentials`.
   */
  readonly credentialChannel?: boolean;
}

/** How a child ended. `spawnError` is set when it never started (e.g. the binary is missing). */
export interface ChildExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly spawnError?: string;
}

/**
 * A running child with piped stdin/stdout; its stderr goes to ours.
 * Guarantees: `exited` resolves exactly once, after stdout has ended, also when spawning failed.
 */
export interface ChildProcessHandle {
  readonly pid: number | undefined;
  readonly stdin: Writable;
  readonly stdout: Readable;
  /** The parent's end of the credential channel, when the spec asked for one and the child started. */
  readonly credentials?: Duplex;
  readonly exited: Promise<ChildExit>;
  /** Sends a signal (default SIGTERM); does nothing once the child has exited. */
  kill(signal?: NodeJS.Signals): void;
}

/**
 * Starts child processes for the proxy.
 * Guarantees: `spawn` does not throw for a missing binary; the failure arrives in `exited`.
 * Does not guarantee: that the child dies with us (the supervisor kills it on the way out).
 */
export interface ChildProcessPort {
  spawn(spec: ChildSpawnSpec): ChildProcessHandle;
}

export const ChildProcessPort = defineToken<ChildProcessPort>('core', 'ChildProcessPort');

/**
 * What a child exit means to its supervisor:
 * - `crash`: restart, charged to the crash budget.
 * - `handoff`: intentional (e.g. exit 75 on a daemon upgrade); restart at once, not charged.
 * - `clean-stop`: the child stopped on purpose; do not restart by itself.
 * - `fatal`: restarting cannot help (bad configuration); stop and report.
 */
export type ChildExitClass = 'crash' | 'handoff' | 'clean-stop' | 'fatal';
