import { ContainerModule } from 'inversify';
import { ChildLifecycleContribution } from '../contributions/child-lifecycle-contribution.js';
import '../contributions/exit-classifier.js';
import '../contributions/notebook-backend.js';
import '../contributions/protocol-admission.js';
import '../contributions/recovery-contribution.js';
import '../contributions/rejoin-strategy.js';
import { StderrLogger, SystemClock } from '@nteract-mcp/foundation';
import { NotebookTargetResolver } from '../contributions/notebook-target-resolver.js';
import { bindContributionProviders } from '../di/contribution-provider.js';
import { ChildRuntime } from '../lifecycle/child-runtime.js';
import { Clock } from '../ports/clock.js';
import { Logger } from '../ports/logger.js';
import { NodeSourceFileProbe } from '../ports/node/node-source-file-probe.js';
import { SessionCredentials } from '../ports/session-credentials.js';
import { SourceFileProbe } from '../ports/source-file-probe.js';
import { RecoveryLoop } from '../recovery/recovery-loop.js';
import { KeptCredentials } from '../session/kept-credentials.js';
import { RejoinCoordinator } from '../session/rejoin-coordinator.js';
import { SessionActivation } from '../session/session-activation.js';
import { SessionRecoveryState } from '../session/session-recovery-state.js';
import { SessionSlot } from '../session/session-slot.js';

/**
 * What every container has: a provider per contribution point, core services (the session
 * engine, the recovery loop as the first child lifecycle contribution, the child runtime), and
 * the Node implementations of the generic ports (clock, stderr logger, file probe), and the
 * in-memory {@link KeptCredentials} as the session credentials.
 * `DaemonPort` is left to a plugin.
 */
export function createCoreModule(): ContainerModule {
  return new ContainerModule((options) => {
    bindContributionProviders(options);
    options.bind(Clock).toConstantValue(new SystemClock());
    options.bind(Logger).toConstantValue(new StderrLogger());
    options.bind(SourceFileProbe).toConstantValue(new NodeSourceFileProbe());
    options.bind(NotebookTargetResolver).toSelf().inSingletonScope();
    options.bind(SessionSlot).toSelf().inSingletonScope();
    options.bind(SessionActivation).toSelf().inSingletonScope();
    options.bind(RejoinCoordinator).toSelf().inSingletonScope();
    options.bind(SessionRecoveryState).toSelf().inSingletonScope();
    options.bind(KeptCredentials).toSelf().inSingletonScope();
    options.bind(SessionCredentials).toService(KeptCredentials);
    // Core's own lifecycle contribution, bound first so it starts first: the recovery loop.
    options.bind(RecoveryLoop).toSelf().inSingletonScope();
    options.bind(ChildLifecycleContribution).toService(RecoveryLoop);
    options.bind(ChildRuntime).toSelf().inSingletonScope();
  });
}
