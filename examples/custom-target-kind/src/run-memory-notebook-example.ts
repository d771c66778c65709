import { NotebookTargetResolver, readSessionReport } from '@nteract-mcp/core';
import { startChildServerTestHarness } from '@nteract-mcp/core/testing';
import { createMemoryNotebookPlugin } from './create-memory-notebook-plugin.js';

export interface ExampleReport {
  readonly kinds: readonly string[];
  /** The target the child reports for the session `connect_notebook(url="memory:scratch")` opened. */
  readonly reportedTarget: string | null | undefined;
  /** A cell written through a notebook tool on the memory notebook. */
  readonly cellCreated: boolean;
  /** The sources another peer of `memory:scratch` (a second connection through the backend) reads. */
  readonly peerSees: readonly string[];
  /** What running a cell answers: the kind has no kernel. */
  readonly runAnswer: 'refused' | 'ran';
}

/**
 * Composes the third-party plugin in a real container with core's child server (in memory, with
 * core's stand-ins for the local backends), connects a `memory:` target through
 * `connect_notebook`, writes a cell through `create_cell`, reads it from a second peer of the same
 * notebook, and asks to run it.
 */
export async function runMemoryNotebookExample(): Promise<ExampleReport> {
  const harness = await startChildServerTestHarness({ plugins: [createMemoryNotebookPlugin()] });
  try {
    const resolver = harness.container.get(NotebookTargetResolver);
    const connected = await harness.call('connect_notebook', { url: 'memory:scratch' });
    const created = await harness.call('create_cell', { source: '# notes kept in memory', cell_type: 'markdown' });
    const target = resolver.resolve('memory:scratch', { cwd: harness.cwd });
    const peer = await resolver
      .backendFor(target)
      .connect(target, { peerLabel: 'example:peer', signal: new AbortController().signal });
    const peerSees = (await peer.listCells()).map((cell) => cell.source);
    await peer.close();
    const run = await harness.call('create_cell', { source: 'print(1)', and_run: true });
    return {
      kinds: resolver.supportedKinds(),
      reportedTarget: readSessionReport(connected)?.target,
      cellCreated: created.isError !== true,
      peerSees,
      runAnswer: run.isError === true ? 'refused' : 'ran',
    };
  } finally {
    await harness.close();
  }
}
