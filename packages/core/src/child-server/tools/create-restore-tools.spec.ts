import { afterEach, describe, expect, it } from 'vitest';
import type { FakeNotebookHandle } from '../../testing/fake-notebook-handle.js';
import {
  type ChildServerTestHarness,
  startChildServerTestHarness,
  toolError,
} from '../../testing/start-child-server-test-harness.js';

describe('what a replaced kernel took with it, and restore_state', () => {
  let harness: ChildServerTestHarness;
  afterEach(async () => {
    await harness.close();
  });

  async function withNotebook(): Promise<FakeNotebookHandle> {
    harness = await startChildServerTestHarness();
    return harness.createNotebook();
  }

  it('the first answer in a new kernel names what the cells run in the old one defined; restore_state runs them again in order', async () => {
    const handle = await withNotebook();
    const a = await harness.callJson('create_cell', { source: 'import numpy as np\nx = 41', and_run: true });
    const b = await harness.callJson('create_cell', { source: 'def f():\n    return x + 1', and_run: true });
    await harness.callJson('create_cell', { source: '# notes', cell_type: 'markdown' });
    expect(a.lost_state).toBeUndefined();
    handle.nextKernelNotice = 'The kernel was culled: this runs in a new kernel';
    const next = await harness.callJson('create_cell', { source: 'print(f())', and_run: true });
    expect(next.kernel_notice).toBe('The kernel was culled: this runs in a new kernel');
    expect(next.lost_state).toMatchObject({
      variables: ['x'],
      functions: ['f'],
      imports: ['numpy as np'],
      cells: [a.cell_id, b.cell_id],
    });
    expect((next.lost_state as { summary: string }).summary).toContain('variables x; functions f; imports numpy as np');
    // Said once: the next run has no notice and no lost state.
    expect((await harness.callJson('execute_cell', { cell_id: next.cell_id as string })).lost_state).toBeUndefined();

    const restored = await harness.callJson('restore_state');
    expect(restored).toMatchObject({ status: 'done', restored: { variables: ['x'], functions: ['f'] } });
    expect((restored.executions as { cell_id: string; status: string }[]).map((e) => [e.cell_id, e.status])).toEqual([
      [a.cell_id, 'done'],
      [b.cell_id, 'done'],
    ]);
    // A range of them.
    const one = await harness.callJson('restore_state', { from_cell_id: b.cell_id as string });
    expect((one.executions as { cell_id: string }[]).map((e) => e.cell_id)).toEqual([b.cell_id]);
    expect(await toolError(harness.call('restore_state', { from_cell_id: 'nope' }))).toContain(
      'Cell nope did not run in the lost kernel',
    );
  });

  it('restore_state stops at the first error and says which cells were not run; with nothing lost it runs nothing', async () => {
    const handle = await withNotebook();
    expect(await toolError(harness.call('restore_state'))).toMatch(/^Nothing to restore in notebook /);
    const a = await harness.callJson('create_cell', { source: 'x = 1', and_run: true });
    const b = await harness.callJson('create_cell', { source: 'y = 2', and_run: true });
    const c = await harness.callJson('create_cell', { source: 'z = 3', and_run: true });
    await harness.callJson('set_cell', { cell_id: b.cell_id as string, source: 'raise boom' });
    const restarted = await harness.callJson('restart_kernel');
    expect(restarted.lost_state).toMatchObject({ variables: ['x', 'y', 'z'] });
    expect(handle.kernelRestartCount).toBe(1);
    const restored = await harness.callJson('restore_state');
    expect(restored).toMatchObject({ status: 'error', not_run: [c.cell_id] });
    expect((restored.executions as { cell_id: string }[]).map((e) => e.cell_id)).toEqual([a.cell_id, b.cell_id]);
  });

  it('session_status shows the lost state while the connection’s kernel notice is pending', async () => {
    const handle = await withNotebook();
    await harness.callJson('create_cell', { source: 'x = 1', and_run: true });
    Object.defineProperty(handle, 'kernelNotice', { value: 'The server culled the kernel', configurable: true });
    const status = await harness.callJson('session_status');
    expect((status.active as { lost_state?: unknown }).lost_state).toMatchObject({ variables: ['x'] });
  });
});
