import { describe, expect, it } from 'vitest';
import type { CellOutput, NotebookCell } from '../../ports/notebook-handle.js';
import { ToolError } from '../tools/to-tool-failure.js';
import {
  maxCountedMatches,
  maxSearchedChars,
  maxShownLineChars,
  outputText,
  type SearchedNotebook,
  type SearchQuery,
  searchNotebooks,
} from './search-notebooks.js';

function cell(id: string, source: string, outputs: CellOutput[] = []): NotebookCell {
  return { id, cellType: 'code', source, outputs, executionCount: null, metadata: {} };
}

const query = (text: string, more: Partial<SearchQuery> = {}): SearchQuery => ({
  query: text,
  regex: false,
  caseSensitive: false,
  scope: 'both',
  contextLines: 0,
  ...more,
});

const first: SearchedNotebook = {
  notebookId: 'nb-a',
  path: '/work/a.ipynb',
  cells: [
    cell('c1', 'import pandas as pd\ndf = pd.read_csv("sales.csv")\ntotal = df.amount.sum()', [
      { output_type: 'stream', name: 'stdout', text: 'loaded 12 rows\nTotal: 340\n' },
    ]),
    cell('c2', 'print(total)', [{ output_type: 'execute_result', data: { 'text/plain': '340' }, metadata: {} }]),
  ],
};
const second: SearchedNotebook = {
  notebookId: 'nb-b',
  path: undefined,
  cells: [
    cell('d1', 'x = 1'),
    cell('d2', 'raise ValueError("total went wrong")', [
      {
        output_type: 'error',
        ename: 'ValueError',
        evalue: 'total went wrong',
        traceback: ['\u001b[31mValueError\u001b[0m: total went wrong'],
      },
    ]),
  ],
};

function failure(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ToolError);
    return (error as Error).message;
  }
  throw new Error('expected a tool error');
}

describe('searchNotebooks', () => {
  it('finds text in sources and outputs of every notebook given, in order, with cell, line and column', () => {
    const { matches, capped } = searchNotebooks([first, second], query('total'));
    expect(capped).toBe(false);
    expect(
      matches.map((match) => [match.notebook_id, match.cell_id, match.cell_index, match.in, match.line, match.column]),
    ).toEqual([
      ['nb-a', 'c1', 0, 'source', 3, 1],
      ['nb-a', 'c1', 0, 'output', 2, 1],
      ['nb-a', 'c2', 1, 'source', 1, 7],
      ['nb-b', 'd2', 1, 'source', 1, 19],
      ['nb-b', 'd2', 1, 'output', 1, 13],
      ['nb-b', 'd2', 1, 'output', 2, 13],
    ]);
    expect(matches[0]).toMatchObject({ path: '/work/a.ipynb', cell_type: 'code', text: 'total = df.amount.sum()' });
    expect(matches[1]).toMatchObject({ output_index: 0, text: 'Total: 340' });
    expect(matches[3]?.path).toBeNull();
    // Tracebacks are searched without their colours.
    expect(matches[5]?.text).toBe('ValueError: total went wrong');
  });

  it('matches case, one place at a time, and regular expressions with ^ and $ at line ends', () => {
    expect(searchNotebooks([first], query('Total', { caseSensitive: true })).matches).toHaveLength(1);
    expect(searchNotebooks([first], query('total', { scope: 'source' })).matches.map((m) => m.in)).toEqual([
      'source',
      'source',
    ]);
    expect(searchNotebooks([first], query('total', { scope: 'outputs' })).matches.map((m) => m.cell_id)).toEqual([
      'c1',
    ]);
    const regex = searchNotebooks([first, second], query('^\\w+ = (df|\\d)', { regex: true })).matches;
    expect(regex.map((match) => `${match.cell_id}:${match.line}`)).toEqual(['c1:3', 'd1:1']);
    expect(searchNotebooks([first], query('^\\d+$', { regex: true })).matches).toMatchObject([
      { cell_id: 'c2', in: 'output', line: 1, text: '340' },
    ]);
    // A literal query is literal.
    expect(searchNotebooks([first], query('df.amount')).matches).toHaveLength(1);
    expect(searchNotebooks([first], query('df.amoun.', { regex: false })).matches).toHaveLength(0);
  });

  it('shows context lines around a match, within the text', () => {
    const [match] = searchNotebooks([first], query('read_csv', { contextLines: 2 })).matches;
    expect(match).toMatchObject({
      line: 2,
      before: ['import pandas as pd'],
      after: ['total = df.amount.sum()'],
    });
  });

  it('gives one result per line, and cuts a long line around its match', () => {
    const line = `${'a'.repeat(1000)}needle${'b'.repeat(1000)} needle`;
    const [match, ...rest] = searchNotebooks(
      [{ notebookId: 'n', path: undefined, cells: [cell('c', line)] }],
      query('needle'),
    ).matches;
    expect(rest).toEqual([]);
    expect(match?.column).toBe(1001);
    expect(match?.text.length).toBeLessThanOrEqual(maxShownLineChars + 2);
    expect(match?.text).toMatch(/^…a+needleb+…$/);
  });

  it('searches each text up to its bound, saying how many were cut', () => {
    const long = `${'x'.repeat(maxSearchedChars)}\nneedle`;
    const outcome = searchNotebooks([{ notebookId: 'n', path: undefined, cells: [cell('c', long)] }], query('needle'));
    expect(outcome).toMatchObject({ matches: [], cutTexts: 1 });
  });

  it('stops counting at its bound', () => {
    const many = Array.from({ length: maxCountedMatches + 5 }, () => 'hit').join('\n');
    const outcome = searchNotebooks([{ notebookId: 'n', path: undefined, cells: [cell('c', many)] }], query('hit'));
    expect(outcome.capped).toBe(true);
    expect(outcome.matches).toHaveLength(maxCountedMatches);
    expect(outcome.matches.at(-1)?.line).toBe(maxCountedMatches);
  });

  it('refuses an empty query and an invalid pattern, saying why', () => {
    expect(failure(() => searchNotebooks([first], query('')))).toBe('query must not be empty.');
    expect(failure(() => searchNotebooks([first], query('(unclosed', { regex: true })))).toMatch(
      /^Invalid regular expression "\(unclosed": .*Fix it, or search the literal text with regex=false\.$/,
    );
  });

  it('stops a pattern that backtracks without end, at its time limit', () => {
    const evil = { notebookId: 'n', path: undefined, cells: [cell('c', `${'a'.repeat(40)}!`)] };
    expect(failure(() => searchNotebooks([evil], query('^(a+)+$', { regex: true }), 200))).toContain(
      'The search was stopped after 0.2 s',
    );
  });
});

describe('outputText', () => {
  it('reads streams, errors without colours, and a result’s plain text or else its Markdown', () => {
    expect(outputText({ output_type: 'stream', name: 'stdout', text: ['a\n', 'b'] })).toBe('a\nb');
    expect(
      outputText({ output_type: 'display_data', data: { 'text/markdown': '# Title', 'image/png': 'x' }, metadata: {} }),
    ).toBe('# Title');
    expect(outputText({ output_type: 'execute_result', data: { 'text/plain': ['1', '2'] }, metadata: {} })).toBe('12');
    expect(outputText({ output_type: 'unknown' })).toBe('');
  });
});
