import type { NotebookCellChange, NotebookHandle, NotebookHandleCloseReason } from '../ports/notebook-handle.js';
import {
  type ContractNotebook,
  type ContractTestApi,
  ensure,
  ensureEqual,
  ensureRejectsWith,
  eventually,
  type NotebookHandleContractSetup,
  outputsText,
} from './notebook-handle-contract-support.js';

/** What one check is given: the notebook, the handle's ids of the cells it had when opened, and the timings. */
interface CheckContext {
  readonly notebook: ContractNotebook;
  readonly handle: NotebookHandle;
  /** The ids of the cells the new notebook had (a backend may start one with an empty cell). */
  readonly initialIds: readonly string[];
  readonly settleMs: number;
  /** Opens a peer (closed with the check), when the backend has peers. */
  readonly openPeer: () => Promise<NotebookHandle>;
}

/** The listed cell ids of `handle`. */
async function ids(handle: NotebookHandle): Promise<string[]> {
  return (await handle.listCells()).map((cell) => cell.id);
}

/**
 * Registers the contract of the {@link NotebookHandle} port against one backend: every check opens
 * a fresh notebook through `setup.open()`, and closes its handles and disposes it afterwards. It
 * checks what the port's documentation promises and nothing more; a check that needs a capability
 * the port makes optional (`getExecutionPage`, `cancelExecution`, `runScratch`, `onDidChangeCells`,
 * `getChanges`, `undo`, `documentVersion`), a kernel (`setup.execution`) or a second peer
 * (`openPeer`) is registered only when the backend's first notebook has it.
 *
 * The registration is asynchronous (the capabilities are read from a handle): call it in a test
 * file's top level with `await`, as vitest allows.
 */
