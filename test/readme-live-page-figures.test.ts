// The README's live-page latency table, read against the reports the benchmarks wrote
// (bench/results/*.json): a figure is the one measured, for the notebook it was measured on. A
// figure measured on one notebook and stated for another (an empty notebook's, read as the page's
// latency at any size) is what issue 49 found.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

interface Summary {
  readonly n: number;
  readonly p50: number;
  readonly p90: number;
  readonly p99: number;
}

const readme = readFileSync(fileURLToPath(new URL('../README.md', import.meta.url)), 'utf8');

/** The `results` of bench/results/`name`.json, by sample set. */
function measured(name: string): Readonly<Record<string, Summary | undefined>> {
  const report = JSON.parse(
    readFileSync(fileURLToPath(new URL(`../bench/results/${name}.json`, import.meta.url)), 'utf8'),
  );
  return report.results as Record<string, Summary | undefined>;
}

/**
 * Each answer-to-visible sample set the benchmarks measure, and the words that find its row in the
 * README's table: the notebook's (with the benchmark's file) and the call's.
 */
const sets = [
  { bench: 'live-page', set: 'answerToVisible', notebook: 'new and empty', call: '`create_cell`' },
  { bench: 'live-page', set: 'plotCreateToVisible', notebook: 'a 640×480 plot PNG', call: '`create_cell`' },
  { bench: 'live-page', set: 'plotEditToVisible', notebook: '10 cells with a plot', call: '`set_cell`' },
  { bench: 'live-page-scale', set: 'longEditToVisible', notebook: '10,000 small cells', call: '`set_cell`' },
  { bench: 'live-page-scale', set: 'imageEditToVisible', notebook: '20 MB PNG', call: '`set_cell`' },
] as const;

/** The rows of the README's table of the agent's call to the change shown, as cells. */
function tableRows(): string[][] {
  const header = "| notebook | the agent's call | p50 | p90 | p99 |";
  const start = readme.indexOf(header);
  expect(start, 'the README has the live page table').toBeGreaterThan(0);
  const lines = readme.slice(start).split('\n').slice(2);
  const rows: string[][] = [];
  for (const line of lines) {
    if (!line.trim().startsWith('|')) break;
    rows.push(
      line
        .trim()
        .slice(1, -1)
        .split('|')
        .map((cell) => cell.trim()),
    );
  }
  return rows;
}

/** Whether `stated` (`<number> ms`) is `value` as written to the figures the statement gives. */
function states(stated: string, value: number): boolean {
  const match = /^(\d+(?:\.(\d+))?) ms$/.exec(stated);
  if (!match) return false;
  const decimals = match[2]?.length ?? 0;
  return Math.abs(Number(match[1]) - value) <= 0.5 * 10 ** -decimals + 1e-9;
}

describe("the README's live-page figures (issue 49, 4)", () => {
  it('state, for each notebook the live-page benchmarks measure (10 cells with a plot among them), p50, p90 and p99 as measured, and nothing else', () => {
    const rows = tableRows();
    for (const { bench, set, notebook, call } of sets) {
      const summary = measured(bench)[set];
      expect(summary, `bench/results/${bench}.json has ${set}`).toBeDefined();
      if (summary === undefined) continue;
      const matching = rows.filter(
        ([what = '', how = '']) =>
          what.includes(notebook) && what.includes(`(\`bench/${bench}.mjs\`)`) && how.includes(call),
      );
      expect(
        matching.map((row) => row.join(' | ')),
        `one README row for ${bench} ${set}`,
      ).toHaveLength(1);
      const [, how = '', p50 = '', p90 = '', p99 = ''] = matching[0] ?? [];
      expect(how, `${set}: the calls counted`).toContain(`${summary.n} calls`);
      for (const [quantile, stated] of [
        ['p50', p50],
        ['p90', p90],
        ['p99', p99],
      ] as const) {
        const value = summary[quantile];
        expect(states(stated, value), `${bench} ${set} ${quantile}: the README says ${stated}, measured ${value}`).toBe(
          true,
        );
      }
    }
    expect(rows, 'a row for every set measured, no other').toHaveLength(sets.length);
  });
});
