import { definePlugin, ExitClassifier, type McpPlugin, TargetKind } from '@nteract-mcp/core';
import { ContainerModule } from 'inversify';
import { LocalDaemonOptions } from './local-daemon-options.js';
import { LocalPathTargetKind } from './local-path-target-kind.js';
import { NotebookIdTargetKind } from './notebook-id-target-kind.js';
import { RuntimedSocketLocator } from './runtimed-socket-locator.js';
import { UpgradeHandoffExitClassifier } from './upgrade-handoff-exit-classifier.js';

/**
 * Notebooks in the local daemon `runtimed`: file paths and notebook UUIDs as targets, daemon
 * socket discovery, and exit 75 as the daemon-upgrade handoff.
 */
export function createLocalDaemonPlugin(options: LocalDaemonOptions = {}): McpPlugin {
  const frozen: LocalDaemonOptions = Object.freeze({ ...options });
  return definePlugin({
    id: 'local-daemon',
    module: new ContainerModule(({ bind }) => {
      bind(LocalDaemonOptions).toConstantValue(frozen);
      bind(RuntimedSocketLocator).toSelf().inSingletonScope();
      bind(TargetKind).to(LocalPathTargetKind).inSingletonScope();
      bind(TargetKind).to(NotebookIdTargetKind).inSingletonScope();
      bind(ExitClassifier).to(UpgradeHandoffExitClassifier).inSingletonScope();
    }),
  });
}
