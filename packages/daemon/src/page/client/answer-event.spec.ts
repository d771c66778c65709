import { describe, expect, it } from 'vitest';
import { answerEvent } from './answer-event.js';
import type { SnapshotCell } from './notebook-snapshot.js';

const cell: SnapshotCell = {
  id: 'a',
  cell_type: 'code',
  source: 'x = 1',
  outputs: [],
  execution_count: null,
  metadata: {},
  version: 'v2',
};

describe(answerEvent, () => {
  it('reads an insert’s answer as the cell inserted at the index and version the room gave', () => {
    expect(
      answerEvent({ type: 'insert_cell', source: '', cell_type: 'code' }, { cell, index: 4, document_version: 9 }),
    ).toEqual({ event: 'cell_inserted', document_version: 9, index: 4, cell });
  });

  it('reads an update’s and a clear’s answer as the cell updated', () => {
    for (const request of [
      { type: 'update_cell', cell_id: 'a', source: 'x = 1' },
      { type: 'clear_outputs', cell_id: 'a' },
    ] as const) {
      expect(answerEvent(request, { cell, document_version: 3 })).toEqual({
        event: 'cell_updated',
        document_version: 3,
        cell,
      });
    }
  });

  it('reads a source edit answered with the cell’s source fields as the source set (the outputs did not travel)', () => {
    const source = { id: 'a', cell_type: 'code', source: 'x = 2', version: 'v3', edited_by: 'human:Ada' } as const;
    expect(
      answerEvent({ type: 'update_cell', cell_id: 'a', source: 'x = 2' }, { cell_source: source, document_version: 4 }),
    ).toEqual({ event: 'cell_source_set', document_version: 4, cell: source });
  });

  it('names the deleted and moved cell by the request’s id (their answers carry no cell)', () => {
    expect(answerEvent({ type: 'delete_cell', cell_id: 'gone' }, { document_version: 5 })).toEqual({
      event: 'cell_deleted',
      document_version: 5,
      cell_id: 'gone',
    });
    expect(
      answerEvent({ type: 'move_cell', cell_id: 'a', after_cell_id: 'b' }, { document_version: 6, index: 2 }),
    ).toEqual({
      event: 'cell_moved',
      document_version: 6,
      cell_id: 'a',
      index: 2,
    });
  });

  it('makes no event of an undo (what it reverted is read again) nor of a request that is not an edit', () => {
    expect(answerEvent({ type: 'undo' }, { document_version: 7 })).toBeUndefined();
    expect(answerEvent({ type: 'interrupt' }, {})).toBeUndefined();
  });
});
