import { childToolContributionPoint } from '../child-server/child-tool-contribution.js';
import { childLifecycleContributionPoint } from '../contributions/child-lifecycle-contribution.js';
import { notebookBackendPoint } from '../contributions/notebook-backend.js';
import { protocolAdmissionPoint } from '../contributions/protocol-admission.js';
import { recoveryContributionPoint } from '../contributions/recovery-contribution.js';
import { rejoinStrategyPoint } from '../contributions/rejoin-strategy.js';
import type { Contribution, ContributionPoint } from '../di/contribution-point.js';

/**
 * Every contribution point there is, in one visible list: each container binds one
 * `ContributionProvider` per entry and validates its contributions when it is built. A plugin
 * contributes by binding the point's token; adding a point means adding it here, nowhere else.
 *
 * - `NotebookBackend`: a kind of notebook target, end to end (parse, connect, reopen to rejoin,
 *   create, list). A new target kind is one backend (examples/custom-rejoin-strategy).
 * - `RejoinStrategy`: optional; how a kind comes back when more than reopening through its backend
 *   is needed (the local daemon's saved-path strategy checks the file first). Without one, core
 *   reopens through the backend.
 * - `RecoveryContribution`: what watches for a lost session and asks for a rejoin (the local
 *   daemon's watch loop, the hosted retry, core's bounded retry).
 * - `ProtocolAdmission`: an MCP era (initialize-based, per-request negotiation).
 * - `ChildToolContribution`: tools a plugin adds to the child server (examples/embedding).
 * - `ChildLifecycleContribution`: services that live as long as the child serves.
 */
export const contributionPoints: readonly ContributionPoint<Contribution>[] = Object.freeze([
  notebookBackendPoint,
  rejoinStrategyPoint,
  recoveryContributionPoint,
  protocolAdmissionPoint,
  childToolContributionPoint,
  childLifecycleContributionPoint,
] as readonly ContributionPoint<never>[] as readonly ContributionPoint<Contribution>[]);
