import {
  CallToolResultSchema,
  CreateTaskResultSchema,
  ErrorCode,
  GetTaskResultSchema,
  McpError,
} from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import * as z from 'zod';
import {
  type ChildServerTestHarness,
  resultText,
  startChildServerTestHarness,
} from '../../testing/start-child-server-test-harness.js';
import { relatedTaskMetaKey } from './execution-tasks.js';

// Executions as tasks (the legacy era's task augmentation) on a real container over the fake
// daemon; the native era's shapes and the real processes are in test/execution-tasks.test.ts.

let harness: ChildServerTestHarness;
afterEach(async () => {
  await harness.close();
});

/** A notebook with one code cell `source`; the cell id. */
async function cellWith(source: string): Promise<string> {
  harness = await startChildServerTestHarness();
  await harness.callJson('create_notebook', {});
  return String((await harness.callJson('create_cell', { source })).cell_id);
}

function startTask(name: string, args: Record<string, unknown>) {
  return harness.client.request(
    { method: 'tools/call', params: { name, arguments: args, task: { ttl: 60_000 } } },
    CreateTaskResultSchema,
  );
}

function getTask(taskId: string) {
  return harness.client.request({ method: 'tasks/get', params: { taskId } }, GetTaskResultSchema);
}

describe('executions as tasks (legacy task augmentation)', () => {
  it('declares tasks and marks the execution tools optional', async () => {
    await cellWith('x = 1');
    expect(harness.client.getServerCapabilities()?.tasks).toMatchObject({ requests: { tools: { call: {} } } });
    const { tools } = await harness.client.listTools();
    const support = Object.fromEntries(tools.map((tool) => [tool.name, tool.execution?.taskSupport]));
    expect(support).toMatchObject({ execute_cell: 'optional', run_all_cells: 'optional', run_code: 'optional' });
    expect(support.get_cell).toBeUndefined();
  });

  it('answers a task whose id is the execution id; tasks/result gives what execute_cell would have', async () => {
    const cellId = await cellWith('print(1)');
    const { task } = await startTask('execute_cell', { cell_id: cellId });
    expect(task).toMatchObject({ status: 'working', ttl: null });
    const result = await harness.client.request(
      { method: 'tasks/result', params: { taskId: task.taskId } },
      CallToolResultSchema,
    );
    expect(JSON.parse(resultText(result))).toMatchObject({
      execution_id: task.taskId,
      cell_id: cellId,
      status: 'done',
    });
    expect(result._meta?.[relatedTaskMetaKey]).toEqual({ taskId: task.taskId });
    expect(await getTask(task.taskId)).toMatchObject({ taskId: task.taskId, status: 'completed' });
    const listed = await harness.client.request(
      { method: 'tasks/list', params: {} },
      z.object({ tasks: z.array(z.object({ taskId: z.string() })) }),
    );
    expect(listed.tasks.map((entry) => entry.taskId)).toEqual([task.taskId]);
  });

  it('keeps today’s answer for a call without task augmentation', async () => {
    const cellId = await cellWith('print(2)');
    const answer = await harness.callJson('execute_cell', { cell_id: cellId });
    expect(answer).toMatchObject({ cell_id: cellId, status: 'done' });
  });

  it('cancels a running task: it stays cancelled, and a second cancel is refused', async () => {
    const cellId = await cellWith('hold');
    const { task } = await startTask('execute_cell', { cell_id: cellId });
    expect(await getTask(task.taskId)).toMatchObject({ status: 'working' });
    const cancelled = await harness.client.request(
      { method: 'tasks/cancel', params: { taskId: task.taskId } },
      GetTaskResultSchema,
    );
    expect(cancelled).toMatchObject({ taskId: task.taskId, status: 'cancelled' });
    expect(await getTask(task.taskId)).toMatchObject({ status: 'cancelled' });
    await expect(
      harness.client.request({ method: 'tasks/cancel', params: { taskId: task.taskId } }, GetTaskResultSchema),
    ).rejects.toMatchObject({ code: ErrorCode.InvalidParams });
  });

  it('does not call cancelled a task whose code ignores the interrupt: it goes on, and the refusal says how to stop it', async () => {
    harness = await startChildServerTestHarness();
    const handle = await harness.createNotebook();
    const cellId = String((await harness.callJson('create_cell', { source: 'hold' })).cell_id);
    const { task } = await startTask('execute_cell', { cell_id: cellId });
    handle.interruptOutcome = 'still_running';
    const refused = await harness.client
      .request({ method: 'tasks/cancel', params: { taskId: task.taskId } }, GetTaskResultSchema)
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(McpError);
    expect((refused as McpError).message).toMatch(/was not cancelled: .* still running .* restart_kernel stops it/);
    expect(await getTask(task.taskId)).toMatchObject({ status: 'working' });
    // Once the code does stop, a cancel is what it says.
    handle.interruptOutcome = 'interrupted';
    expect(
      await harness.client.request({ method: 'tasks/cancel', params: { taskId: task.taskId } }, GetTaskResultSchema),
    ).toMatchObject({ status: 'cancelled' });
  });

  it('refuses an unknown task id with invalid params', async () => {
    await cellWith('x = 1');
    const refused = await getTask('no-such-execution').catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(McpError);
    expect((refused as McpError).code).toBe(ErrorCode.InvalidParams);
  });

  it('runs every code cell as one task that ends at the first error', async () => {
    harness = await startChildServerTestHarness();
    await harness.callJson('create_notebook', {});
    for (const source of ['print(1)', 'raise boom', 'print(3)']) await harness.callJson('create_cell', { source });
    const { task } = await startTask('run_all_cells', {});
    expect(task.taskId).toMatch(/^run_all_cells:/);
    const result = await harness.client.request(
      { method: 'tasks/result', params: { taskId: task.taskId } },
      CallToolResultSchema,
    );
    const texts = result.content.map((item) => (item.type === 'text' ? item.text : ''));
    expect(texts.join('\n')).toContain('out: print(1)');
    expect(texts.join('\n')).toContain('boom');
    // The fake runs every queued cell; the task's answer stops at the first error and names the rest.
    expect(JSON.parse(texts.at(-1) ?? '{}')).toMatchObject({ not_run: [expect.any(String)] });
  });
});
