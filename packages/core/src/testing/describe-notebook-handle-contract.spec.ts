import { describe, expect, it } from 'vitest';
import type { InsertCellRequest, MutationOptions, NotebookCell } from '../ports/notebook-handle.js';
import { describeNotebookHandleContract } from './describe-notebook-handle-contract.js';
import { FakeNotebookHandle } from './fake-notebook-handle.js';
import { ContractViolation } from './notebook-handle-contract-support.js';

/** Core's fake answers `print(<expression>)` with the expression's digits, as a kernel would print them. */
const printingExecutor = (cell: { readonly source: string }) =>
  cell.source === 'sleep'
    ? { status: 'running' as const, outputs: [] }
    : {
        status: 'ok' as const,
        outputs: [{ output_type: 'stream', name: 'stdout', text: `${cell.source.replace(/^print\((.*)\)$/, '$1')}\n` }],
      };

await describeNotebookHandleContract(
  'core’s fake handle (with peers modelled)',
  {
    open: async () => {
      const handle = new FakeNotebookHandle({ executor: printingExecutor, peers: true });
      // The fake's interrupt answers what a test scripts; an idle kernel's answer is this.
      handle.interruptOutcome = 'nothing_running';
      return { handle, savePath: '/notebooks/saved.ipynb' };
    },
    execution: { source: 'print(42)', outputText: '42', slowSource: 'sleep' },
  },
  { describe, it },
);

await describeNotebookHandleContract(
  'core’s fake handle (no kernel, no peers)',
  { open: async () => ({ handle: new FakeNotebookHandle() }) },
  { describe, it },
);

/** The contract's checks, by title, registered through a runner that only records them (to run them by hand). */
async function registeredChecks(open: () => FakeNotebookHandle): Promise<Map<string, () => Promise<void>>> {
  const checks = new Map<string, () => Promise<void>>();
  await describeNotebookHandleContract(
    'a handle that breaks it',
    { open: async () => ({ handle: open() }) },
    { describe: (_name, body) => body(), it: (title, body) => void checks.set(title, body) },
  );
  return checks;
}

/** Forgets idempotency keys: a replayed insert is applied again. */
class ReplayingTwice extends FakeNotebookHandle {
  public override insertCell(request: InsertCellRequest, options?: MutationOptions): Promise<NotebookCell> {
    return super.insertCell(request, { ...options, idempotencyKey: undefined });
  }
}

/** Still answers cells after it closed. */
class AnsweringAfterClose extends FakeNotebookHandle {
  public override async listCells(): Promise<readonly NotebookCell[]> {
    return [];
  }
}

describe('the NotebookHandle contract, against handles that break it', () => {
  it('fails a handle that applies a replayed insert twice', async () => {
    const checks = await registeredChecks(() => new ReplayingTwice());
    await expect(checks.get('applies a replayed insert once and answers the first result')?.()).rejects.toThrow(
      ContractViolation,
    );
  });

  it('fails a handle that still answers after close', async () => {
    const checks = await registeredChecks(() => new AnsweringAfterClose());
    await expect(checks.get('rejects every call with handleClosed after close')?.()).rejects.toThrow(
      /listCells after close resolved; it must reject/,
    );
  });

  it('registers no check of a capability the handle lacks, and none that runs code without a kernel', async () => {
    const titles = [...(await registeredChecks(() => new FakeNotebookHandle())).keys()];
    expect(titles.filter((title) => /change log|undoes|documentVersion|runs a cell|peer/.test(title))).toEqual([]);
    expect(titles).toContain('rejects every call with handleClosed after close');
  });
});
