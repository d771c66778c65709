import { describe, expect, it } from 'vitest';
import { type ExecutionRecord, ExecutionStore, executionRecordOf, executionStatusOf } from './execution-store.js';

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

  it('keeps a record without outputs over its size, saying so, and small outputs as they are', () => {
    const store = new ExecutionStore(4, 200);
    const small = [{ output_type: 'stream', name: 'stdout', text: 'x'.repeat(100) }];
    const big = [{ output_type: 'display_data', data: { 'text/plain': 'y'.repeat(300) }, metadata: {} }];
    store.record({ ...record('a', 'done'), outputs: small });
    store.record({ ...record('b', 'done'), outputs: big });
    expect(store.get('a')?.outputs).toBe(small);
    expect(store.get('b')?.outputs).toEqual([]);
    expect(store.get('b')?.note).toMatch(/1 output\(s\) \(312 characters\) are not kept.*connect its notebook \(nb\)/);
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

describe(executionRecordOf, () => {
  it("is the port's state with its notebook and the agent's status, its notice and note kept", () => {
    const outputs = [{ output_type: 'stream', name: 'stdout', text: 'hi\n' }];
    const state = { executionId: 'e1', cellId: 'c1', outputs, executionCount: 3 };
    expect(executionRecordOf({ ...state, status: 'ok' }, 'nb')).toEqual({ ...state, notebookId: 'nb', status: 'done' });
    expect(
      executionRecordOf({ ...state, status: 'aborted', kernelNotice: 'restarted', note: 'connection lost' }, 'nb'),
    ).toEqual({ ...state, notebookId: 'nb', status: 'aborted', kernelNotice: 'restarted', note: 'connection lost' });
    expect(executionRecordOf({ ...state, status: 'timeout' }, 'nb').status).toBe('running');
  });
});
