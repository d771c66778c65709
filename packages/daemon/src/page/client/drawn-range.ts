import type { LiveDocument } from './live-document.js';
import type { SnapshotCell } from './notebook-snapshot.js';

/** A notebook of at most this many cells is drawn whole (a person finds any cell with the browser's search). */
const drawAllUpTo = 100;
/** How far above and below the viewport cells are kept in the document (px). */
const overscanPx = 700;
/** The space below each cell (its CSS `margin-bottom`), counted in its height. */
export const cellGapPx = 18;

/**
 * The cells a long notebook draws: `[first, last]` indices, those whose box meets the viewport
 * (`viewTop`..`viewBottom`, in the cells' box) widened by {@link overscanPx} each way; all of them
 * when the notebook has at most {@link drawAllUpTo} cells. `tops` is {@link cellTops}'s answer.
 * An empty notebook draws `[0, -1]` (nothing).
 */
export function drawnRange(tops: Float64Array, length: number, viewTop: number, viewBottom: number): [number, number] {
  if (length <= drawAllUpTo) return [0, length - 1];
  const first = Math.max(0, lastAtOrBelow(tops, viewTop - overscanPx, length));
  const last = Math.min(length - 1, lastAtOrBelow(tops, viewBottom + overscanPx, length));
  return [first, last];
}

/**
 * The top of each cell in the cells' box, and at index `length` the total height: a cell's
 * measured height when it was drawn once, its {@link estimateHeight} until then.
 */
export function cellTops(
  document: Pick<LiveDocument, 'length' | 'cellAt'>,
  heights: ReadonlyMap<string, number>,
): Float64Array {
  const length = document.length;
  const tops = new Float64Array(length + 1);
  for (let index = 0; index < length; index++) {
    const cell = document.cellAt(index) as SnapshotCell;
    tops[index + 1] = (tops[index] as number) + (heights.get(cell.id) ?? estimateHeight(cell));
  }
  return tops;
}

/** The largest index `i` in `0..length` with `tops[i] <= y` (`0` when none). */
function lastAtOrBelow(tops: Float64Array, y: number, length: number): number {
  let low = 0;
  let high = length;
  while (low < high) {
    const mid = (low + high + 1) >> 1;
    if ((tops[mid] as number) <= y) low = mid;
    else high = mid - 1;
  }
  return low;
}

/** A cell's height before it was drawn (px, with its gap): its lines of source and a rough size per output. */
export function estimateHeight(cell: SnapshotCell): number {
  const lines = countLines(cell.source);
  let height = cell.cell_type === 'markdown' ? 38 + lines * 24 : 38 + lines * 20;
  for (const output of cell.outputs) {
    if (output.output_type === 'stream') height += 10 + countLines(String(output.text ?? '')) * 19;
    else if (output.output_type === 'error') height += 120;
    else {
      const data = (output.data ?? {}) as Record<string, unknown>;
      height += data['image/png'] || data['image/jpeg'] ? 320 : data['text/html'] ? 160 : 40;
    }
  }
  return height + cellGapPx;
}

/** The lines of a text; a newline at its very end starts no line of its own. */
function countLines(text: string): number {
  let lines = 1;
  for (let at = text.indexOf('\n'); at >= 0 && at < text.length - 1; at = text.indexOf('\n', at + 1)) lines++;
  return lines;
}
