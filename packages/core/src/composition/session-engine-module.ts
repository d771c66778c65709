import { ContainerModule } from 'inversify';
import { ChildToolContribution } from '../child-server/tools/child-tool-contribution.js';
import { CoreChildTools } from '../child-server/tools/core-child-tools.js';
import { ChildRuntime } from '../lifecycle/child-runtime.js';
import { SessionCredentials } from '../ports/session-credentials.js';
import { RecoveryLoop } from '../recovery/recovery-loop.js';
import { KeptCredentials } from '../session/kept-credentials.js';
import { RejoinCoordinator } from '../session/rejoin-coordinator.js';
import { SessionActivation } from '../session/session-activation.js';
import { SessionRecoveryState } from '../session/session-recovery-state.js';
import { SessionSlot } from '../session/session-slot.js';

/**
 * The child's session engine: the session slot and its activations, the rejoin coordinator and
 * recovery state, the recovery loop, the child runtime,
 * the in-memory {@link KeptCredentials} as the session credentials, and core's child tools
 * ({@link CoreChildTools}, the first `ChildToolContribution`, so they lead `tools/list`). Loaded right after
 * `createCoreModule`, before any plugin, by `createMcpContainer`.
 */
export function createSessionEngineModule(): ContainerModule {
  return new ContainerModule((options) => {
    options.bind(SessionSlot).toSelf().inSingletonScope();
    options.bind(SessionActivation).toSelf().inSingletonScope();
    options.bind(RejoinCoordinator).toSelf().inSingletonScope();
    options.bind(SessionRecoveryState).toSelf().inSingletonScope();
    options.bind(KeptCredentials).toSelf().inSingletonScope();
    options.bind(SessionCredentials).toService(KeptCredentials);
    options.bind(RecoveryLoop).toSelf().inSingletonScope();
    options.bind(ChildRuntime).toSelf().inSingletonScope();
    options.bind(ChildToolContribution).to(CoreChildTools).inSingletonScope();
  });
}
