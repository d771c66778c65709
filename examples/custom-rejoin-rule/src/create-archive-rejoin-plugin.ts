import { definePlugin, type McpPlugin, NotebookBackend } from '@nteract-mcp/core';
import { ContainerModule } from 'inversify';
import { ArchiveNotebookBackend } from './archive-notebook-backend.js';
import { ArchiveOptions } from './archive-options.js';

/**
 * The plugin a third party ships: its options and its own target kind, which is one notebook
 * backend (`archive:` targets: parse, connect, and reopen to come back after a loss). It opens its
 * working copies as local files, through the `local-path` kind another plugin of the composition
 * contributes (the local daemon plugin in the distribution).
 */
export function createArchiveRejoinPlugin(options: ArchiveOptions): McpPlugin {
  return definePlugin({
    id: 'acme.archive-rejoin',
    module: new ContainerModule(({ bind }) => {
      bind(ArchiveOptions).toConstantValue(Object.freeze({ ...options }));
      bind(NotebookBackend).to(ArchiveNotebookBackend).inSingletonScope();
    }),
  });
}
