import { type Contribution, defineContributionPoint } from '../../di/contribution-point.js';
import type { ChildServerDependencies } from '../child-server-dependencies.js';
import type { RegisteredChildTool } from './child-tool-registry.js';

/**
 * Tools a plugin adds to the child server (build them with `defineChildTool`); core's own session
 * and notebook tools come the same way, bound first. Their names must not clash with another
 * tool's: the server refuses to start when two tools share a name. Every call gets the steps its
 * tool declares (`session`, `task`, `inputRounds`, `confirm`) and its result the session report,
 * for a plugin's tool as for core's.
 */
export interface ChildToolContribution extends Contribution {
  readonly specificationVersion: 'v1';
  /** The tools, made for one child server (`services`: its session engine, ports and per-server state). */
  tools(services: ChildServerDependencies): readonly RegisteredChildTool[];
}

/** The point plugins contribute {@link ChildToolContribution}s to (listed in `contributionPoints`). */
export const childToolContributionPoint = defineContributionPoint<ChildToolContribution>(
  'core',
  'ChildToolContribution',
  ['v1'],
);

/** The token a plugin binds its ChildToolContribution to. */
export const ChildToolContribution = childToolContributionPoint.token;
