import { NotebookTargetResolver } from '@nteract-mcp/core';
import { createTestContainer, describeNotebookHandleContract } from '@nteract-mcp/core/testing';
import { describe, it } from 'vitest';
import { createMemoryNotebookPlugin } from './create-memory-notebook-plugin.js';

/** The kind's own handle under core's NotebookHandle contract, reached through its backend as core reaches it. */
const resolver = createTestContainer({ plugins: [createMemoryNotebookPlugin()] })
  .build()
  .get(NotebookTargetResolver);
let notebooks = 0;

function connect(name: string, peerLabel: string) {
  const target = resolver.resolve(`memory:${name}`, { cwd: '/' });
  return resolver.backendFor(target).connect(target, { peerLabel, signal: new AbortController().signal });
}

await describeNotebookHandleContract(
  'the acme.memory kind (MemoryNotebookHandle)',
  {
    open: async () => {
      notebooks += 1;
      const name = `contract-${notebooks}`;
      return { handle: await connect(name, 'agent:contract:a'), openPeer: () => connect(name, 'agent:contract:b') };
    },
  },
  { describe, it },
);
