import { describe, expect, it } from 'vitest';
import type { ExecutionRecord } from './execution-store.js';
import { taskStateOf } from './task-state.js';

const record = (status: ExecutionRecord['status'], outputs: ExecutionRecord['outputs'] = []): ExecutionRecord => ({
  executionId: `e-${status}`,
  notebookId: 'nb',
  cellId: `c-${status}`,
  status,
  outputs,
  executionCount: null,
});
const error = (ename: string, evalue: string) => ({ output_type: 'error', ename, evalue, traceback: [] });

describe(taskStateOf, () => {
  it('is working while a run is queued or running, naming how far a run of several got', () => {
    expect(taskStateOf([record('running')])).toMatchObject({ status: 'working', terminal: false });
    expect(taskStateOf([record('done'), record('queued')])).toMatchObject({
      status: 'working',
      statusMessage: expect.stringContaining('(1 of 2 cells done)'),
    });
  });

  it('completes when the runs ended, an exception in the code included', () => {
    expect(taskStateOf([record('done')])).toMatchObject({ status: 'completed', terminal: true });
    expect(taskStateOf([record('error')])).toMatchObject({ status: 'completed', statusMessage: 'Ended error.' });
  });

  it('ends a run of several at the first that did not end ok, whatever the later ones say', () => {
    expect(taskStateOf([record('done'), record('error'), record('queued')])).toMatchObject({
      status: 'completed',
      terminal: true,
    });
  });

  it('says why an aborted run failed, and a dequeued one is cancelled', () => {
    expect(taskStateOf([record('aborted', [error('DaemonRestarted', 'The daemon stopped')])])).toEqual({
      status: 'failed',
      statusMessage: 'Aborted (DaemonRestarted: The daemon stopped)',
      terminal: true,
    });
    expect(taskStateOf([record('aborted', [error('ExecutionCancelled', 'Cancelled before it started.')])])).toEqual({
      status: 'cancelled',
      statusMessage: 'Cancelled before it started.',
      terminal: true,
    });
  });
});
