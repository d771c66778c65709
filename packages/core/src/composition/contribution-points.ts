import { childToolContributionPoint } from '../child-server/tools/child-tool-contribution.js';
import { clientExtensionPoint } from '../contributions/client-extension.js';
import { notebookBackendPoint } from '../contributions/notebook-backend.js';
import { protocolAdmissionPoint } from '../contributions/protocol-admission.js';
import { recoveryContributionPoint } from '../contributions/recovery-contribution.js';
import type { Contribution, ContributionPoint } from '../di/contribution-point.js';

/**
 * Every contribution point there is, in one visible list: each container binds one
 * `ContributionProvider` per entry and validates its contributions when it is built. A plugin
 * contributes by binding the point's token; adding a point means adding it here, nowhere else.
 *
 * - `NotebookBackend`: a kind of notebook target, end to end: parse, connect, create, list, and
 *   `reopen`, its way back after a loss (core rejoins every kind through it). A new target kind is
 *   one backend (examples/custom-target-kind, with its own NotebookHandle).
 * - `RecoveryContribution`: what watches for a lost session and asks for a rejoin (the local
 *   daemon's watch loop, the hosted retry, core's bounded retry).
 * - `ProtocolAdmission`: an MCP era (initialize-based, per-request negotiation; a third party's:
 *   examples/custom-protocol-era).
 * - `ChildToolContribution`: tools a plugin adds to the child server (examples/embedding).
 * - `ClientExtension`: a protocol extension a client may declare, and what the server adds for a
 *   client that did (announced capability, resources, tool `_meta`, structured results).
 */
export const contributionPoints: readonly ContributionPoint<Contribution>[] = Object.freeze([
  notebookBackendPoint,
  recoveryContributionPoint,
  protocolAdmissionPoint,
  childToolContributionPoint,
  clientExtensionPoint,
] as readonly ContributionPoint<never>[] as readonly ContributionPoint<Contribution>[]);