export async function describeNotebookHandleContract(
  name: string,
  setup: NotebookHandleContractSetup,
  test: ContractTestApi,
): Promise<void> {
  const probe = await setup.open();
  const capabilities = {
    executionPage: typeof probe.handle.getExecutionPage === 'function',
    cancelExecution: typeof probe.handle.cancelExecution === 'function',
    runScratch: typeof probe.handle.runScratch === 'function',
    changeEvents: typeof probe.handle.onDidChangeCells === 'function',
    changeLog: typeof probe.handle.getChanges === 'function',
    undo: typeof probe.handle.undo === 'function',
    documentVersion: typeof probe.handle.documentVersion === 'number',
    peers: typeof probe.openPeer === 'function',
    save: probe.savePath !== undefined,
  };
  await probe.handle.close();
  await probe.dispose?.();
  const execution = setup.execution;
  const settleMs = setup.settleMs ?? 10_000;
  const timeoutMs = setup.timeoutMs ?? 60_000;

  const check = (title: string, body: (context: CheckContext) => Promise<void>): void => {
    test.it(
      title,
      async () => {
        const notebook = await setup.open();
        const peers: NotebookHandle[] = [];
        try {
          await notebook.handle.waitUntilReady();
          const openPeer = async (): Promise<NotebookHandle> => {
            ensure(notebook.openPeer !== undefined, 'the backend opened a peer before and cannot now');
            const peer = await notebook.openPeer();
            peers.push(peer);
            await peer.waitUntilReady();
            return peer;
          };
          await body({ notebook, handle: notebook.handle, initialIds: await ids(notebook.handle), settleMs, openPeer });
        } finally {
          for (const handle of [notebook.handle, ...peers]) await handle.close();
          await notebook.dispose?.();
        }
      },
      timeoutMs,
    );
  };

  test.describe(`NotebookHandle contract: ${name}`, () => {
    check('is ready once waitUntilReady resolves: the document ready, the runtime settled', async ({ handle }) => {
      const readiness = await handle.waitUntilReady();
      ensureEqual(readiness.document, 'ready', 'readiness.document');
      ensure(readiness.runtime !== 'pending', `readiness.runtime is still pending after waitUntilReady`);
      ensure(handle.notebookId.length > 0, 'notebookId is empty');
      ensure(!handle.isClosed && handle.closedReason === undefined, 'a fresh handle says it is closed');
    });

    check('lists cells in order: appended at the end, inserted at an index', async ({ handle, initialIds }) => {
      const first = await handle.insertCell({ source: 'first = 1', cellType: 'code' });
      ensureEqual([first.source, first.cellType], ['first = 1', 'code'], 'the inserted cell');
      const second = await handle.insertCell({ source: '# second', cellType: 'markdown' });
      ensureEqual(await ids(handle), [...initialIds, first.id, second.id], 'cells after two appends');
      const top = await handle.insertCell({ source: 'top', cellType: 'raw', index: 0 });
      const middle = await handle.insertCell({ source: 'middle', cellType: 'code', index: initialIds.length + 2 });
      ensureEqual(
        await ids(handle),
        [top.id, ...initialIds, first.id, middle.id, second.id],
        'cells after inserts at index 0 and in the middle',
      );
      const read = await handle.getCell(second.id);
      ensureEqual([read.id, read.source, read.cellType], [second.id, '# second', 'markdown'], 'getCell');
    });

    check('updates a cell: its source and its type, and no other cell', async ({ handle }) => {
      const cell = await handle.insertCell({ source: 'a = 1', cellType: 'code' });
      const other = await handle.insertCell({ source: 'b = 2', cellType: 'code' });
      const updated = await handle.updateCell(cell.id, { source: 'a = 10' });
      ensureEqual([updated.id, updated.source], [cell.id, 'a = 10'], 'the updated cell');
      ensureEqual((await handle.getCell(cell.id)).source, 'a = 10', 'the source read after the update');
      const retyped = await handle.updateCell(cell.id, { cellType: 'markdown' });
      ensureEqual([retyped.cellType, retyped.source], ['markdown', 'a = 10'], 'the cell after a type change');
      ensureEqual((await handle.getCell(other.id)).source, 'b = 2', 'the other cell');
    });

    check('deletes a cell: gone from the list, getCell then rejects cellNotFound', async ({ handle, initialIds }) => {
      const kept = await handle.insertCell({ source: 'kept', cellType: 'code' });
      const gone = await handle.insertCell({ source: 'gone', cellType: 'code' });
      await handle.deleteCell(gone.id);
      ensureEqual(await ids(handle), [...initialIds, kept.id], 'cells after the delete');
      await ensureRejectsWith(() => handle.getCell(gone.id), 'cellNotFound', 'getCell of a deleted cell', settleMs);
    });

    check('moves a cell after another, or to the start', async ({ handle, initialIds }) => {
      const a = await handle.insertCell({ source: 'a', cellType: 'code' });
      const b = await handle.insertCell({ source: 'b', cellType: 'code' });
      const c = await handle.insertCell({ source: 'c', cellType: 'code' });
      await handle.moveCell(c.id, a.id);
      ensureEqual(await ids(handle), [...initialIds, a.id, c.id, b.id], 'cells after moving c after a');
      await handle.moveCell(b.id, undefined);
      ensureEqual(await ids(handle), [b.id, ...initialIds, a.id, c.id], 'cells after moving b to the start');
    });

    check('clears a cell’s outputs', async ({ handle }) => {
      const cell = await handle.insertCell({ source: execution?.source ?? 'x = 1', cellType: 'code' });
      if (execution) {
        await handle.executeCell(cell.id);
        ensure((await handle.getCell(cell.id)).outputs.length > 0, 'the executed cell has no outputs to clear');
      }
      await handle.clearOutputs(cell.id);
      ensureEqual((await handle.getCell(cell.id)).outputs, [], 'outputs after clearOutputs');
    });

    check('rejects getCell of an unknown id with cellNotFound', async ({ handle }) => {
      await ensureRejectsWith(() => handle.getCell('no-such-cell'), 'cellNotFound', 'getCell(unknown id)', settleMs);
    });

    check('applies a replayed insert once and answers the first result', async ({ handle, initialIds }) => {
      const key = `contract-insert-${Date.now()}`;
      const first = await handle.insertCell({ source: 'once', cellType: 'code' }, { idempotencyKey: key });
      const replay = await handle.insertCell({ source: 'once', cellType: 'code' }, { idempotencyKey: key });
      ensureEqual(replay.id, first.id, 'the id a replayed insert answers');
      ensureEqual(await ids(handle), [...initialIds, first.id], 'cells after an insert and its replay');
    });

    check('applies a replayed update once: a later change is not undone by the replay', async ({ handle }) => {
      const cell = await handle.insertCell({ source: 'v0', cellType: 'code' });
      const key = `contract-update-${Date.now()}`;
      const first = await handle.updateCell(cell.id, { source: 'v1' }, { idempotencyKey: key });
      await handle.updateCell(cell.id, { source: 'v2' });
      const replay = await handle.updateCell(cell.id, { source: 'v1' }, { idempotencyKey: key });
      ensureEqual(replay.source, first.source, 'the source a replayed update answers');
      ensureEqual((await handle.getCell(cell.id)).source, 'v2', 'the source after the replay');
    });

    check('answers a replayed delete as the first (it is not applied again)', async ({ handle }) => {
      const cell = await handle.insertCell({ source: 'doomed', cellType: 'code' });
      const key = `contract-delete-${Date.now()}`;
      await handle.deleteCell(cell.id, { idempotencyKey: key });
      await handle.deleteCell(cell.id, { idempotencyKey: key });
      await ensureRejectsWith(() => handle.getCell(cell.id), 'cellNotFound', 'getCell of the deleted cell', settleMs);
    });

    check('closes once: onDidClose fires once with closed, close is idempotent', async ({ handle }) => {
      const reasons: NotebookHandleCloseReason[] = [];
      const disposed: NotebookHandleCloseReason[] = [];
      handle.onDidClose((reason) => reasons.push(reason));
      handle.onDidClose((reason) => disposed.push(reason)).dispose();
      await handle.close();
      await handle.close();
      ensureEqual(reasons, ['closed'], 'the onDidClose calls');
      ensureEqual(disposed, [], 'the calls of a disposed onDidClose listener');
      ensure(handle.isClosed, 'isClosed is false after close');
      ensureEqual(handle.closedReason, 'closed', 'closedReason');
    });

    check('rejects every call with handleClosed after close', async ({ handle }) => {
      const cell = await handle.insertCell({ source: 'x', cellType: 'code' });
      await handle.close();
      const calls: [string, () => Promise<unknown>][] = [
        ['waitUntilReady', () => handle.waitUntilReady()],
        ['listCells', () => handle.listCells()],
        ['getCell', () => handle.getCell(cell.id)],
        ['insertCell', () => handle.insertCell({ source: 'y', cellType: 'code' })],
        ['updateCell', () => handle.updateCell(cell.id, { source: 'z' })],
        ['deleteCell', () => handle.deleteCell(cell.id)],
        ['moveCell', () => handle.moveCell(cell.id, undefined)],
        ['clearOutputs', () => handle.clearOutputs(cell.id)],
        ['executeCell', () => handle.executeCell(cell.id)],
        ['getExecution', () => handle.getExecution('some-execution')],
        ['interruptKernel', () => handle.interruptKernel()],
        ['restartKernel', () => handle.restartKernel()],
        ['save', () => handle.save()],
      ];
      const optional: [string, (() => Promise<unknown>) | undefined][] = [
        [
          'getExecutionPage',
          handle.getExecutionPage && (() => handle.getExecutionPage?.('e', pageOfAll) as Promise<unknown>),
        ],
        ['cancelExecution', handle.cancelExecution && (() => handle.cancelExecution?.('e') as Promise<unknown>)],
        ['runScratch', handle.runScratch && (() => handle.runScratch?.('1') as Promise<unknown>)],
        ['startScratch', handle.startScratch && (() => handle.startScratch?.('1') as Promise<unknown>)],
        ['getChanges', handle.getChanges && (() => handle.getChanges?.() as Promise<unknown>)],
        ['undo', handle.undo && (() => handle.undo?.(1) as Promise<unknown>)],
      ];
      for (const [what, call] of optional) if (call) calls.push([what, call]);
      for (const [what, call] of calls) await ensureRejectsWith(call, 'handleClosed', `${what} after close`, settleMs);
    });

    if (capabilities.save) {
      check('saves to a path: the notebook id kept, the path bound for the next save', async ({ notebook, handle }) => {
        const saved = await handle.save(notebook.savePath);
        ensureEqual(saved.notebookId, handle.notebookId, 'the saved notebook’s id');
        ensureEqual(handle.notebookPath, saved.path, 'notebookPath after the save');
        ensureEqual((await handle.save()).path, saved.path, 'the path a save without one uses');
      });
    }
    if (execution) registerExecutionChecks(check, execution, capabilities);
    if (capabilities.changeEvents) registerChangeEventChecks(check);
    if (capabilities.changeLog) registerChangeLogChecks(check);
    if (capabilities.undo) registerUndoChecks(check);
    if (capabilities.documentVersion) {
      check('raises documentVersion with a change', async ({ handle, settleMs }) => {
        const before = handle.documentVersion as number;
        await handle.insertCell({ source: 'v', cellType: 'code' });
        await eventually(() => (handle.documentVersion as number) > before, 'documentVersion growing', settleMs);
      });
    }
    if (capabilities.peers) registerPeerChecks(check, capabilities.changeEvents);
  });
}

