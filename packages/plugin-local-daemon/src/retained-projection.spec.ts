import type { NotebookCell } from '@nteract-mcp/core';
import { describe, expect, it } from 'vitest';
import { type CellChange, cellAfterSourceEdit, RetainedProjection } from './retained-projection.js';

function cell(id: string, source = id): NotebookCell {
  return { id, cellType: 'code', source, outputs: [], executionCount: null, metadata: {} };
}

function ids(projection: RetainedProjection): string[] {
  return projection.cells().map((held) => held.id);
}

/** A trusted projection at `version` holding cells with these ids. */
function projectionOf(version: number, ...cellIds: string[]): RetainedProjection {
  return new RetainedProjection(
    version,
    cellIds.map((id) => cell(id)),
  );
}

describe(RetainedProjection, () => {
  it('applies changes that come in version order', () => {
    const projection = projectionOf(3, 'a', 'b');
    expect(projection.apply({ kind: 'insert', cell: cell('c'), index: 1, version: 4 })).toBe('applied');
    expect(projection.apply({ kind: 'update', cell: cell('a', 'a2'), version: 5 })).toBe('applied');
    expect(projection.apply({ kind: 'move', cellId: 'b', index: 0, version: 6 })).toBe('applied');
    expect(projection.apply({ kind: 'delete', cellId: 'c', version: 7 })).toBe('applied');
    expect(ids(projection)).toEqual(['b', 'a']);
    expect(projection.find('a')?.source).toBe('a2');
    expect(projection.version).toBe(7);
    expect(projection.isStale).toBe(false);
  });

  it("applies a running cell's output edits and its execution count; an edit that does not fit asks for a refetch", () => {
    const projection = projectionOf(3, 'a');
    const stream = (text: string) => ({ output_type: 'stream', name: 'stdout', text });
    expect(
      projection.apply({
        kind: 'outputs',
        cellId: 'a',
        edit: { kind: 'set', index: 0, output: stream('1\n') },
        version: 4,
      }),
    ).toBe('applied');
    expect(
      projection.apply({
        kind: 'outputs',
        cellId: 'a',
        edit: { kind: 'append', index: 0, keep: 2, text: '2\n' },
        version: 5,
      }),
    ).toBe('applied');
    expect(projection.apply({ kind: 'count', cellId: 'a', executionCount: 9, version: 6 })).toBe('applied');
    expect(projection.find('a')).toMatchObject({ outputs: [stream('1\n2\n')], executionCount: 9 });
    // Text to keep that the copy does not have: the copy is not the room's.
    expect(
      projection.apply({
        kind: 'outputs',
        cellId: 'a',
        edit: { kind: 'append', index: 0, keep: 99, text: 'x' },
        version: 7,
      }),
    ).toBe('refetch');
    expect(projection.isStale).toBe(true);
  });

  it('applies a source edit to the held cell, keeping its outputs, count and metadata; another type asks for a refetch', () => {
    const outputs = [{ output_type: 'stream', name: 'stdout', text: 'ran\n' }];
    const ran: NotebookCell = { ...cell('a'), outputs, executionCount: 4, metadata: { tags: ['t'] }, version: 'v1' };
    const projection = new RetainedProjection(3, [ran]);
    const edit = { id: 'a', cellType: 'code', source: 'a2', version: 'v2', editedBy: 'agent:x:1' } as const;
    expect(projection.apply({ kind: 'source', cell: edit, version: 4 })).toBe('applied');
    expect(projection.find('a')).toEqual({ ...ran, source: 'a2', version: 'v2', editedBy: 'agent:x:1' });
    expect(projection.find('a')?.outputs).toBe(outputs);
    const retyped = { id: 'a', cellType: 'markdown', source: '# a' } as const;
    expect(projection.apply({ kind: 'source', cell: retyped, version: 5 })).toBe('refetch');
    expect(projection.isStale).toBe(true);
    expect(projectionOf(3, 'b').apply({ kind: 'source', cell: edit, version: 4 })).toBe('refetch');
  });

  it('makes the cell a source edit left from the cell as held, or without outputs when it is gone or of another type', () => {
    const held: NotebookCell = { ...cell('a'), outputs: [{ output_type: 'stream', text: 'x' }], executionCount: 2 };
    const edit = { id: 'a', cellType: 'code', source: 'a2', version: 'v2' } as const;
    expect(cellAfterSourceEdit(held, edit)).toEqual({ ...held, source: 'a2', version: 'v2' });
    const gone = {
      id: 'a',
      cellType: 'code',
      source: 'a2',
      version: 'v2',
      outputs: [],
      executionCount: null,
      metadata: {},
    };
    expect(cellAfterSourceEdit(undefined, edit)).toEqual(gone);
    expect(cellAfterSourceEdit({ ...held, cellType: 'raw' }, edit)).toEqual(gone);
  });

  it('asks for a refetch at a gap, stops applying, and is trusted again after a newer snapshot', () => {
    const projection = projectionOf(3, 'a');
    expect(projection.apply({ kind: 'insert', cell: cell('c'), index: 1, version: 5 })).toBe('refetch');
    expect(projection.isStale).toBe(true);
    expect(projection.find('a')).toBeUndefined();
    // Even the change that would have filled the gap is only counted now.
    expect(projection.apply({ kind: 'insert', cell: cell('b'), index: 1, version: 4 })).toBe('refetch');
    expect(projection.apply({ kind: 'update', cell: cell('a', 'a2'), version: 6 })).toBe('refetch');
    expect(ids(projection)).toEqual(['a']);
    expect(projection.version).toBe(3);

    expect(projection.applySnapshot(6, [cell('a', 'a2'), cell('b'), cell('c')])).toBe('applied');
    expect(projection.isStale).toBe(false);
    expect(ids(projection)).toEqual(['a', 'b', 'c']);
    expect(projection.apply({ kind: 'delete', cellId: 'b', version: 7 })).toBe('applied');
    expect(ids(projection)).toEqual(['a', 'c']);
  });

  it('ignores a change at or below the version it already reflects (a replayed answer)', () => {
    const projection = projectionOf(3, 'a', 'b');
    expect(projection.apply({ kind: 'update', cell: cell('a', 'replayed'), version: 3 })).toBe('reflected');
    expect(projection.apply({ kind: 'delete', cellId: 'b', version: 1 })).toBe('reflected');
    expect(projection.apply({ kind: 'insert', cell: cell('c'), index: 0, version: 4 })).toBe('applied');
    expect(projection.apply({ kind: 'insert', cell: cell('c'), index: 0, version: 4 })).toBe('reflected');
    expect(ids(projection)).toEqual(['c', 'a', 'b']);
    expect(projection.find('a')?.source).toBe('a');
    expect(projection.isStale).toBe(false);
  });

  it('inserts at both ends and refuses an index outside 0..length, a fractional index, or an id it holds', () => {
    const projection = projectionOf(0, 'm');
    expect(projection.apply({ kind: 'insert', cell: cell('first'), index: 0, version: 1 })).toBe('applied');
    expect(projection.apply({ kind: 'insert', cell: cell('last'), index: 2, version: 2 })).toBe('applied');
    expect(ids(projection)).toEqual(['first', 'm', 'last']);

    for (const bad of [
      { kind: 'insert', cell: cell('x'), index: 4, version: 3 },
      { kind: 'insert', cell: cell('x'), index: -1, version: 3 },
      { kind: 'insert', cell: cell('x'), index: 0.5, version: 3 },
      { kind: 'insert', cell: cell('m'), index: 0, version: 3 },
    ] satisfies CellChange[]) {
      const copy = projectionOf(2, 'first', 'm', 'last');
      expect(copy.apply(bad), JSON.stringify(bad)).toBe('refetch');
      expect(ids(copy)).toEqual(['first', 'm', 'last']);
    }
  });

  it('moves to the first and the last index and refuses an index outside 0..length-1 or an unknown cell', () => {
    const projection = projectionOf(0, 'a', 'b', 'c');
    expect(projection.apply({ kind: 'move', cellId: 'a', index: 2, version: 1 })).toBe('applied');
    expect(ids(projection)).toEqual(['b', 'c', 'a']);
    expect(projection.apply({ kind: 'move', cellId: 'a', index: 0, version: 2 })).toBe('applied');
    expect(ids(projection)).toEqual(['a', 'b', 'c']);

    for (const bad of [
      { kind: 'move', cellId: 'a', index: 3, version: 3 },
      { kind: 'move', cellId: 'a', index: -1, version: 3 },
      { kind: 'move', cellId: 'a', index: 1.5, version: 3 },
      { kind: 'move', cellId: 'zz', index: 0, version: 3 },
    ] satisfies CellChange[]) {
      const copy = projectionOf(2, 'a', 'b', 'c');
      expect(copy.apply(bad), JSON.stringify(bad)).toBe('refetch');
      expect(ids(copy)).toEqual(['a', 'b', 'c']);
    }
  });

  it('refuses to update or delete a cell it does not hold, and deletes the first and the last cell', () => {
    expect(projectionOf(0, 'a').apply({ kind: 'update', cell: cell('zz'), version: 1 })).toBe('refetch');
    expect(projectionOf(0, 'a').apply({ kind: 'delete', cellId: 'zz', version: 1 })).toBe('refetch');
    expect(projectionOf(0).apply({ kind: 'delete', cellId: 'a', version: 1 })).toBe('refetch');
    const projection = projectionOf(0, 'a', 'b', 'c');
    expect(projection.apply({ kind: 'delete', cellId: 'a', version: 1 })).toBe('applied');
    expect(projection.apply({ kind: 'delete', cellId: 'c', version: 2 })).toBe('applied');
    expect(ids(projection)).toEqual(['b']);
  });

  it('ignores a snapshot that is not newer than a trusted copy', () => {
    const projection = projectionOf(5, 'a');
    expect(projection.applySnapshot(5, [cell('old')])).toBe('reflected');
    expect(projection.applySnapshot(2, [cell('older')])).toBe('reflected');
    expect(ids(projection)).toEqual(['a']);
    expect(projection.applySnapshot(6, [cell('b')])).toBe('applied');
    expect(ids(projection)).toEqual(['b']);
    expect(projection.version).toBe(6);
  });

  it('takes any snapshot while stale, but stays stale when a newer version was named before it came', () => {
    const projection = projectionOf(5, 'a');
    projection.apply({ kind: 'update', cell: cell('a', 'a9'), version: 9 });
    expect(projection.applySnapshot(7, [cell('a', 'a7')])).toBe('refetch');
    expect(projection.isStale).toBe(true);
    expect(projection.cells().map((held) => held.source)).toEqual(['a7']);
    expect(projection.version).toBe(7);
    // A stale copy takes even a snapshot older than what it holds.
    expect(projection.applySnapshot(6, [cell('a', 'a6')])).toBe('refetch');
    expect(projection.version).toBe(6);
    expect(projection.applySnapshot(9, [cell('a', 'a9')])).toBe('applied');
    expect(projection.find('a')?.source).toBe('a9');
  });

  it('stops trusting the copy when told, until a snapshot', () => {
    const projection = projectionOf(1, 'a');
    projection.markStale();
    expect(projection.find('a')).toBeUndefined();
    expect(ids(projection)).toEqual(['a']);
    expect(projection.apply({ kind: 'delete', cellId: 'a', version: 2 })).toBe('refetch');
    expect(ids(projection)).toEqual(['a']);
    // A stale copy takes a snapshot of the version it holds.
    expect(projection.applySnapshot(1, [cell('a'), cell('b')])).toBe('refetch');
    expect(projection.applySnapshot(2, [cell('b')])).toBe('applied');
    expect(ids(projection)).toEqual(['b']);
  });

  it('keeps its own copies of the lists it is given and hands out', () => {
    const given = [cell('a')];
    const projection = new RetainedProjection(0, given);
    given.push(cell('b'));
    const handedOut = projection.cells();
    handedOut.push(cell('c'));
    expect(ids(projection)).toEqual(['a']);
    const snapshot = [cell('s')];
    projection.applySnapshot(1, snapshot);
    snapshot.length = 0;
    expect(ids(projection)).toEqual(['s']);
  });

  it('puts outputs told another way in place at its version, taking no version; anywhere else it changes nothing', () => {
    const projection = projectionOf(3, 'a');
    const text = { output_type: 'stream', name: 'stdout', text: 'y'.repeat(10) };
    const reference = { output_type: 'stream', name: 'stdout', text: { $nteract_blob: 'f'.repeat(64), chars: 10 } };
    expect(
      projection.apply({ kind: 'outputs', cellId: 'a', edit: { kind: 'set', index: 0, output: text }, version: 4 }),
    ).toBe('applied');
    // Not at the copy's version, not a held cell, not a held index: nothing changes.
    expect(projection.replaceOutputs('a', 3, [{ index: 0, output: reference }])).toBeUndefined();
    expect(projection.replaceOutputs('b', 4, [{ index: 0, output: reference }])).toBeUndefined();
    expect(projection.replaceOutputs('a', 4, [{ index: 1, output: reference }])).toBeUndefined();
    expect(projection.replaceOutputs('a', 4, undefined)).toBeUndefined();
    expect(projection.find('a')?.outputs).toEqual([text]);
    expect(projection.replaceOutputs('a', 4, [{ index: 0, output: reference }])).toEqual([text]);
    expect(projection.find('a')?.outputs).toEqual([reference]);
    expect(projection.version).toBe(4);
    projection.markStale();
    expect(projection.replaceOutputs('a', 4, [{ index: 0, output: text }])).toBeUndefined();
  });

  it("counts the changes that are not the owner's own: others' changes, changing snapshots, a stale mark", () => {
    const projection = projectionOf(3, 'a');
    expect(projection.othersChangeCount).toBe(0);
    projection.apply({ kind: 'update', cell: cell('a', 'mine'), version: 4 }, true);
    projection.apply({ kind: 'insert', cell: cell('b'), index: 1, version: 5 }, true);
    expect(projection.othersChangeCount).toBe(0);
    projection.apply({ kind: 'update', cell: cell('a', 'theirs'), version: 6 });
    expect(projection.othersChangeCount).toBe(1);
    // A snapshot the copy already reflects changes nothing; one that changes the copy counts.
    expect(projection.applySnapshot(6, [cell('a', 'theirs'), cell('b')])).toBe('reflected');
    expect(projection.othersChangeCount).toBe(1);
    expect(projection.applySnapshot(8, [cell('a')])).toBe('applied');
    expect(projection.othersChangeCount).toBe(2);
    projection.markStale();
    expect(projection.othersChangeCount).toBe(3);
  });
});
