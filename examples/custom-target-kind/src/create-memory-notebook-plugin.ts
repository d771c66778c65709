import { definePlugin, type McpPlugin, NotebookBackend } from '@nteract-mcp/core';
import { ContainerModule } from 'inversify';
import { MemoryNotebookBackend } from './memory-notebook-backend.js';
import { MemoryNotebookStore } from './memory-notebook-store.js';

/**
 * The plugin a third party ships: a target kind of its own (`memory:` notebooks) as one notebook
 * backend, whose notebooks and handles are its own (no daemon, no server): the store of its
 * notebooks and the backend that connects peers to them.
 */
export function createMemoryNotebookPlugin(): McpPlugin {
  return definePlugin({
    id: 'acme.memory',
    module: new ContainerModule(({ bind }) => {
      bind(MemoryNotebookStore).toSelf().inSingletonScope();
      bind(NotebookBackend).to(MemoryNotebookBackend).inSingletonScope();
    }),
  });
}
