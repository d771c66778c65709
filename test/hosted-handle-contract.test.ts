import { NotebookTargetResolver } from '@nteract-mcp/core';
import { createTestContainer, describeNotebookHandleContract } from '@nteract-mcp/core/testing';
import { createHostedPlugin } from '@nteract-mcp/plugin-hosted';
import { afterAll, describe, it } from 'vitest';
import { startJupyterServer } from './support/index.js';

/**
 * The hosted plugin's handle (`HostedNotebookHandle`) under the NotebookHandle contract: one real
 * Jupyter Server with a token in a temp root dir for the file, a new notebook file per check
 * (put through the contents API). No second peer is given: a hosted handle promises nothing of
 * changes made by anyone else (the Jupyter Server tells no one of edits to a file; they are seen
 * after a reconnect), so the contract's peer checks are not registered for it.
 */
const token = `tok-${process.pid}-${Date.now().toString(36)}-contract`;
const server = await startJupyterServer({ token });
afterAll(() => server.dispose());

/** A container of its own for each notebook, resolving hosted URLs with the server's token. */
function resolver(): NotebookTargetResolver {
  return createTestContainer({ plugins: [createHostedPlugin({ token, env: {} })] })
    .build()
    .get(NotebookTargetResolver);
}

const emptyNotebook = {
  type: 'notebook',
  format: 'json',
  content: {
    cells: [],
    metadata: { kernelspec: { name: 'python3', display_name: 'Python 3', language: 'python' } },
    nbformat: 4,
    nbformat_minor: 5,
  },
};
let notebooks = 0;

/** Connects a peer to the hosted notebook at `url`, through the `hosted-url` backend of `backends`. */
function connect(backends: NotebookTargetResolver, url: string, peerLabel: string) {
  const target = backends.resolve(url, { cwd: server.rootDir });
  return backends.backendFor(target).connect(target, { peerLabel, signal: new AbortController().signal });
}

await describeNotebookHandleContract(
  'hosted notebooks (HostedNotebookHandle, real Jupyter Server and Python kernel)',
  {
    open: async () => {
      notebooks += 1;
      const path = `contract-${notebooks}.ipynb`;
      const put = await server.api('PUT', `api/contents/${path}`, emptyNotebook);
      if (put.status >= 300) throw new Error(`could not put ${path}: ${put.status}`);
      const url = server.notebookUrl(path);
      const handle = await connect(resolver(), url, 'agent:contract');
      // A hosted notebook is saved only where it is: its own URL identity.
      return { handle, savePath: handle.notebookPath };
    },
    execution: { source: 'print(6 * 7)', outputText: '42', slowSource: 'import time; time.sleep(30)' },
  },
  { describe, it },
);
