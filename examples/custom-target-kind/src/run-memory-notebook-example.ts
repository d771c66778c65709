import { NotebookTargetResolver, RecoveryLoop, readSessionReport } from '@nteract-mcp/core';
import { startChildServerTestHarness } from '@nteract-mcp/core/testing';
import { createMemoryNotebookPlugin } from './create-memory-notebook-plugin.js';
import { MemoryNotebookStore } from './memory-notebook-store.js';

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
  /**
   * After the store restarted under the session: which recovery noticed the loss (the kind's own,
   * not core's fallback), how the session came back, and the sources it reads.
   */
  readonly afterRestart: {
    readonly recoveredBy: unknown;
    readonly origin: string | undefined;
    readonly sources: readonly string[];
  };
}

/**
 * Composes the third-party plugin in a real container with core's child server (in memory, with
 * core's stand-ins for the local backends), connects a `memory:` target through
 * `connect_notebook`, writes a cell through `create_cell`, reads it from a second peer of the same
 * notebook, and asks to run it. Then the store restarts under the session (its peers' connections
 * lost), and the kind's recovery brings the session back with its cells.
 */
export async function runMemoryNotebookExample(): Promise<ExampleReport> {
  const harness = await startChildServerTestHarness({ plugins: [createMemoryNotebookPlugin()] });
  const recovery = harness.container.get(RecoveryLoop);
  recovery.start({ peerLabel: () => 'example:agent', exit: () => undefined });
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
    harness.container.get(MemoryNotebookStore).restart();
    await new Promise((resolve) => setImmediate(resolve));
    await recovery.idle();
    const listed = await harness.callJson('get_all_cells', { format: 'json' });
    return {
      kinds: resolver.supportedKinds(),
      reportedTarget: readSessionReport(connected)?.target,
      cellCreated: created.isError !== true,
      peerSees,
      runAnswer: run.isError === true ? 'refused' : 'ran',
      afterRestart: {
        recoveredBy: harness.logger.find('lost the notebook; rejoining')[0]?.fields.recovery,
        origin: harness.slot.active?.origin,
        sources: (listed.cells as { source: string }[]).map((cell) => cell.source),
      },
    };
  } finally {
    recovery.stop();
    await harness.close();
  }
}
