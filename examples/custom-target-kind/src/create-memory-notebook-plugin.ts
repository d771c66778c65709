import { definePlugin, type McpPlugin, NotebookBackend, RecoveryContribution } from '@nteract-mcp/core';
import { ContainerModule } from 'inversify';
import { MemoryNotebookBackend } from './memory-notebook-backend.js';
import { MemoryNotebookStore } from './memory-notebook-store.js';
import { MemoryRejoin } from './memory-rejoin.js';

/**
 * The plugin a third party ships: a target kind of its own (`memory:` notebooks) as one notebook
 * backend, whose notebooks and handles are its own (no daemon, no server): the store of its
 * notebooks, the backend that connects peers to them, and its recovery (how a session lost when
 * the store restarts comes back).
 */
export function createMemoryNotebookPlugin(): McpPlugin {
  return definePlugin({
    id: 'acme.memory',
    module: new ContainerModule(({ bind }) => {
      bind(MemoryNotebookStore).toSelf().inSingletonScope();
      bind(NotebookBackend).to(MemoryNotebookBackend).inSingletonScope();
      bind(RecoveryContribution).to(MemoryRejoin).inSingletonScope();
    }),
  });
}
