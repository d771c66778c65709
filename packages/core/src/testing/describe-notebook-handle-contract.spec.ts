import { describe, it } from 'vitest';
import { describeNotebookHandleContract } from './describe-notebook-handle-contract.js';
import { FakeNotebookHandle } from './fake-notebook-handle.js';

/** Core's fake answers `print(<expression>)` with the expression's digits, as a kernel would print them. */
const printingExecutor = (cell: { readonly source: string }) => ({
  status: 'ok' as const,
  outputs: [{ output_type: 'stream', name: 'stdout', text: `${cell.source.replace(/^print\((.*)\)$/, '$1')}\n` }],
});

await describeNotebookHandleContract(
  'core’s fake handle (with peers modelled)',
  {
    open: async () => ({ handle: new FakeNotebookHandle({ executor: printingExecutor, peers: true }) }),
    execution: { source: 'print(42)', outputText: '42' },
  },
  { describe, it },
);

await describeNotebookHandleContract(
  'core’s fake handle (no kernel, no peers)',
  { open: async () => ({ handle: new FakeNotebookHandle() }) },
  { describe, it },
);
