import { afterEach, describe, expect, it } from 'vitest';
import {
  type ChildServerTestHarness,
  startChildServerTestHarness,
  toolError,
} from '../../testing/start-child-server-test-harness.js';
import type { SearchMatch } from '../inspection/search-notebooks.js';

describe('search_notebook', () => {
  let harness: ChildServerTestHarness;
  afterEach(async () => {
    await harness.close();
  });

  /** Two notebooks: the first parked, the second active; the harness's kernel prints `out: <source>`. */
  async function twoNotebooks(): Promise<{ parked: string; active: string; cells: Record<string, string> }> {
    harness = await startChildServerTestHarness();
    const parked = await harness.createNotebook();
    const a1 = await harness.callJson('create_cell', { source: 'weight = 70\nheight = 1.8', and_run: true });
    const a2 = await harness.callJson('create_cell', { source: '# Weights\nsome notes', cell_type: 'markdown' });
    const active = await harness.createNotebook();
    const b1 = await harness.callJson('create_cell', { source: 'bmi = weight / height ** 2' });
    return {
      parked: parked.notebookId,
      active: active.notebookId,
      cells: { a1: String(a1.cell_id), a2: String(a2.cell_id), b1: String(b1.cell_id) },
    };
  }

  const where = (matches: unknown) =>
    (matches as SearchMatch[]).map((match) => `${match.cell_id}/${match.in}/${match.line}:${match.text}`);

  it('searches the active notebook, or every open one, in sources and outputs', async () => {
    const { parked, active, cells } = await twoNotebooks();
    const onlyActive = await harness.callJson('search_notebook', { query: 'WEIGHT' });
    expect(onlyActive).toMatchObject({
      total_matches: 1,
      notebooks_searched: [{ notebook_id: active, cells: 1 }],
    });
    expect(where(onlyActive.matches)).toEqual([`${cells.b1}/source/1:bmi = weight / height ** 2`]);

    const all = await harness.callJson('search_notebook', { query: 'weight', notebook: 'all', context_lines: 0 });
    expect((all.notebooks_searched as { notebook_id: string }[]).map((notebook) => notebook.notebook_id)).toEqual([
      active,
      parked,
    ]);
    expect(where(all.matches)).toEqual([
      `${cells.b1}/source/1:bmi = weight / height ** 2`,
      `${cells.a1}/source/1:weight = 70`,
      `${cells.a1}/output/1:out: weight = 70`,
      `${cells.a2}/source/1:# Weights`,
    ]);
    expect(String(all.bounds)).toContain('1,000,000 characters');

    const regex = await harness.callJson('search_notebook', {
      query: '^height = (\\d\\.\\d)$',
      regex: true,
      notebook: 'all',
      in: 'outputs',
      context_lines: 1,
    });
    expect(regex.matches).toEqual([
      expect.objectContaining({
        notebook_id: parked,
        cell_id: cells.a1,
        cell_index: 0,
        in: 'output',
        output_index: 0,
        line: 2,
        column: 1,
        text: 'height = 1.8',
        before: ['out: weight = 70'],
        after: [],
      }),
    ]);
  });

  it('pages with start and count, naming the next start', async () => {
    await twoNotebooks();
    const first = await harness.callJson('search_notebook', { query: 'e', notebook: 'all', count: 2 });
    expect(first).toMatchObject({ total_matches: 7, start: 0, truncated: { next_start: 2 } });
    const rest = await harness.callJson('search_notebook', { query: 'e', notebook: 'all', start: 2, count: 10 });
    expect((rest.matches as unknown[]).length).toBe(5);
    expect(rest).not.toHaveProperty('truncated');
    expect(where([...(first.matches as unknown[]), ...(rest.matches as unknown[])])).toEqual(
      where((await harness.callJson('search_notebook', { query: 'e', notebook: 'all' })).matches),
    );
  });

  it('refuses a bad pattern and out-of-range arguments, saying why; no notebook is the slot’s error', async () => {
    harness = await startChildServerTestHarness();
    expect(await toolError(harness.call('search_notebook', { query: 'x' }))).toContain('No active notebook');
    await harness.createNotebook();
    expect(await toolError(harness.call('search_notebook', { query: '[a-', regex: true }))).toMatch(
      /^Invalid regular expression "\[a-": /,
    );
    expect(await toolError(harness.call('search_notebook', { query: 'x', count: 501 }))).toContain(
      'count must be between 1 and 500',
    );
    expect(await toolError(harness.call('search_notebook', { query: 'x', context_lines: 11 }))).toContain(
      'context_lines must be at most 10',
    );
    expect(await toolError(harness.call('search_notebook', { query: 'x', in: 'everywhere' }))).toContain('in:');
  });
});