/** A request for every character of an execution's outputs, within any budget. */
const pageOfAll = { offset: 0, length: 1_000_000, budgetBytes: 10_000_000 } as const;

type Check = (title: string, body: (context: CheckContext) => Promise<void>) => void;

function registerExecutionChecks(
  check: Check,
  execution: NonNullable<NotebookHandleContractSetup['execution']>,
  capabilities: { readonly executionPage: boolean; readonly cancelExecution: boolean; readonly runScratch: boolean },
): void {
  check(
    'runs a cell: its outputs answered, told as they come, kept in the cell and its execution',
    async ({ handle }) => {
      const cell = await handle.insertCell({ source: execution.source, cellType: 'code' });
      const started: string[] = [];
      const streamed: unknown[] = [];
      const result = await handle.executeCell(cell.id, {
        onStarted: (executionId) => started.push(executionId),
        onOutput: (output) => streamed.push(output),
      });
      ensureEqual([result.status, result.cellId], ['ok', cell.id], 'the execution result');
      ensure(outputsText(result.outputs).includes(execution.outputText), `outputs lack ${execution.outputText}`);
      ensureEqual(started, [result.executionId], 'the onStarted calls');
      ensure(streamed.length > 0, 'onOutput was never called for an execution with outputs');
      const kept = await handle.getCell(cell.id);
      ensure(outputsText(kept.outputs).includes(execution.outputText), 'the cell does not keep the outputs');
      const state = await handle.getExecution(result.executionId);
      ensureEqual([state.executionId, state.cellId, state.status], [result.executionId, cell.id, 'ok'], 'getExecution');
    },
  );

  check('answers nothing_running to an interrupt while the kernel is idle', async ({ handle }) => {
    ensureEqual(await handle.interruptKernel(), 'nothing_running', 'an interrupt of an idle kernel');
  });

  check('rejects getExecution of an unknown id with invalidRequest', async ({ handle, settleMs }) => {
    await ensureRejectsWith(
      () => handle.getExecution('00000000-0000-4000-8000-000000000000'),
      'invalidRequest',
      'getExecution(unknown id)',
      settleMs,
    );
  });

  check('answers a replayed execution with the first one’s result', async ({ handle }) => {
    const cell = await handle.insertCell({ source: execution.source, cellType: 'code' });
    const key = `contract-execute-${Date.now()}`;
    const first = await handle.executeCell(cell.id, { idempotencyKey: key });
    const replay = await handle.executeCell(cell.id, { idempotencyKey: key });
    ensureEqual(replay.executionId, first.executionId, 'the execution id a replay answers');
    ensureEqual(replay.executionCount, first.executionCount, 'the execution count a replay answers');
  });

  const { slowSource } = execution;
  if (slowSource !== undefined) {
    check('answers timeout when the wait ends first; the execution goes on, read by its id', async ({ handle }) => {
      const cell = await handle.insertCell({ source: slowSource, cellType: 'code' });
      const result = await handle.executeCell(cell.id, { timeoutMs: 500 });
      ensureEqual([result.status, result.cellId], ['timeout', cell.id], 'the result of a wait that ended first');
      const state = await handle.getExecution(result.executionId);
      ensure(['queued', 'running'].includes(state.status), `the execution is ${state.status}, not still running`);
      // Ended here, so the notebook is not left running for the next check.
      if (handle.cancelExecution) {
        const stopped = await handle.cancelExecution(result.executionId);
        ensure(
          stopped === 'interrupted' || stopped === 'dequeued',
          `cancelling a running execution answered ${stopped}`,
        );
      } else await handle.interruptKernel();
    });
  }

  if (capabilities.executionPage) {
    check('pages an execution’s outputs; a page past the end is empty', async ({ handle }) => {
      const cell = await handle.insertCell({ source: execution.source, cellType: 'code' });
      const result = await handle.executeCell(cell.id);
      const page = await handle.getExecutionPage?.(result.executionId, pageOfAll);
      // `undefined` is allowed: the owner answered the outputs instead (read through getExecution).
      if (page === undefined) return;
      ensureEqual(page.state.executionId, result.executionId, 'the page’s execution');
      ensure(page.page.text.includes(execution.outputText), `the page lacks ${execution.outputText}`);
      const total = page.page.total_chars;
      const past = await handle.getExecutionPage?.(result.executionId, { ...pageOfAll, offset: total + 10 });
      ensureEqual(
        [past?.page.offset, past?.page.length, past?.page.total_chars],
        [total + 10, 0, total],
        'past the end',
      );
    });
  }

  if (capabilities.cancelExecution) {
    check('leaves a finished execution alone when asked to cancel it', async ({ handle }) => {
      const cell = await handle.insertCell({ source: execution.source, cellType: 'code' });
      const result = await handle.executeCell(cell.id);
      ensureEqual(await handle.cancelExecution?.(result.executionId), 'none', 'cancelling a finished execution');
    });
  }

  if (capabilities.runScratch) {
    check('runs scratch code without a cell: the document unchanged', async ({ handle, initialIds }) => {
      const run = await handle.runScratch?.(execution.source);
      ensureEqual(run?.status, 'ok', 'the scratch run’s status');
      ensure(
        outputsText(run?.outputs ?? []).includes(execution.outputText),
        `scratch outputs lack ${execution.outputText}`,
      );
      ensureEqual(await ids(handle), initialIds, 'cells after a scratch run');
    });
  }
}

