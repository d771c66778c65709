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
const out = { output_type: 'stream', name: 'stdout', text: 'hi' };

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

  it('applies a source edit to the cell it holds, keeping its outputs and count; does not fit a cell of another type', () => {
    const ran = { ...cell('a', 'print(1)'), outputs: [out], execution_count: 2 };
    const document = new LiveDocument(3, [ran, cell('b')]);
    const edit = { id: 'a', cell_type: 'code', source: 'print(2)', version: 'v-2', edited_by: 'agent:x:1' } as const;
    expect(document.apply({ event: 'cell_source_set', document_version: 4, cell: edit })).toEqual({
      kind: 'applied',
      change: { cellId: 'a' },
    });
    expect(document.cell('a')).toEqual({ ...ran, source: 'print(2)', version: 'v-2', edited_by: 'agent:x:1' });
    expect(document.cell('a')?.outputs).toBe(ran.outputs);
    const markdown = { id: 'b', cell_type: 'markdown', source: '# b' } as const;
    expect(document.apply({ event: 'cell_source_set', document_version: 5, cell: markdown }).kind).toBe('misfit');
    expect(document.apply({ event: 'cell_source_set', document_version: 5, cell: { ...edit, id: 'z' } }).kind).toBe(
      'misfit',
    );
    expect(document.version).toBe(4);
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

  it('refuses an insert of a cell it has, or past the end, and a move of a missing cell or past the last place', () => {
    const document = new LiveDocument(1, [cell('a'), cell('b')]);
    expect(document.apply({ event: 'cell_inserted', document_version: 2, index: 0, cell: cell('a') }).kind).toBe(
      'misfit',
    );
    expect(document.apply({ event: 'cell_inserted', document_version: 2, index: 3, cell: cell('c') }).kind).toBe(
      'misfit',
    );
    expect(document.apply({ event: 'cell_moved', document_version: 2, cell_id: 'x', index: 0 }).kind).toBe('misfit');
    expect(document.apply({ event: 'cell_moved', document_version: 2, cell_id: 'a', index: 2 }).kind).toBe('misfit');
    expect(document.apply({ event: 'cell_updated', document_version: 2, cell: cell('x') }).kind).toBe('misfit');
    // Nothing changed, the version included: the next version still fits.
    expect(document.order).toEqual(['a', 'b']);
    expect(document.version).toBe(1);
    expect(document.apply({ event: 'cell_inserted', document_version: 2, index: 2, cell: cell('c') }).kind).toBe(
      'applied',
    );
    expect(document.order).toEqual(['a', 'b', 'c']);
  });

  it('finds cells by id and index after every change of order', () => {
    const document = new LiveDocument(1, [cell('a'), cell('b'), cell('c')]);
    expect(document.indexOf('c')).toBe(2);
    document.apply({ event: 'cell_moved', document_version: 2, cell_id: 'c', index: 0 });
    expect(document.indexOf('c')).toBe(0);
    expect(document.cellAt(1)?.id).toBe('a');
    document.apply({ event: 'cell_deleted', document_version: 3, cell_id: 'a' });
    expect(document.indexOf('a')).toBe(-1);
    expect(document.cell('a')).toBeUndefined();
    expect(document.indexOf('b')).toBe(1);
    expect(document.length).toBe(2);
  });

  it('keeps one order array while the order stands (the view compares it), and a new one once it changes', () => {
    const document = new LiveDocument(1, [cell('a'), cell('b')]);
    const before = document.order;
    document.apply({ event: 'cell_updated', document_version: 2, cell: cell('a', 'x') });
    expect(document.order).toBe(before);
    document.apply({ event: 'cell_moved', document_version: 3, cell_id: 'a', index: 1 });
    expect(document.order).not.toBe(before);
    expect(before).toEqual(['a', 'b']);
  });

  it('does not change the cells it was given, nor the list cells() returned', () => {
    const given = [cell('a'), cell('b')];
    const document = new LiveDocument(1, given);
    const listed = document.cells();
    document.apply({ event: 'cell_deleted', document_version: 2, cell_id: 'a' });
    document.apply({ event: 'output_set', document_version: 3, ...place, cell_id: 'b', seq: 1, index: 0, output: out });
    expect(given.map((c) => c.id)).toEqual(['a', 'b']);
    expect(listed.map((c) => c.id)).toEqual(['a', 'b']);
    expect(given[1]?.outputs).toEqual([]);
    expect(document.cell('b')?.outputs).toEqual([out]);
  });

  it('replaces an output a display updates, and refuses to set one past the end', () => {
    const document = new LiveDocument(1, [cell('a')]);
    const first = { output_type: 'display_data', data: { 'text/plain': '1' }, metadata: {} };
    const second = { output_type: 'display_data', data: { 'text/plain': '2' }, metadata: {} };
    document.apply({ event: 'output_set', document_version: 2, ...place, seq: 1, index: 0, output: first });
    document.apply({ event: 'output_set', document_version: 3, ...place, seq: 2, index: 0, output: second });
    expect(document.cell('a')?.outputs).toEqual([second]);
    expect(
      document.apply({ event: 'output_set', document_version: 4, ...place, seq: 3, index: 2, output: first }).kind,
    ).toBe('misfit');
  });

  it('rewrites the end of a stream from the characters it keeps (a progress bar’s carriage return)', () => {
    const document = new LiveDocument(1, [cell('a')]);
    const stream = { output_type: 'stream', name: 'stdout', text: 'step 1/3' };
    document.apply({ event: 'output_set', document_version: 2, ...place, seq: 1, index: 0, output: stream });
    document.apply({ event: 'stream_appended', document_version: 3, ...place, seq: 2, index: 0, keep: 5, text: '2/3' });
    expect(document.cell('a')?.outputs).toEqual([{ ...stream, text: 'step 2/3' }]);
    // Keeping more than the stream holds does not fit: the page's copy is not the room's.
    const beyond = {
      event: 'stream_appended',
      document_version: 4,
      ...place,
      seq: 3,
      index: 0,
      keep: 99,
      text: '!',
    } as const;
    expect(document.apply(beyond).kind).toBe('misfit');
    // Appending to what is not a stream does not fit either.
    const display = { output_type: 'display_data', data: {}, metadata: {} };
    document.apply({ event: 'output_set', document_version: 4, ...place, seq: 3, index: 1, output: display });
    const onDisplay = {
      event: 'stream_appended',
      document_version: 5,
      ...place,
      seq: 4,
      index: 1,
      keep: 0,
      text: 'x',
    } as const;
    expect(document.apply(onDisplay).kind).toBe('misfit');
  });

  it('ignores an output event for a cell that is gone by reading again (it does not fit)', () => {
    const document = new LiveDocument(1, [cell('b')]);
    expect(document.apply({ event: 'outputs_cleared', document_version: 2, ...place, seq: 1 }).kind).toBe('misfit');
  });
});
