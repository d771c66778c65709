import { ResultShaper } from '@nteract-mcp/output-shaping';
import { describe, expect, it } from 'vitest';
import type { NotebookCell } from '../../ports/notebook-handle.js';
import { defaultCellsAnswerBytes, renderCell, renderCellsRich, summarizeCells } from './summarize-cells.js';
import { escapedBytes } from './tool-result-budget.js';

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

  it('stops a default summary at about defaultCellsAnswerBytes of escaped text, naming the next start', () => {
    // Quotes and non-ASCII text take more bytes in the answer than characters in the line.
    const wide = Array.from({ length: 500 }, (_, index) => cell(`wide-cell-${index}`, `"ü${'"'.repeat(79)}`));
    const text = summarizeCells(wide);
    const lines = text.split('\n');
    const shown = lines.length - 1;
    expect(shown).toBeLessThan(500);
    expect(escapedBytes(lines.slice(0, -1).join('\n'))).toBeLessThanOrEqual(defaultCellsAnswerBytes);
    expect(lines.at(-1)).toBe(`(cells 0–${shown - 1} of 500: get_all_cells(start=${shown}) lists the next)`);
    expect(summarizeCells(wide, { count: 500 }).split('\n')).toHaveLength(500);
  });

  it('stays bounded for a large notebook unless a count is given, saying how to read on', () => {
    const many = Array.from({ length: 1200 }, (_, index) => cell(`c${index}`, `x = ${index}`));
    const lines = summarizeCells(many).split('\n');
    expect(lines).toHaveLength(501);
    expect(lines.at(-1)).toBe('(cells 0–499 of 1200: get_all_cells(start=500) lists the next)');
    expect(summarizeCells(many, { limit: 100 }).split('\n').at(-1)).toBe(
      '(cells 0–99 of 1200: get_all_cells(start=100) lists the next)',
    );
    expect(summarizeCells(many, { start: 1000 }).split('\n').at(-1)).toBe('(cells 1000–1199 of 1200)');
    // An explicit count is honoured whatever its size.
    expect(summarizeCells(many, { count: 1200 }).split('\n')).toHaveLength(1200);
  });
});

describe(renderCell, () => {
  it('names who last edited the cell when the backend knows, and says nothing when it does not', () => {
    const shaper = new ResultShaper();
    const known = renderCell(cell('a', 'x = 2', { editedBy: 'human:Ada' }), { includeOutputs: false, shaper });
    expect(known).toEqual({
      cell_id: 'a',
      cell_type: 'code',
      source: 'x = 2',
      execution_count: null,
      edited_by: 'human:Ada',
    });
    expect(renderCell(cell('b', 'y'), { includeOutputs: false, shaper })).not.toHaveProperty('edited_by');
  });
});

describe(renderCellsRich, () => {
  it('shows shaped outputs: rich text, images named by content item, cut markers naming get_cell', () => {
    const shaper = new ResultShaper();
    const cells = [
      cell('a', 'display(HTML(...))', {
        executionCount: 1,
        outputs: [
          { output_type: 'display_data', data: { 'text/html': '<b>bold</b>', 'text/plain': '<HTML>' } },
          { output_type: 'stream', name: 'stdout', text: 'y'.repeat(10_000) },
        ],
      }),
    ];
    const text = renderCellsRich(cells, { includeOutputs: true, shaper });
    expect(text).toContain('── outputs\n**bold** [also text/plain]\n');
    expect(text).toMatch(/cut here; read them with get_cell\(cell_id="a", offset=\d+\)\] …/);
  });
});
