import { definePlugin, type McpPlugin, RejoinStrategy } from '@nteract-mcp/core';
import { ContainerModule } from 'inversify';
import { ArchiveOptions } from './archive-options.js';
import { ArchiveRejoinStrategy } from './archive-rejoin-strategy.js';

/** The plugin a third party ships: its options and its strategy, bound to core's contribution point. */
export function createArchiveRejoinPlugin(options: ArchiveOptions): McpPlugin {
  return definePlugin({
    id: 'acme.archive-rejoin',
    module: new ContainerModule(({ bind }) => {
      bind(ArchiveOptions).toConstantValue(Object.freeze({ ...options }));
      bind(RejoinStrategy).to(ArchiveRejoinStrategy).inSingletonScope();
    }),
  });
}
