import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { allProcesses } from './support/index.js';

/**
 * The benchmarks are not tests, but they must keep working: each runs here at its smoke size (a
 * few samples, results in a temp dir), on the user's path it measures, and must write a report
 * with finite figures and leave nothing running.
 */
const runner = fileURLToPath(new URL('../bench/run-benchmarks.mjs', import.meta.url));
const resultsPage = fileURLToPath(new URL('../bench/lib/results-page.mjs', import.meta.url));
const out = mkdtempSync(join(tmpdir(), 'bench-smoke-'));
// The benchmarks' temp HOMEs go under a directory of this run's own, so that what other runs on the
// machine start (another checkout's benchmarks) is never taken for a process left behind here.
const benchTmp = join(out, 'tmp');
mkdirSync(benchTmp);
afterAll(() => rmSync(out, { recursive: true, force: true }));

function runBench(names: readonly string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [runner, ...names, '--smoke', '--results-dir', out],
      { timeout: 600_000, maxBuffer: 32 * 1024 * 1024, env: { ...process.env, TMPDIR: benchTmp } },
      (error, stdout, stderr) => resolve({ code: error ? 1 : 0, stdout, stderr }),
    );
  });
}

const numbersIn = (value: unknown): number[] =>
  value !== null && typeof value === 'object'
    ? Object.values(value).flatMap(numbersIn)
    : typeof value === 'number'
      ? [value]
      : [];

describe('the benchmarks at smoke size', () => {
  it('hop-overhead, proxy-forwarding, child-start, recovery, memory, execution, live-page, live-page-scale, large-outputs, chatty-cell, source-edits and comments each write a report of finite figures and their charts', {
    timeout: 600_000,
  }, async () => {
    const names = [
      'hop-overhead',
      'proxy-forwarding',
      'child-start',
      'recovery',
      'memory',
      'execution',
      'live-page',
      'live-page-scale',
      'large-outputs',
      'chatty-cell',
      'source-edits',
      'comments',
    ];
    const run = await runBench(names);
    expect(run.code, run.stderr).toBe(0);
    for (const name of names) {
      const report = JSON.parse(readFileSync(join(out, `${name}.json`), 'utf8')) as { size: string; results: unknown };
      expect(report.size).toBe('smoke');
      const figures = numbersIn(report.results);
      expect(figures.length, name).toBeGreaterThan(3);
      for (const figure of figures) expect(Number.isFinite(figure), `${name}: ${figure}`).toBe(true);
      expect(readFileSync(join(out, `${name}.svg`), 'utf8')).toContain('<svg');
      // Latencies are drawn as distributions too: one line per sample set.
      if (
        name !== 'memory' &&
        name !== 'large-outputs' &&
        name !== 'chatty-cell' &&
        name !== 'source-edits' &&
        name !== 'comments'
      )
        expect(readFileSync(join(out, `${name}-distribution.svg`), 'utf8')).toContain('<polyline');
    }
    // Every benchmark ran in a temp HOME of its own and stopped what it started there. A process
    // that has exited but is not reaped yet (state Z: a stopped daemon waits for init) is gone.
    const benchHome = `HOME=${join(benchTmp, 'nteract-bench-')}`;
    const left = allProcesses().filter((info) => {
      if (info.state === 'Z') return false;
      try {
        return readFileSync(`/proc/${info.pid}/environ`, 'utf8')
          .split('\0')
          .some((entry) => entry.startsWith(benchHome));
      } catch {
        return false;
      }
    });
    expect(left).toEqual([]);
  });

  it('scale writes its curves (a line chart each) and judged verdicts, printed with ✓/✗ at the end of the run and tabled at the top of RESULTS.md', {
    timeout: 600_000,
  }, async () => {
    const run = await runBench(['scale']);
    expect(run.code, run.stderr).toBe(0);
    const report = JSON.parse(readFileSync(join(out, 'scale.json'), 'utf8')) as {
      results: unknown;
      curves: { id: string; x: { values: number[] }; series: Record<string, (number | null)[]> }[];
      verdicts: { figure: string; value: number; target: string; met: boolean }[];
    };
    for (const figure of numbersIn(report.results)) expect(Number.isFinite(figure), `scale: ${figure}`).toBe(true);
    expect(report.curves.length).toBeGreaterThan(3);
    for (const curve of report.curves) {
      for (const values of Object.values(curve.series)) expect(values).toHaveLength(curve.x.values.length);
      expect(readFileSync(join(out, `scale-${curve.id}.svg`), 'utf8')).toContain('<polyline');
    }
    expect(report.verdicts.length).toBeGreaterThan(3);
    for (const verdict of report.verdicts) expect(typeof verdict.met, verdict.figure).toBe('boolean');

    // What `npm run bench` ends with: every judged figure, its target and ✓/✗, and the count.
    const printed = run.stdout.slice(run.stdout.lastIndexOf('\nTargets ('));
    for (const verdict of report.verdicts) {
      const line = printed.split('\n').find((text) => text.includes(verdict.figure));
      expect(line, verdict.figure).toMatch(new RegExp(`^${verdict.met ? '✓' : '✗'} scale .*target ${verdict.target}`));
    }
    const met = report.verdicts.filter((verdict) => verdict.met).length;
    expect(printed).toContain(`${met} met, ${report.verdicts.length - met} missed`);
    // RESULTS.md (written here into the run's own directory) opens with the same table, and shows each curve's chart.
    const page = join(out, 'RESULTS.md');
    await new Promise<void>((resolve, reject) =>
      execFile(
        process.execPath,
        [
          '--input-type=module',
          '-e',
          `import(${JSON.stringify(resultsPage)}).then((m) => m.writeResultsPage(${JSON.stringify(out)}, ${JSON.stringify(page)}))`,
        ],
        (error) => (error ? reject(error) : resolve()),
      ),
    );
    const markdown = readFileSync(page, 'utf8');
    const targets = markdown.slice(
      markdown.indexOf('## Targets'),
      markdown.indexOf('\n## ', markdown.indexOf('## Targets') + 1),
    );
    for (const verdict of report.verdicts) {
      expect(targets, verdict.figure).toContain(`| scale | ${verdict.figure} |`);
    }
    for (const curve of report.curves) expect(markdown).toContain(`(results/scale-${curve.id}.svg)`);
  });
});
