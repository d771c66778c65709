import { ContainerModule } from 'inversify';
import '../contributions/exit-classifier.js';
import '../contributions/protocol-admission.js';
import '../contributions/rejoin-strategy.js';
import '../contributions/target-kind.js';
import { ChildProcessPort } from '../ports/child-process-port.js';
import { Clock } from '../ports/clock.js';
import { Logger } from '../ports/logger.js';
import { NodeChildProcessPort } from '../ports/node-child-process-port.js';
import { NodeSourceFileProbe } from '../ports/node-source-file-probe.js';
import { SourceFileProbe } from '../ports/source-file-probe.js';
import { StderrLogger } from '../ports/stderr-logger.js';
import { SystemClock } from '../ports/system-clock.js';
import { ChildExitClassification } from '../proxy/child-exit-classification.js';
import { ChildSupervisor } from '../proxy/child-supervisor.js';
import { defaultRestartPolicySettings, RestartPolicy, RestartPolicySettings } from '../proxy/restart-policy.js';
import { RejoinCoordinator } from '../session/rejoin-coordinator.js';
import { SessionActivation } from '../session/session-activation.js';
import { SessionRecoveryState } from '../session/session-recovery-state.js';
import { SessionSlot } from '../session/session-slot.js';
import { NotebookTargetResolver } from '../target/notebook-target-resolver.js';
import { bindContributionProviders } from './contribution-provider.js';

/**
 * What every container has: a provider per contribution point, core services, and the Node
 * implementations of the generic ports (clock, stderr logger, child processes, file probe).
 * `DaemonPort` is left to a plugin.
 */
export function createCoreModule(): ContainerModule {
  return new ContainerModule((options) => {
    bindContributionProviders(options);
    options.bind(Clock).toConstantValue(new SystemClock());
    options.bind(Logger).toConstantValue(new StderrLogger());
    options.bind(ChildProcessPort).toConstantValue(new NodeChildProcessPort());
    options.bind(SourceFileProbe).toConstantValue(new NodeSourceFileProbe());
    options.bind(NotebookTargetResolver).toSelf().inSingletonScope();
    options.bind(ChildExitClassification).toSelf().inSingletonScope();
    options.bind(RestartPolicySettings).toConstantValue(defaultRestartPolicySettings);
    options.bind(RestartPolicy).toSelf().inSingletonScope();
    options.bind(ChildSupervisor).toSelf().inSingletonScope();
    options.bind(SessionSlot).toSelf().inSingletonScope();
    options.bind(SessionActivation).toSelf().inSingletonScope();
    options.bind(RejoinCoordinator).toSelf().inSingletonScope();
    options.bind(SessionRecoveryState).toSelf().inSingletonScope();
  });
}
