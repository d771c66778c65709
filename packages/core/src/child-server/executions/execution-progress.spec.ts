import type { Progress } from '@modelcontextprotocol/sdk/types.js';
import { ManualClock } from '@nteract-mcp/foundation/testing';
import { afterEach, describe, expect, it } from 'vitest';
import type { FakeNotebookHandle } from '../../testing/fake-notebook-handle.js';
import {
  type ChildServerTestHarness,
  startChildServerTestHarness,
} from '../../testing/start-child-server-test-harness.js';
import type { ToolCallContext } from '../tools/child-tool-registry.js';
import { ClientCancellations } from '../transport/client-cancellations.js';
import { ExecutionProgress, executionKeepAliveMs } from './execution-progress.js';

function recordingContext(): { context: ToolCallContext; sent: Progress[] } {
  const sent: Progress[] = [];
  return {
    sent,
    context: {
      idempotencyKey: undefined,
      signal: new AbortController().signal,
      cancelled: new AbortController().signal,
      reportProgress: (progress, message) => sent.push({ progress, message }),
    },
  };
}

describe(ExecutionProgress, () => {
  it('sends a keep-alive each interval of silence, with elapsed time and the execution id, and stops when told', () => {
    const clock = new ManualClock();
    const { context, sent } = recordingContext();
    const progress = new ExecutionProgress({ clock, context, cellId: 'c1' });
    clock.advance(executionKeepAliveMs);
    progress.started('e-1');
    clock.advance(executionKeepAliveMs);
    progress.output();
    clock.advance(executionKeepAliveMs - 1);
    expect(sent).toHaveLength(3);
    clock.advance(1);
    progress.stop();
    clock.advance(10 * executionKeepAliveMs);
    progress.output();
    expect(sent).toEqual([
      { progress: 1, message: 'cell c1 still running after 4 s (no output yet; waiting for the execution to start)' },
      { progress: 2, message: 'cell c1 still running after 8 s (no output yet; execution e-1)' },
      { progress: 3, message: 'cell c1: 1 output so far' },
      { progress: 4, message: 'cell c1 still running after 12 s (no new output for 4 s; execution e-1)' },
    ]);
    expect(clock.pendingTimerCount).toBe(0);
  });
});

describe(ClientCancellations, () => {
  it('aborts only the tracked request a cancellation names, once, and forgets released ones', () => {
    const cancellations = new ClientCancellations(2);
    const one = cancellations.signalFor(1);
    const two = cancellations.signalFor('two');
    cancellations.release('two');
    const cancel = (requestId: unknown) =>
      cancellations.observe({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId } });
    cancel('two');
    cancel(3);
    expect([one.aborted, two.aborted]).toEqual([false, false]);
    cancel(1);
    expect(one.aborted).toBe(true);
    expect(one.reason).toBe('cancelled by the client');
    expect(cancellations.size).toBe(0);
    for (const id of [4, 5, 6]) cancellations.signalFor(id);
    expect(cancellations.size).toBe(2);
  });
});

describe('execution keep-alive and cancellation through the tools', () => {
  let harness: ChildServerTestHarness;
  afterEach(async () => {
    await harness.close();
  });

  async function heldCell(clock: ManualClock): Promise<FakeNotebookHandle> {
    harness = await startChildServerTestHarness({ clock });
    await harness.callJson('create_notebook');
    await harness.callJson('create_cell', { source: 'hold()' });
    return harness.daemon?.handles.at(-1) as FakeNotebookHandle;
  }

  async function until(condition: () => boolean): Promise<void> {
    while (!condition()) await new Promise((resolve) => setImmediate(resolve));
  }

  it('reports a silent cell every few seconds until it ends, naming its execution', async () => {
    const clock = new ManualClock();
    const handle = await heldCell(clock);
    const progress: Progress[] = [];
    const call = harness.call(
      'execute_cell',
      { cell_id: 'cell-1', timeout_secs: 600 },
      { onProgress: (p) => progress.push(p) },
    );
    await until(() => handle.calls.includes('executeCell:cell-1'));
    for (let tick = 1; tick <= 5; tick += 1) {
      await clock.advanceAndSettle(executionKeepAliveMs);
      await until(() => progress.length === tick);
    }
    expect(progress.map((p) => p.progress)).toEqual([1, 2, 3, 4, 5]);
    expect(progress[4]?.message).toMatch(
      /^cell cell-1 still running after 20 s \(no output yet; execution [0-9a-f-]{36}\)$/,
    );
    const id = /execution ([0-9a-f-]{36})/.exec(progress[4]?.message ?? '')?.[1] as string;
    handle.completeExecution(id, {
      status: 'ok',
      outputs: [{ output_type: 'stream', name: 'stdout', text: 'done\n' }],
    });
    const result = JSON.parse(
      (await call).content[0]?.type === 'text' ? ((await call).content[0] as { text: string }).text : '{}',
    );
    expect(result).toMatchObject({ execution_id: id, status: 'done' });
    expect(clock.pendingTimerCount).toBe(0);
  });

  it('cancels the execution a cancelled call started, and nothing when the call is not cancelled', async () => {
    const clock = new ManualClock();
    const handle = await heldCell(clock);
    const controller = new AbortController();
    const progress: Progress[] = [];
    const call = harness
      .call(
        'execute_cell',
        { cell_id: 'cell-1', timeout_secs: 600 },
        { onProgress: (p) => progress.push(p), signal: controller.signal },
      )
      .catch((error: unknown) => error);
    await until(() => handle.calls.includes('executeCell:cell-1'));
    await clock.advanceAndSettle(executionKeepAliveMs);
    await until(() => progress.length === 1);
    const id = /execution ([0-9a-f-]{36})/.exec(progress[0]?.message ?? '')?.[1];
    expect(handle.cancelledExecutions).toEqual([]);
    controller.abort('the user pressed Esc');
    expect(await call).toBeInstanceOf(Error);
    await until(() => handle.cancelledExecutions.length === 1);
    expect(handle.cancelledExecutions).toEqual([id]);
    expect(await harness.callJson('get_results', { execution_id: id })).toMatchObject({
      status: 'error',
      outputs: [expect.objectContaining({ ename: 'KeyboardInterrupt' })],
    });
    // The kernel answers the next call.
    await harness.callJson('create_cell', { source: 'print(2)' });
    expect(await harness.callJson('execute_cell', { cell_id: 'cell-2' })).toMatchObject({ status: 'done' });
    expect(handle.cancelledExecutions).toHaveLength(1);
  });

  it('does not cancel an execution when the connection closes under its call (a restart hands it on)', async () => {
    const clock = new ManualClock();
    const handle = await heldCell(clock);
    const progress: Progress[] = [];
    const call = harness
      .call('execute_cell', { cell_id: 'cell-1', timeout_secs: 600 }, { onProgress: (p) => progress.push(p) })
      .catch((error: unknown) => error);
    await until(() => handle.calls.includes('executeCell:cell-1'));
    await clock.advanceAndSettle(executionKeepAliveMs);
    await until(() => progress.length === 1);
    await harness.client.close();
    expect(await call).toBeInstanceOf(Error);
    // Closing aborted the handler's `signal` synchronously; a cancellation wired to it would be recorded by now.
    expect(handle.cancelledExecutions).toEqual([]);
    const id = /execution ([0-9a-f-]{36})/.exec(progress[0]?.message ?? '')?.[1] as string;
    handle.completeExecution(id, { status: 'ok', outputs: [] });
  });
});
