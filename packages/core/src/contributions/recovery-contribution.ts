import { type Contribution, defineContributionPoint } from '../di/contribution-point.js';
import type { NotebookTarget } from '../notebook-target/notebook-target.js';
import type { NotebookHandle } from '../ports/notebook-handle.js';

/**
 * How a call to {@link RecoveryControl.recover} ended.
 * - `idle`: nothing of this contribution's was waiting (or a session was installed, which
 *   supersedes every waiting recovery).
 * - `retry-later`: an attempt failed transiently (`reason` says how); the target is kept.
 * - `settled`: the waiting targets were rejoined, refused for good, or lost to the agent's intent.
 */
export type RecoveryRound =
  | { readonly kind: 'idle' }
  | { readonly kind: 'retry-later'; readonly reason: string }
  | { readonly kind: 'settled' };

/**
 * What the core recovery loop gives a {@link RecoveryContribution}: the targets waiting for it
 * and the one way to bring them back. The loop owns the handoff, the preserved target, their
 * intent epochs and the reported rejoin outcome; a contribution decides only when to try.
 */
export interface RecoveryControl {
  /** The label rejoined sessions connect with (the client's once it initialized, else the proxy's). */
  peerLabel(): string;
  /**
   * The first target waiting for this contribution: the handoff, then the preserved target of
   * a removed session. `undefined` when none waits (an explicit disconnect cancels both).
   */
  pending(): NotebookTarget | undefined;
  /** Keeps the best target of an active session this contribution removed, to bring it back. */
  preserve(target: NotebookTarget): void;
  /**
   * Tries this contribution's waiting targets, the handoff first, through the rejoin
   * coordinator. `verify` is the one check that the connected handle still belongs to the world
   * the attempt started in (see `RejoinRequest.verify`). Nothing is tried over an installed
   * session. Trying marks the contribution as attempting; it says when the attempt is over with
   * {@link RecoveryControl.setAttempting} (a daemon start may go on into the next rejoin).
   */
  recover(verify?: (handle: NotebookHandle) => Promise<boolean>): Promise<RecoveryRound>;
  /** Gives up this contribution's waiting targets; a waiting handoff becomes `failed` with `reason` (the agent's text). */
  giveUp(reason: string): void;
  /** Whether an attempt of this contribution (a daemon start, a rejoin) is running: tool calls wait for it, bounded. */
  setAttempting(attempting: boolean): void;
  /** The daemon's version changed under the child: it stops with the upgrade handoff exit code, once. */
  requestUpgradeExit(from: string, to: string): void;
}

/**
 * A backend's part of the child's recovery loop: what wakes it (daemon events, a retry timer)
 * and the checks only the backend can make (a daemon incarnation). The core `RecoveryLoop`
 * starts every contribution with its {@link RecoveryControl} and asks each waiting target's
 * first contribution whose `handles` accepts it.
 *
 * Guarantees expected of implementations: `handles` is pure; the contribution never writes the
 * slot except to remove sessions of its own backend that are gone; it brings targets back only
 * through {@link RecoveryControl.recover}; after `stop` it schedules nothing and tries nothing.
 */
export interface RecoveryContribution extends Contribution {
  readonly specificationVersion: 'v1';
  /** Whether this contribution brings back targets like `target`. */
  handles(target: NotebookTarget): boolean;
  start(control: RecoveryControl): void;
  stop(): void;
  /** Resolves once no attempt of this contribution is running or queued (timers may be pending). */
  idle(): Promise<void>;
}

/** The point plugins contribute {@link RecoveryContribution}s to (listed in `contributionPoints`). */
export const recoveryContributionPoint = defineContributionPoint<RecoveryContribution>('core', 'RecoveryContribution', [
  'v1',
]);

/** The token a plugin binds its RecoveryContribution to. */
export const RecoveryContribution = recoveryContributionPoint.token;
