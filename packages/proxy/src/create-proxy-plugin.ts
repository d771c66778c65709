import { ChildProcessPort, definePlugin, type McpPlugin, NodeChildProcessPort } from '@nteract-mcp/core';
import { ContainerModule } from 'inversify';
import { ChildExitClassifier } from './child-exit-classifier.js';
import { ChildSupervisor } from './child-supervisor.js';
import { defaultRestartPolicySettings, RestartPolicy, RestartPolicySettings } from './restart-policy.js';

/**
 * The proxy's services in a container: child processes on Node, the child exit classifier (with
 * the contract's upgrade-handoff rule, exit 75), the restart policy and the child supervisor. A
 * composition for the `nteract-mcp` bin lists it first; the child never loads it.
 */
export function createProxyPlugin(): McpPlugin {
  return definePlugin({
    id: 'proxy',
    module: new ContainerModule(({ bind }) => {
      bind(ChildProcessPort).toConstantValue(new NodeChildProcessPort());
      bind(ChildExitClassifier).toSelf().inSingletonScope();
      bind(RestartPolicySettings).toConstantValue(defaultRestartPolicySettings);
      bind(RestartPolicy).toSelf().inSingletonScope();
      bind(ChildSupervisor).toSelf().inSingletonScope();
    }),
  });
}
