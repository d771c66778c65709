import { describe, expect, it } from 'vitest';
import { wireCellFixture } from './schemas/wire-fixtures.js';
import { applyCellSource, cellSourceOf } from './source-edit.js';

describe('source edits', () => {
  const cell = { ...wireCellFixture(1, 2), version: 'v-1', edited_by: 'human:Ada' };

  it('tell a cell by its source fields only: no outputs, count, metadata or attachments', () => {
    const told = cellSourceOf({ ...cell, attachments: { 'a.png': { 'image/png': 'AAAA' } } });
    expect(told).toEqual({
      id: 'cell-1',
      cell_type: 'code',
      source: cell.source,
      version: 'v-1',
      edited_by: 'human:Ada',
    });
    expect(cellSourceOf(wireCellFixture(2))).toEqual({
      id: 'cell-2',
      cell_type: 'code',
      source: wireCellFixture(2).source,
    });
  });

  it('apply to a held cell: source, version and author replaced, everything else kept as it was', () => {
    const edit = { id: 'cell-1', cell_type: 'code' as const, source: 'x = 2', version: 'v-2', edited_by: 'agent:x:1' };
    const applied = applyCellSource(cell, edit);
    expect(applied).toEqual({ ...cell, source: 'x = 2', version: 'v-2', edited_by: 'agent:x:1' });
    expect(applied?.outputs).toBe(cell.outputs);
    expect(applied?.metadata).toBe(cell.metadata);
    expect(cell.source).toBe(wireCellFixture(1).source);
    // An edit without a version or author leaves the copy without them (not the old ones).
    expect(applyCellSource(cell, { id: 'cell-1', cell_type: 'code', source: 'y' })).toEqual({
      ...wireCellFixture(1, 2),
      source: 'y',
    });
  });

  it('do not fit another cell, or a copy of another type (the holder reads the cell again)', () => {
    expect(applyCellSource(cell, { id: 'cell-9', cell_type: 'code', source: 'x' })).toBeUndefined();
    expect(applyCellSource(cell, { id: 'cell-1', cell_type: 'markdown', source: '# x' })).toBeUndefined();
  });
});
