import {
  ChildProcessPort,
  definePlugin,
  ExitClassifier,
  type McpPlugin,
  NodeChildProcessPort,
} from '@nteract-mcp/core';
import { ContainerModule } from 'inversify';
import { ChildSupervisor } from './child-supervisor.js';
import { ExitClassifierChain } from './exit-classifier-chain.js';
import { defaultRestartPolicySettings, RestartPolicy, RestartPolicySettings } from './restart-policy.js';
import { UpgradeHandoffExitClassifier } from './upgrade-handoff-exit-classifier.js';

/**
 * The proxy's services in a container: child processes on Node, the exit classifier chain with
 * the contract's upgrade-handoff rule (exit 75), the restart policy and the child supervisor. A
 * composition for the `nteract-mcp` bin lists it first; the child never loads it.
 */
export function createProxyPlugin(): McpPlugin {
  return definePlugin({
    id: 'proxy',
    module: new ContainerModule(({ bind }) => {
      bind(ChildProcessPort).toConstantValue(new NodeChildProcessPort());
      bind(ExitClassifier).to(UpgradeHandoffExitClassifier).inSingletonScope();
      bind(ExitClassifierChain).toSelf().inSingletonScope();
      bind(RestartPolicySettings).toConstantValue(defaultRestartPolicySettings);
      bind(RestartPolicy).toSelf().inSingletonScope();
      bind(ChildSupervisor).toSelf().inSingletonScope();
    }),
  });
}
