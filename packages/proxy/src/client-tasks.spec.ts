import { RecordingLogger } from '@nteract-mcp/foundation/testing';
import { describe, expect, it } from 'vitest';
import { ClientTasks, maxKnownTaskBytes, maxKnownTasks } from './client-tasks.js';

/** A `tools/call` with `task` in its params (the 2025-11-25 task augmentation when an object). */
const call = (task: unknown = { ttl: 60_000 }) => ({
  method: 'tools/call',
  params: { name: 'execute_cell', arguments: { cell_id: 'c1' }, task },
});
const plainCall = { method: 'tools/call', params: { name: 'execute_cell', arguments: { cell_id: 'c1' } } };
const created = (taskId: unknown) => ({ task: { taskId, status: 'working', ttl: null, pollInterval: 1000 } });

describe(ClientTasks, () => {
  it('keeps the ids of the tasks children created for calls that asked for one, oldest first, each once', () => {
    const tasks = new ClientTasks(new RecordingLogger());
    expect(tasks.creates(call())).toBe(true);
    tasks.answered(call(), created('exec-1'));
    tasks.answered(call(), created('run_all_cells:exec-2,exec-3'));
    tasks.answered(call(), created('exec-1'));
    expect(tasks.ids()).toEqual(['exec-1', 'run_all_cells:exec-2,exec-3']);
  });

  it('takes nothing from other answers: calls that asked for no task, other methods, results without a task id', () => {
    const tasks = new ClientTasks(new RecordingLogger());
    for (const request of [
      plainCall,
      call(null),
      call(true),
      call([]),
      { method: 'tasks/get', params: { taskId: 'x' } },
    ]) {
      expect(tasks.creates(request)).toBe(false);
      tasks.answered(request, created('exec-9'));
    }
    tasks.answered(call(), undefined);
    tasks.answered(call(), { content: [] });
    tasks.answered(call(), created(7));
    tasks.answered(call(), created('  '));
    expect(tasks.ids()).toEqual([]);
  });

  it(`forgets the oldest past ${maxKnownTasks} ids`, () => {
    const tasks = new ClientTasks(new RecordingLogger());
    for (let i = 0; i <= maxKnownTasks; i++) tasks.answered(call(), created(`exec-${i}`));
    expect(tasks.ids()).toHaveLength(maxKnownTasks);
    expect(tasks.ids()[0]).toBe('exec-1');
    expect(tasks.ids().at(-1)).toBe(`exec-${maxKnownTasks}`);
  });

  it(`keeps the handed list under ${maxKnownTaskBytes} bytes: the oldest go first, an id alone over it is not kept`, () => {
    const logger = new RecordingLogger();
    const tasks = new ClientTasks(logger);
    // A run of all cells names every cell's execution: 1 000 ids of 37 bytes.
    const runAll = (n: number) =>
      `run_all_cells:${Array.from({ length: 1000 }, (_, i) => `${n}`.padStart(8, '0') + `-${i}`.padEnd(28, 'x')).join(',')}`;
    tasks.answered(call(), created('exec-1'));
    tasks.answered(call(), created(runAll(1)));
    expect(tasks.ids()).toEqual(['exec-1']);
    const half = `run_all_cells:${'a'.repeat(maxKnownTaskBytes / 2)}`;
    tasks.answered(call(), created(half));
    tasks.answered(call(), created(`${half}b`));
    expect(tasks.ids()).toEqual([`${half}b`]);
    expect(JSON.stringify(tasks.ids()).length).toBeLessThanOrEqual(maxKnownTaskBytes);
  });
});
