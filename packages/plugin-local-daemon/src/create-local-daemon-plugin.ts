import {
  ChildToolContribution,
  DaemonPort,
  definePlugin,
  type McpPlugin,
  NotebookBackend,
  RecoveryContribution,
} from '@nteract-mcp/core';
import { ContainerModule } from 'inversify';
import { DaemonStarter } from './daemon-starter.js';
import { DaemonWatchLoop } from './daemon-watch-loop.js';
import { LocalDaemonOptions } from './local-daemon-options.js';
import { LocalPathNotebookBackend } from './local-path-notebook-backend.js';
import { NotebookIdNotebookBackend } from './notebook-id-notebook-backend.js';
import { RuntimedDaemonPort } from './runtimed-daemon-port.js';
import { RuntimedSocketLocator } from './runtimed-socket-locator.js';
import { ShowNotebookTool } from './show-notebook-tool.js';

/**
 * Notebooks in the local daemon `runtimed`: notebook backends for file paths and notebook UUIDs, daemon
 * socket discovery, the daemon itself as the {@link DaemonPort} and {@link DaemonStarter}
 * (optionally auto-started), the watch loop (its part of core's recovery loop: daemon events,
 * restarts, incarnation reconciliation), and rejoin by saved path and by UUID.
 */
export function createLocalDaemonPlugin(options: LocalDaemonOptions = {}): McpPlugin {
  const frozen: LocalDaemonOptions = Object.freeze({ ...options });
  return definePlugin({
    id: 'local-daemon',
    module: new ContainerModule(({ bind }) => {
      bind(LocalDaemonOptions).toConstantValue(frozen);
      bind(RuntimedSocketLocator).toSelf().inSingletonScope();
      bind(RuntimedDaemonPort).toSelf().inSingletonScope();
      bind(DaemonPort).toService(RuntimedDaemonPort);
      bind(DaemonStarter).toService(RuntimedDaemonPort);
      bind(NotebookBackend).to(LocalPathNotebookBackend).inSingletonScope();
      bind(NotebookBackend).to(NotebookIdNotebookBackend).inSingletonScope();
      bind(DaemonWatchLoop).toSelf().inSingletonScope();
      bind(RecoveryContribution).toService(DaemonWatchLoop);
      bind(ChildToolContribution).to(ShowNotebookTool).inSingletonScope();
    }),
  });
}
