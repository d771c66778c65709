import { StderrLogger, SystemClock } from '@nteract-mcp/foundation';
import { ContainerModule } from 'inversify';
import { NotebookTargetResolver } from '../contributions/notebook-target-resolver.js';
import { bindContributionProvider } from '../di/contribution-provider.js';
import { Clock } from '../ports/clock.js';
import { Logger } from '../ports/logger.js';
import { NodeSourceFileProbe } from '../ports/node/node-source-file-probe.js';
import { SourceFileProbe } from '../ports/source-file-probe.js';
import { contributionPoints } from './contribution-points.js';

/**
 * What every container has: a provider per contribution point of {@link contributionPoints} (so each
 * is validated), the notebook target resolver over the notebook backends, and the Node
 * implementations of the generic ports (clock, stderr logger, file probe). The child's session
 * engine is `createSessionEngineModule`'s; `DaemonPort` is left to a plugin.
 */
export function createCoreModule(): ContainerModule {
  return new ContainerModule((options) => {
    for (const point of contributionPoints) bindContributionProvider(options, point);
    options.bind(Clock).toConstantValue(new SystemClock());
    options.bind(Logger).toConstantValue(new StderrLogger());
    options.bind(SourceFileProbe).toConstantValue(new NodeSourceFileProbe());
    options.bind(NotebookTargetResolver).toSelf().inSingletonScope();
  });
}
