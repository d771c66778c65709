import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startUserSession, type ToolOutcome, type UserSession } from './support/index.js';

const sessions: UserSession[] = [];
afterEach(async () => {
  for (const session of sessions.splice(0)) await session.stop();
});

/** A default answer (no count) stays under this whatever the notebook's size. */
const defaultAnswerBound = 64 * 1024;
const cellCount = 10_000;

/** An nbformat 4.5 file of `count` code cells (ids `cell-<i>`), every other with a small output, as users have them. */
function writeNotebook(path: string, count: number): void {
  const cells = Array.from({ length: count }, (_, i) => ({
    id: `cell-${i}`,
    cell_type: 'code',
    execution_count: i % 2 === 0 ? i + 1 : null,
    metadata: {},
    source: [`values_${i} = [n * ${i} for n in range(10)]\n`, `print(sum(values_${i}))`],
    outputs: i % 2 === 0 ? [{ output_type: 'stream', name: 'stdout', text: [`${45 * i}\n`] }] : [],
  }));
  writeFileSync(path, JSON.stringify({ nbformat: 4, nbformat_minor: 5, metadata: {}, cells }));
}

const answerBytes = (outcome: ToolOutcome): number => Buffer.byteLength(JSON.stringify(outcome.raw));

/** The cell indices an answer of `format` lists, and the start its last line (or `truncated`) names. */
function readPage(format: 'summary' | 'json' | 'rich', outcome: ToolOutcome): { indices: number[]; next?: number } {
  if (format === 'json') {
    const answer = outcome.json as { cells: { index: number }[]; truncated?: { next_start: number } };
    return { indices: answer.cells.map((cell) => cell.index), next: answer.truncated?.next_start };
  }
  const pattern = format === 'rich' ? /^── \[(\d+)\] /gm : /^\[(\d+)\] /gm;
  const next = /start=(\d+)\)/.exec(outcome.text.split('\n').at(-1) ?? '');
  return {
    indices: [...outcome.text.matchAll(pattern)].map((match) => Number(match[1])),
    ...(next ? { next: Number(next[1]) } : {}),
  };
}

describe('a notebook of 10,000 cells, as a user runs nteract-mcp', () => {
  it('connects and lists it with bounded default answers in every format, each paging to every cell; edits it', {
    timeout: 300_000,
  }, async () => {
    const session = await startUserSession();
    sessions.push(session);
    const path = join(session.dirs.project, 'large.ipynb');
    writeNotebook(path, cellCount);

    const connected = await session.call('connect_notebook', { path });
    expect(connected.isError, connected.text).toBe(false);
    expect(answerBytes(connected)).toBeLessThanOrEqual(defaultAnswerBound);
    expect(String(connected.json?.cells)).toContain('get_all_cells(start=');

    for (const format of ['summary', 'json', 'rich'] as const) {
      const seen: number[] = [];
      let start = 0;
      for (let page = 0; page < cellCount; page += 1) {
        const listed = await session.call('get_all_cells', { format, ...(start > 0 ? { start } : {}) });
        expect(listed.isError, listed.text).toBe(false);
        expect(answerBytes(listed), `${format} from ${start}`).toBeLessThanOrEqual(defaultAnswerBound);
        const { indices, next } = readPage(format, listed);
        expect(indices[0], `${format} from ${start}`).toBe(start);
        seen.push(...indices);
        if (next === undefined) break;
        start = next;
      }
      expect(seen, format).toEqual(Array.from({ length: cellCount }, (_, i) => i));
    }

    // Edits at both ends of the notebook land, and an inserted cell is listed where it went.
    expect((await session.call('set_cell', { cell_id: 'cell-9999', source: 'last = True' })).isError).toBe(false);
    const inserted = await session.call('create_cell', { source: 'first = True', index: 0 });
    expect(inserted.isError, inserted.text).toBe(false);
    const head = await session.call('get_all_cells', { format: 'json', count: 2 });
    expect(((head.json?.cells ?? []) as { source: string }[]).map((cell) => cell.source)).toEqual([
      'first = True',
      'values_0 = [n * 0 for n in range(10)]\nprint(sum(values_0))',
    ]);
    expect((await session.call('get_cell', { cell_id: 'cell-9999' })).json?.source).toBe('last = True');
  });
});
