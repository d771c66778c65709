import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NotebookTargetResolver } from '@nteract-mcp/core';
import { createTestContainer, describeNotebookHandleContract } from '@nteract-mcp/core/testing';
import { afterAll, describe, it } from 'vitest';
import { createMemoryNotebookPlugin } from './create-memory-notebook-plugin.js';

/** The kind's own handle under core's NotebookHandle contract, reached through its backend as core reaches it. */
const resolver = createTestContainer({ plugins: [createMemoryNotebookPlugin()] })
  .build()
  .get(NotebookTargetResolver);
let notebooks = 0;
/** Where the save check writes its files. */
const saved = mkdtempSync(join(tmpdir(), 'memory-contract-'));
afterAll(() => rmSync(saved, { recursive: true, force: true }));

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
      return {
        handle: await connect(name, 'agent:contract:a'),
        openPeer: () => connect(name, 'agent:contract:b'),
        savePath: join(saved, `${name}.ipynb`),
      };
    },
  },
  { describe, it },
);
