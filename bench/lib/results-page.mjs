// bench/RESULTS.md from the last result of every benchmark (bench/results/*.json): the machine,
// each figure next to its target, and the charts.
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import { verdictTable } from './verdict.mjs';

const format = (value) =>
  typeof value === 'number' ? (Number.isInteger(value) ? String(value) : value.toFixed(2)) : JSON.stringify(value);

/**
 * A report's scale curves as markdown: per curve a table (one row per x value, one column per
 * series; `–` where not measured) and its line chart, `results/<name>-<id>.svg`.
 */
export function curvesMarkdown(report) {
  const lines = [];
  for (const curve of report.curves ?? []) {
    const names = Object.keys(curve.series);
    lines.push(
      `### ${curve.title}`,
      '',
      `| ${curve.x.label} | ${names.map((name) => `${name} (${curve.y.label})`).join(' | ')} |`,
      `| ${['---', ...names.map(() => '---')].join(' | ')} |`,
    );
    curve.x.values.forEach((x, at) => {
      const cells = names.map((name) => {
        const value = curve.series[name][at];
        return typeof value === 'number' && Number.isFinite(value) ? format(value) : '–';
      });
      lines.push(`| ${format(x)} | ${cells.join(' | ')} |`);
    });
    lines.push('', `![${curve.title}](results/${report.name}-${curve.id}.svg)`, '');
  }
  return lines;
}

/** `[path, value]` of every number in `value`, paths dotted. */
function leaves(value, path = []) {
  if (value !== null && typeof value === 'object')
    return Object.entries(value).flatMap(([key, inner]) => leaves(inner, [...path, key]));
  return [[path.join('.'), value]];
}

export function writeResultsPage(resultsDir, pagePath) {
  const reports = readdirSync(resultsDir)
    .filter((name) => name.endsWith('.json'))
    .sort()
    .map((name) => JSON.parse(readFileSync(join(resultsDir, name), 'utf8')));
  const cpu = cpus()[0]?.model ?? 'unknown CPU';
  const lines = [
    '# Benchmark results',
    '',
    'Written by `npm run bench` from the last run of each benchmark (`bench/results/*.json`). Figures',
    'are medians or quantiles of many samples, and ratios of paths measured side by side in one run;',
    'absolute times depend on the machine and its load.',
    '',
    `Machine: ${cpus().length} × ${cpu}, ${(totalmem() / 2 ** 30).toFixed(1)} GiB, Node ${process.version}.`,
    '',
    '## Targets',
    '',
    'Every judged figure of the last run beside its target (✓ met, ✗ missed); the sections below',
    'give every figure measured, judged or not.',
    '',
    ...verdictTable(reports),
    '',
  ];
  for (const report of reports) {
    lines.push(
      `## ${report.name}`,
      '',
      `${report.unit}. Measured ${report.measuredAt} (${report.size ?? 'full'} size).`,
      '',
    );
    lines.push('| figure | value |', '| --- | --- |');
    for (const [path, value] of [
      ...leaves(report.results ?? {}),
      ...leaves(report.ratios ?? {}).map(([p, v]) => [`ratio ${p}`, v]),
    ]) {
      lines.push(`| ${path} | ${format(value)} |`);
    }
    if (report.targets) {
      lines.push(
        '',
        'Targets: ' +
          Object.entries(report.targets)
            .map(([key, target]) => `${key} ${target}`)
            .join('; ') +
          '.',
      );
    }
    lines.push('', `![${report.name}](results/${report.name}.svg)`, '');
    lines.push(...curvesMarkdown(report));
    if (existsSync(join(resultsDir, `${report.name}-distribution.svg`)))
      lines.push(`![${report.name}: distributions](results/${report.name}-distribution.svg)`, '');
  }
  writeFileSync(pagePath, `${lines.join('\n')}\n`);
}
