import { describe, expect, it } from 'vitest';
import { type ExecutionRecord, ExecutionStore, executionStatusOf } from './execution-store.js';

const record = (executionId: string, status: ExecutionRecord['status'] = 'running'): ExecutionRecord => ({
  executionId,
  notebookId: 'nb',
  cellId: 'cell-1',
  status,
  outputs: [],
  executionCount: null,
});

describe(ExecutionStore, () => {
  it('forgets the least recently recorded execution beyond its capacity', () => {
    const store = new ExecutionStore(2);
    store.record(record('a'));
    store.record(record('b'));
    store.record(record('a', 'done'));
    store.record(record('c'));
    expect(store.size).toBe(2);
    expect(store.get('b')).toBeUndefined();
    expect(store.get('a')?.status).toBe('done');
    expect(store.get('c')).toBeDefined();
  });

  it("speaks the original server's statuses", () => {
    expect(['ok', 'timeout', 'error', 'queued', 'aborted'].map((s) => executionStatusOf(s as 'ok'))).toEqual([
      'done',
      'running',
      'error',
      'queued',
      'aborted',
    ]);
  });
});
