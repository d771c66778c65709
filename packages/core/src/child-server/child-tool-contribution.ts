import { type Contribution, defineContributionPoint } from '../di/contribution-point.js';
import type { RegisteredChildTool } from './child-tool-registry.js';

/**
 * Tools a plugin adds to the child server, next to the session and notebook tools (build them
 * with `defineChildTool`). Their names must not clash with another tool's: the server refuses to
 * start when two tools share a name. Their results get the session report like every tool's.
 */
export interface ChildToolContribution extends Contribution {
  readonly specificationVersion: 'v1';
  tools(): readonly RegisteredChildTool[];
}

/** The point plugins contribute {@link ChildToolContribution}s to (listed in `contributionPoints`). */
export const childToolContributionPoint = defineContributionPoint<ChildToolContribution>(
  'core',
  'ChildToolContribution',
  ['v1'],
);

/** The token a plugin binds its ChildToolContribution to. */
export const ChildToolContribution = childToolContributionPoint.token;
