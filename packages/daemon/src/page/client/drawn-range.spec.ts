import type { WireOutput } from '@nteract-mcp/runtimed-protocol';
import { describe, expect, it } from 'vitest';
import { cellGapPx, cellTops, drawnRange, estimateHeight } from './drawn-range.js';
import { LiveDocument } from './live-document.js';
import type { SnapshotCell } from './notebook-snapshot.js';

const cell = (id: string, source = '', outputs: readonly WireOutput[] = []): SnapshotCell => ({
  id,
  cell_type: 'code',
  source,
  outputs: outputs as SnapshotCell['outputs'],
  execution_count: null,
  metadata: {},
  version: 'v',
});

/** Tops of `count` cells of 100 px each: cell i spans [100 i, 100 (i + 1)). */
const evenTops = (count: number) => Float64Array.from({ length: count + 1 }, (_, index) => index * 100);

describe(drawnRange, () => {
  it('draws a notebook of up to 100 cells whole, wherever the viewport is', () => {
    expect(drawnRange(evenTops(100), 100, 50_000, 51_000)).toEqual([0, 99]);
    expect(drawnRange(evenTops(3), 3, -5000, -4000)).toEqual([0, 2]);
  });

  it('draws nothing of an empty notebook', () => {
    expect(drawnRange(new Float64Array(1), 0, 0, 800)).toEqual([0, -1]);
  });

  it('draws the cells that meet the viewport widened by 700 px each way', () => {
    // Viewport 5000..5800 px: cells from the one at 4300 to the one at 6500.
    expect(drawnRange(evenTops(1000), 1000, 5000, 5800)).toEqual([43, 65]);
    // A cell that begins exactly at the widened edge is drawn; one just past it is not.
    expect(drawnRange(evenTops(1000), 1000, 5000, 5799)).toEqual([43, 64]);
  });

  it('stops at the first and the last cell', () => {
    expect(drawnRange(evenTops(1000), 1000, 0, 800)).toEqual([0, 15]);
    expect(drawnRange(evenTops(1000), 1000, 99_500, 100_300)).toEqual([988, 999]);
  });

  it('follows cells of uneven heights', () => {
    const heights = [50, 2000, 50, ...Array.from({ length: 200 }, () => 100)];
    const tops = new Float64Array(heights.length + 1);
    heights.forEach((height, index) => {
      tops[index + 1] = (tops[index] as number) + height;
    });
    // Viewport 2600..3400, widened 1900..4100: the tall cell (50..2050) still meets it.
    expect(drawnRange(tops, heights.length, 2600, 3400)).toEqual([1, 23]);
    // Viewport 2900..3700, widened 2200..4400: from the cell at 2200 (the one ending there is not drawn).
    expect(drawnRange(tops, heights.length, 2900, 3700)).toEqual([4, 26]);
  });
});

describe(cellTops, () => {
  it('stacks measured heights, and estimates for cells not drawn yet', () => {
    const document = new LiveDocument(1, [cell('a'), cell('b', 'x\ny'), cell('c')]);
    const tops = cellTops(document, new Map([['a', 300]]));
    const b = estimateHeight(cell('b', 'x\ny'));
    expect([...tops]).toEqual([0, 300, 300 + b, 300 + b + estimateHeight(cell('c'))]);
  });
});

describe(estimateHeight, () => {
  it('grows with the source’s lines, a trailing newline starting no line', () => {
    const one = estimateHeight(cell('a', 'x = 1'));
    expect(estimateHeight(cell('a', 'x = 1\n'))).toBe(one);
    expect(estimateHeight(cell('a', 'x = 1\ny = 2\nz = 3'))).toBe(one + 40);
    expect(one).toBe(38 + 20 + cellGapPx);
  });

  it('gives markdown taller lines than code', () => {
    const code = cell('a', 'one\ntwo');
    expect(estimateHeight({ ...code, cell_type: 'markdown' })).toBeGreaterThan(estimateHeight(code));
  });

  it('counts a stream by its lines, and sizes an image above HTML above plain text', () => {
    const bare = estimateHeight(cell('a'));
    const stream = estimateHeight(cell('a', '', [{ output_type: 'stream', name: 'stdout', text: '1\n2\n3\n' }]));
    expect(stream - bare).toBe(10 + 3 * 19);
    const display = (data: Record<string, unknown>) =>
      estimateHeight(cell('a', '', [{ output_type: 'display_data', data, metadata: {} }])) - bare;
    expect(display({ 'image/png': 'iVBOR', 'text/plain': '<Figure>' })).toBeGreaterThan(
      display({ 'text/html': '<table/>' }),
    );
    expect(display({ 'text/html': '<table/>' })).toBeGreaterThan(display({ 'text/plain': '1' }));
    const error = estimateHeight(cell('a', '', [{ output_type: 'error', ename: 'E', evalue: 'x', traceback: [] }]));
    expect(error).toBeGreaterThan(bare);
  });
});
