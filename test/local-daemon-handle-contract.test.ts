import { join } from 'node:path';
import { DaemonPort } from '@nteract-mcp/core';
import { createTestContainer, describeNotebookHandleContract } from '@nteract-mcp/core/testing';
import { startTestDaemon } from '@nteract-mcp/daemon/testing';
import { createLocalDaemonPlugin } from '@nteract-mcp/plugin-local-daemon';
import { afterAll, describe, it } from 'vitest';

/**
 * The local daemon's handle (`RuntimedNotebookHandle`) under the NotebookHandle contract: one real
 * `runtimed` with Python kernels for the file, a new notebook file per check, and a second peer
 * opening the same file.
 */
const daemon = await startTestDaemon(['--keep-alive-ms', '1000']);
afterAll(() => daemon.dispose());
const port = createTestContainer({ plugins: [createLocalDaemonPlugin({ socketPath: daemon.socketPath })] })
  .build()
  .get(DaemonPort);
let notebooks = 0;

await describeNotebookHandleContract(
  'the local daemon (RuntimedNotebookHandle, real runtimed and Python kernel)',
  {
    open: async () => {
      notebooks += 1;
      const path = join(daemon.dir, `contract-${notebooks}.ipynb`);
      return {
        handle: await port.openNotebook(path, { peerLabel: 'agent:contract:a' }),
        openPeer: () => port.openNotebook(path, { peerLabel: 'agent:contract:b' }),
        savePath: join(daemon.dir, `contract-${notebooks}-saved.ipynb`),
      };
    },
    execution: { source: 'print(6 * 7)', outputText: '42', slowSource: 'import time; time.sleep(30)' },
  },
  { describe, it },
);
