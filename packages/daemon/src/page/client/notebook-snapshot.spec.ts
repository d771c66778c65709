import { describe, expect, it } from 'vitest';
import { readActivity, readSnapshot } from './notebook-snapshot.js';

const body = {
  notebook_id: 'nb1',
  path: 'work/analysis.ipynb',
  document_version: 12,
  runtime: { state: 'ready', kernel_status: 'idle' },
  cells: [{ id: 'a', cell_type: 'code', source: '1', outputs: [], execution_count: 1, metadata: {}, version: 'v' }],
};

describe(readSnapshot, () => {
  it('reads the notebook, its version and kernel, and defaults what an older daemon leaves out', () => {
    expect(readSnapshot(body)).toEqual({
      notebookId: 'nb1',
      path: 'work/analysis.ipynb',
      documentVersion: 12,
      runtime: { state: 'ready', kernel_status: 'idle' },
      conditions: [],
      cells: body.cells,
      outputCapability: '',
      peers: [],
      running: null,
      queued: [],
    });
  });

  it('keeps the output capability and conditions the daemon gives', () => {
    const conditions = [{ kind: 'kernel_lost', message: 'The kernel died.' }];
    const read = readSnapshot({ ...body, output_capability: 'cap-1', conditions });
    expect(read.outputCapability).toBe('cap-1');
    expect(read.conditions).toEqual(conditions);
  });
});

describe(readActivity, () => {
  it('reads peers given as objects with their presence and the cell they run', () => {
    expect(
      readActivity({
        peers: [
          { peer_id: 'p1', label: 'human:Ada', cell_id: 'a', running_cell_id: 'b' },
          { peer_id: 'p2', label: 'agent:claude:1' },
        ],
        executions: { running: 'b', queued: ['c', 'd'] },
      }),
    ).toEqual({
      peers: [
        { peerId: 'p1', label: 'human:Ada', cellId: 'a', runningCellId: 'b' },
        { peerId: 'p2', label: 'agent:claude:1', cellId: null, runningCellId: null },
      ],
      running: 'b',
      queued: ['c', 'd'],
    });
  });

  it('reads peers given as bare labels (older daemons) as peers without id, presence or run', () => {
    expect(readActivity({ peers: ['human:Ada'] }).peers).toEqual([
      { peerId: null, label: 'human:Ada', cellId: null, runningCellId: null },
    ]);
  });

  it('reads no peers and nothing running from an empty body', () => {
    expect(readActivity({})).toEqual({ peers: [], running: null, queued: [] });
  });
});