/** Records the changes a handle tells, and whether a read made from the listener already saw each. */
function recordChanges(handle: NotebookHandle): {
  changes: NotebookCellChange[];
  /** The inserted cells a read from the listener did not find, once those reads have answered. */
  unseen: () => Promise<string[]>;
} {
  const changes: NotebookCellChange[] = [];
  const reads: Promise<string | undefined>[] = [];
  handle.onDidChangeCells?.((change) => {
    changes.push(change);
    if (change.kind === 'inserted') {
      reads.push(
        handle.getCell(change.cellId).then(
          () => undefined,
          () => `inserted ${change.cellId}`,
        ),
      );
    }
  });
  return {
    changes,
    unseen: async () => (await Promise.all(reads)).filter((read): read is string => read !== undefined),
  };
}

function registerChangeEventChecks(check: Check): void {
  check(
    'tells its own inserts, updates and deletes to onDidChangeCells, each visible to a read from the listener',
    async ({ handle, settleMs }) => {
      const record = recordChanges(handle);
      const told = (kind: NotebookCellChange['kind'], cellId: string) => () =>
        record.changes.some((change) => change.kind === kind && change.cellId === cellId);
      const cell = await handle.insertCell({ source: 'told', cellType: 'code' });
      await eventually(told('inserted', cell.id), `an inserted change for ${cell.id}`, settleMs);
      await handle.updateCell(cell.id, { source: 'told again' });
      await eventually(told('updated', cell.id), `an updated change for ${cell.id}`, settleMs);
      await handle.deleteCell(cell.id);
      await eventually(told('deleted', cell.id), `a deleted change for ${cell.id}`, settleMs);
      ensureEqual(await record.unseen(), [], 'changes a read from the listener did not see');
    },
  );
}

