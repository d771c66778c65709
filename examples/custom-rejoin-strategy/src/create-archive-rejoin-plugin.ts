import { definePlugin, type McpPlugin, NotebookBackend, RejoinStrategy } from '@nteract-mcp/core';
import { ContainerModule } from 'inversify';
import { ArchiveNotebookBackend } from './archive-notebook-backend.js';
import { ArchiveOptions } from './archive-options.js';
import { ArchiveRejoinStrategy } from './archive-rejoin-strategy.js';

/**
 * The plugin a third party ships: its options, its own target kind (`archive:` targets, a notebook
 * backend) and its rejoin strategy, bound to core's contribution points. It needs a `DaemonPort`,
 * which another plugin of the composition binds (the local daemon plugin in the distribution).
 */
export function createArchiveRejoinPlugin(options: ArchiveOptions): McpPlugin {
  return definePlugin({
    id: 'acme.archive-rejoin',
    module: new ContainerModule(({ bind }) => {
      bind(ArchiveOptions).toConstantValue(Object.freeze({ ...options }));
      bind(NotebookBackend).to(ArchiveNotebookBackend).inSingletonScope();
      bind(RejoinStrategy).to(ArchiveRejoinStrategy).inSingletonScope();
    }),
  });
}
