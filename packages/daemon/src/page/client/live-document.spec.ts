import { describe, expect, it } from 'vitest';
import { LiveDocument } from './live-document.js';
import type { SnapshotCell } from './notebook-snapshot.js';

const cell = (id: string, source = ''): SnapshotCell => ({
  id,
  cell_type: 'code',
  source,
  outputs: [],
  execution_count: null,
  metadata: {},
  version: `v-${source}`,
});
const place = { execution_id: 'e', cell_id: 'a' };

describe(LiveDocument, () => {
  it('applies each event that makes the next version, by cell id; ignores older ones; says when one is ahead or does not fit', () => {
    const document = new LiveDocument(4, [cell('a'), cell('b')]);
    expect(document.apply({ event: 'cell_updated', document_version: 4, cell: cell('a', 'old') }).kind).toBe('stale');
    expect(document.apply({ event: 'cell_updated', document_version: 6, cell: cell('a', 'later') }).kind).toBe('ahead');
    expect(document.apply({ event: 'cell_updated', document_version: 5, cell: cell('a', 'x = 1') })).toEqual({
      kind: 'applied',
      change: { cellId: 'a' },
    });
    expect(document.cell('a')?.source).toBe('x = 1');
    document.apply({ event: 'cell_inserted', document_version: 6, index: 1, cell: cell('c') });
    document.apply({ event: 'cell_moved', document_version: 7, cell_id: 'a', index: 2 });
    expect(document.order).toEqual(['c', 'b', 'a']);
    document.apply({ event: 'cell_deleted', document_version: 8, cell_id: 'b' });
    expect(document.order).toEqual(['c', 'a']);
    expect(document.version).toBe(8);
    expect(document.apply({ event: 'cell_deleted', document_version: 9, cell_id: 'b' }).kind).toBe('misfit');
    expect(document.version).toBe(8);
  });

  it("builds a running cell's outputs from its output edits, and sets its count when the run ends", () => {
    const document = new LiveDocument(1, [cell('a', 'print(1)')]);
    const stream = { output_type: 'stream', name: 'stdout', text: 'loading 10%' };
    document.apply({ event: 'output_set', document_version: 2, ...place, seq: 1, index: 0, output: stream });
    document.apply({
      event: 'stream_appended',
      document_version: 3,
      ...place,
      seq: 2,
      index: 0,
      keep: 8,
      text: '100%\n',
    });
    expect(document.cell('a')?.outputs).toEqual([{ ...stream, text: 'loading 100%\n' }]);
    const done = {
      event: 'execution_done',
      execution_id: 'e',
      cell_id: 'a',
      status: 'ok',
      execution_count: 3,
    } as const;
    expect(document.apply({ ...done, document_version: 4 }).kind).toBe('applied');
    expect(document.cell('a')?.execution_count).toBe(3);
    // Without a version (the cell was gone): no change of the document.
    expect(document.apply(done).kind).toBe('stale');
    // An append to an output that is not there does not fit.
    const misfit = {
      event: 'stream_appended',
      document_version: 5,
      ...place,
      seq: 3,
      index: 4,
      keep: 0,
      text: 'x',
    } as const;
    expect(document.apply(misfit).kind).toBe('misfit');
    document.apply({ event: 'outputs_cleared', document_version: 5, ...place, seq: 3 });
    expect(document.cell('a')?.outputs).toEqual([]);
  });
});
