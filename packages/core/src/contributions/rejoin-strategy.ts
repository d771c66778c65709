import { type Contribution, defineContributionPoint } from '../di/contribution-point.js';
import type { NotebookTarget } from '../notebook-target/notebook-target.js';
import type { NotebookHandle } from '../ports/notebook-handle.js';

/** What a strategy is given for one attempt. */
export interface RejoinContext {
  readonly peerLabel: string;
  /** Aborted when the attempt is no longer wanted (explicit disconnect, shutdown). */
  readonly signal: AbortSignal;
}

/**
 * The result of one rejoin attempt.
 * - `connected`: the strategy holds a ready handle; core decides whether to publish it.
 * - `retry-later`: transient failure; the target is kept for a later attempt.
 * - `evicted`: definitive (the daemon refused the id, the saved file is gone); recorded as an
 *   `Evicted` drop and never retried.
 */
export type RejoinOutcome =
  | { readonly kind: 'connected'; readonly handle: NotebookHandle }
  | { readonly kind: 'retry-later'; readonly reason: string }
  | { readonly kind: 'evicted'; readonly reason: string };

/**
 * How a lost notebook comes back. Core picks the first contributed strategy whose `supports`
 * accepts the target.
 * Guarantees expected of implementations: `rejoin` only connects and waits for readiness; it never
 * installs a session (only core publishes, under the session-write guard); it closes any handle it
 * does not return.
 */
export interface RejoinStrategy extends Contribution {
  readonly specificationVersion: 'v1';
  supports(target: NotebookTarget): boolean;
  rejoin(target: NotebookTarget, context: RejoinContext): Promise<RejoinOutcome>;
}

/** The point plugins contribute {@link RejoinStrategy}s to (listed in `contributionPoints`). */
export const rejoinStrategyPoint = defineContributionPoint<RejoinStrategy>('core', 'RejoinStrategy', ['v1']);

/** The token a plugin binds its RejoinStrategy to. */
export const RejoinStrategy = rejoinStrategyPoint.token;
