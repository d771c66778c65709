import { describe, expect, it } from 'vitest';
import type { CellOutput, NotebookCell } from '../ports/notebook-handle.js';
import { outputPreviewLimit, renderOutputs, summarizeCells } from './summarize-cells.js';

const cell = (id: string, source: string, extra: Partial<NotebookCell> = {}): NotebookCell => ({
  id,
  cellType: 'code',
  source,
  outputs: [],
  executionCount: null,
  metadata: {},
  ...extra,
});

describe(summarizeCells, () => {
  it('gives one line per cell with its facts and a bounded preview of the first line', () => {
    const cells = [
      cell('a', 'import numpy as np\nnp.zeros(3)', { executionCount: 4, outputs: [{ output_type: 'stream' }] }),
      cell('b', 'x'.repeat(100), { cellType: 'markdown' }),
    ];
    expect(summarizeCells(cells)).toBe(
      `[0] a code (exec 4, 1 output): import numpy as np …\n[1] b markdown: ${'x'.repeat(80)}…`,
    );
    expect(summarizeCells(cells, { start: 5 })).toBe('(no cells in this range; the notebook has 2)');
    expect(summarizeCells([])).toBe('(empty notebook: no cells)');
  });
});

describe(renderOutputs, () => {
  it('cuts long text unless the full output is asked for, and names rich types', () => {
    const long: CellOutput = { output_type: 'stream', name: 'stderr', text: ['y'.repeat(outputPreviewLimit), 'zz'] };
    const [cut] = renderOutputs([long], false);
    expect(cut?.text).toBe(
      `${'y'.repeat(outputPreviewLimit)}\n… [2 more characters; pass full_output=true to see everything]`,
    );
    expect(renderOutputs([long], true)[0]?.text).toBe(`${'y'.repeat(outputPreviewLimit)}zz`);
    expect(renderOutputs([{ output_type: 'display_data', data: { 'image/png': 'iVBOR' } }], false)).toEqual([
      { output_type: 'display_data', text: '', mime_types: ['image/png'] },
    ]);
  });
});