function registerChangeLogChecks(check: Check): void {
  check('keeps a change log: an insert, then only what came after a cursor', async ({ handle }) => {
    const cell = await handle.insertCell({ source: 'logged', cellType: 'code' });
    const all = await handle.getChanges?.();
    ensure(
      all?.activities.some((activity) => activity.kind === 'inserted' && activity.cellId === cell.id) === true,
      `the change log lacks the insert of ${cell.id}`,
    );
    await handle.updateCell(cell.id, { source: 'logged again' });
    const later = await handle.getChanges?.(all?.cursor);
    const kinds = later?.activities.filter((activity) => activity.cellId === cell.id).map((activity) => activity.kind);
    ensureEqual(kinds, ['edited'], `what the log says of ${cell.id} after the cursor`);
  });
}

function registerUndoChecks(check: Check): void {
  check('undoes its own last edit', async ({ handle }) => {
    const cell = await handle.insertCell({ source: 'before', cellType: 'code' });
    await handle.updateCell(cell.id, { source: 'after' });
    const undone = await handle.undo?.(1);
    ensureEqual(
      undone?.map((activity) => activity.cellId),
      [cell.id],
      'the cells the undo reverted',
    );
    ensureEqual((await handle.getCell(cell.id)).source, 'before', 'the source after the undo');
  });
}

