import { describe, expect, it } from 'vitest';
import { cellChangesBetween } from './cell-changes-between.js';
import type { NotebookCell } from './notebook-handle.js';

const cell = (id: string, source = id, extra: Partial<NotebookCell> = {}): NotebookCell => ({
  id,
  cellType: 'code',
  source,
  outputs: [],
  executionCount: null,
  metadata: {},
  ...extra,
});

describe(cellChangesBetween, () => {
  it('is empty for equal lists, also of copies', () => {
    expect(cellChangesBetween([cell('a'), cell('b')], [cell('a'), cell('b')])).toEqual([]);
  });

  it('names cells deleted, inserted, updated (source, outputs, count, editor) and moved', () => {
    const before = [cell('a'), cell('b'), cell('c'), cell('d'), cell('e')];
    const after = [
      cell('b', 'b2'),
      cell('a'),
      cell('c', 'c', { outputs: [{ output_type: 'stream', name: 'stdout', text: 'x' }], executionCount: 1 }),
      cell('f'),
      cell('e', 'e', { editedBy: 'human:ada' }),
    ];
    expect(cellChangesBetween(before, after)).toEqual([
      { kind: 'deleted', cellId: 'd' },
      { kind: 'updated', cellId: 'b' },
      { kind: 'updated', cellId: 'c' },
      { kind: 'inserted', cellId: 'f' },
      { kind: 'updated', cellId: 'e' },
      { kind: 'moved', cellId: 'b' },
      { kind: 'moved', cellId: 'a' },
    ]);
  });
});
