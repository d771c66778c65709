import { type Contribution, defineContributionPoint } from '../di/contribution-point.js';
import type { ChildHandoff } from '../handoff/handoff-contract.js';

/** What the child gives its lifecycle contributions when it starts them. */
export interface ChildLifecycleContext {
  /** What the proxy handed over in the environment (`handoffFromEnvironment`). */
  readonly handoff: ChildHandoff;
  /** The child's working directory; a relative handoff path resolves against it. */
  readonly cwd: string;
  /** The label for connections the child makes on its own: the client's once it initialized, else the proxy's. */
  peerLabel(): string;
  /** Stops the child with `code` (the first request wins; later ones are ignored). */
  requestExit(code: number, why: string): void;
}

/**
 * A service that lives as long as the child process serves: started by the core `ChildRuntime`
 * in contribution order (core's own first, then the plugins' in composition order) and stopped
 * in reverse order. With a handoff the child starts them before it serves and waits, bounded,
 * for the promises `onStart` returns (e.g. the handoff rejoin); otherwise once the client has
 * initialized, so that no daemon or recovery work starts before a valid `initialize`.
 *
 * Guarantees expected of implementations: `onStart` and `onStop` are called at most once each;
 * neither writes to stdout; a rejected promise is logged and does not stop the child.
 */
export interface ChildLifecycleContribution extends Contribution {
  readonly specificationVersion: 'v1';
  /** Starts; the returned promise (if any) says when the contribution is ready for the child to serve. */
  onStart(context: ChildLifecycleContext): void | Promise<void>;
  onStop(): void | Promise<void>;
}

/** The point plugins contribute {@link ChildLifecycleContribution}s to (listed in `contributionPoints`). */
export const childLifecycleContributionPoint = defineContributionPoint<ChildLifecycleContribution>(
  'core',
  'ChildLifecycleContribution',
  ['v1'],
);

/** The token a plugin binds its ChildLifecycleContribution to. */
export const ChildLifecycleContribution = childLifecycleContributionPoint.token;