function registerPeerChecks(check: Check, changeEvents: boolean): void {
  check(
    'shares the notebook with another peer, which closing one leaves open',
    async ({ handle, openPeer, settleMs }) => {
      const peer = await openPeer();
      ensureEqual(peer.notebookId, handle.notebookId, 'the peer’s notebookId');
      const cell = await handle.insertCell({ source: 'shared', cellType: 'code' });
      await eventually(async () => (await ids(peer)).includes(cell.id), 'the peer seeing the insert', settleMs);
      await peer.updateCell(cell.id, { source: 'shared by the peer' });
      await eventually(
        async () => (await handle.getCell(cell.id)).source === 'shared by the peer',
        'the first handle seeing the peer’s update',
        settleMs,
      );
      await handle.close();
      ensure(!peer.isClosed, 'closing one peer closed the other');
      ensure((await ids(peer)).includes(cell.id), 'the other peer lost the notebook when one closed');
    },
  );

  if (changeEvents) {
    check(
      'tells another peer’s insert to onDidChangeCells, visible to a read from the listener',
      async ({ handle, openPeer, settleMs }) => {
        const peer = await openPeer();
        const record = recordChanges(handle);
        const cell = await peer.insertCell({ source: 'from the peer', cellType: 'code' });
        await eventually(
          () => record.changes.some((change) => change.kind === 'inserted' && change.cellId === cell.id),
          `an inserted change for the peer’s ${cell.id}`,
          settleMs,
        );
        ensureEqual(await record.unseen(), [], 'changes a read from the listener did not see');
      },
    );
  }
}
