import type { NotebookHandle } from '@nteract-mcp/core';
import { describe, expect, it } from 'vitest';
import { viewContentOf } from './view-content.js';

const png = 'iVBORw0KGgo'.padEnd(400, 'A');

/** A handle that knows `cells` by id (only `getCell` is asked). */
function handleWith(cells: Record<string, { outputs: Record<string, unknown>[]; executionCount: number | null }>) {
  return {
    notebookId: 'nb-1',
    getCell: async (id: string) => {
      const cell = cells[id];
      if (!cell) throw new Error(`no cell ${id}`);
      return { id, cellType: 'code', source: 'plot()', metadata: {}, ...cell };
    },
  } as unknown as NotebookHandle;
}

function textResult(json: unknown, extra: Record<string, unknown> = {}) {
  return { content: [{ type: 'text', text: JSON.stringify(json) }], ...extra };
}

describe(viewContentOf, () => {
  it('shows the cells the result names, read again with all their outputs, each with the status the result gives it', async () => {
    const handle = handleWith({
      a: {
        executionCount: 3,
        outputs: [{ output_type: 'display_data', data: { 'image/png': png, 'text/plain': 'fig' } }],
      },
      b: { executionCount: null, outputs: [{ output_type: 'stream', name: 'stdout', text: ['x', 'y'] }] },
    });
    const content = await viewContentOf({
      shows: 'cells',
      arguments: {},
      result: textResult({
        results: [
          { cell_id: 'a', status: 'done' },
          { cell_id: 'b', status: 'error' },
        ],
      }),
      handle,
      liveView: async () => 'watch it live',
    });
    expect(content).toEqual({
      view: 'nteract-cells',
      notebookId: 'nb-1',
      liveView: 'watch it live',
      cells: [
        {
          id: 'a',
          cellType: 'code',
          source: 'plot()',
          executionCount: 3,
          status: 'done',
          outputs: [{ output_type: 'display_data', data: { 'image/png': png, 'text/plain': 'fig' } }],
          omittedOutputs: 0,
        },
        {
          id: 'b',
          cellType: 'code',
          source: 'plot()',
          executionCount: null,
          status: 'error',
          outputs: [{ output_type: 'stream', name: 'stdout', text: 'xy' }],
          omittedOutputs: 0,
        },
      ],
    });
  });

  it('bounds what it sends: outputs past the limit counted, not sent; images past the budget left out', async () => {
    const many = Array.from({ length: 45 }, (_, i) => ({ output_type: 'stream', name: 'stdout', text: `${i}\n` }));
    const handle = handleWith({ a: { executionCount: 1, outputs: many } });
    const call = {
      shows: 'cells' as const,
      result: textResult({ cell_id: 'a' }),
      handle,
      liveView: async () => undefined,
    };
    const first = await viewContentOf({ ...call, arguments: {} });
    expect(first?.cells[0]?.outputs).toHaveLength(30);
    expect(first?.cells[0]?.omittedOutputs).toBe(15);
    const full = await viewContentOf({ ...call, arguments: { cell_id: 'a', offset: 0, length: 2000 } });
    expect(full?.cells[0]?.outputs).toHaveLength(45);

    const huge = 'A'.repeat(3 * 1024 * 1024);
    const images = handleWith({
      a: {
        executionCount: 1,
        outputs: [
          { output_type: 'display_data', data: { 'image/png': huge } },
          { output_type: 'display_data', data: { 'image/png': huge } },
        ],
      },
    });
    const bounded = await viewContentOf({ ...call, handle: images, arguments: {} });
    expect(bounded?.cells[0]?.outputs.map((output) => output.output_type)).toEqual(['display_data', 'omitted']);
  });

  it('gives a failed call its error text, and a run that made no cell its own outputs', async () => {
    const failed = await viewContentOf({
      shows: 'cells',
      arguments: { cell_id: 'gone' },
      result: { content: [{ type: 'text', text: 'Cell gone not found' }], isError: true },
      handle: undefined,
      liveView: async () => undefined,
    });
    expect(failed).toEqual({ view: 'nteract-cells', cells: [], error: 'Cell gone not found' });
    const scratch = await viewContentOf({
      shows: 'cells',
      arguments: { code: 'print(1)' },
      result: {
        content: [
          { type: 'text', text: JSON.stringify({ status: 'done', outputs: ['1\n'] }) },
          { type: 'image', data: png, mimeType: 'image/png' },
        ],
      },
      handle: handleWith({}),
      liveView: async () => undefined,
    });
    expect(scratch?.scratch).toEqual({
      status: 'done',
      outputs: [
        { output_type: 'stream', name: 'stdout', text: '1\n' },
        { output_type: 'display_data', data: { 'image/png': png } },
      ],
    });
  });
});
