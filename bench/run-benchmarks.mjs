#!/usr/bin/env node
// Benchmarks (not tests): numbers are written to bench/results/<name>.json and a bar chart to
// bench/results/<name>.svg. Compare ratios measured in one run; absolute times vary by machine.
//
//   npm run bench                 all benchmarks
//   npm run bench -- container    only the container benchmark
//   npm run bench -- memory --cycles 2000 --results-dir /tmp/r   a longer growth curve (4,000 cycles), elsewhere
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chattyCellBenchmark } from './chatty-cell.mjs';
import { childStartBenchmark } from './child-start.mjs';
import { commentsBenchmark } from './comments.mjs';
import { executionBenchmark } from './execution.mjs';
import { hopOverheadBenchmark } from './hop-overhead.mjs';
import { largeOutputsBenchmark } from './large-outputs.mjs';
import { distributionChart } from './lib/distribution-chart.mjs';
import { lineChart } from './lib/line-chart.mjs';
import { writeResultsPage } from './lib/results-page.mjs';
import { formatFigure } from './lib/verdict.mjs';
import { livePageBenchmark } from './live-page.mjs';
import { livePageScaleBenchmark } from './live-page-scale.mjs';
import { memoryBenchmark } from './memory.mjs';
import { proxyForwardingBenchmark } from './proxy-forwarding.mjs';
import { recoveryBenchmark } from './recovery.mjs';
import { scaleBenchmark } from './scale.mjs';
import { sourceEditsBenchmark } from './source-edits.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const resultsDir = join(here, 'results');

/** Runs `fn` `iterations` times after a warm-up; returns the median of `rounds` rounds, in µs per call. */
function measure(fn, iterations, rounds = 7) {
  for (let i = 0; i < iterations; i++) fn();
  const perCall = [];
  for (let round = 0; round < rounds; round++) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < iterations; i++) fn();
    perCall.push(Number(process.hrtime.bigint() - start) / 1000 / iterations);
  }
  perCall.sort((a, b) => a - b);
  return perCall[Math.floor(rounds / 2)];
}

function barChart(title, rows) {
  const width = 640;
  const barHeight = 28;
  const max = Math.max(...rows.map((row) => row.value));
  const bars = rows
    .map((row, index) => {
      const y = 40 + index * (barHeight + 10);
      const length = Math.max(1, (row.value / max) * 380);
      return `<text x="10" y="${y + 19}" font-size="13">${row.label}</text><rect x="230" y="${y}" width="${length.toFixed(1)}" height="${barHeight}" fill="#4c72b0"/><text x="${(236 + length).toFixed(1)}" y="${y + 19}" font-size="12">${row.value.toFixed(1)} ${row.unit}</text>`;
    })
    .join('');
  const height = 50 + rows.length * (barHeight + 10);
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="sans-serif"><text x="10" y="22" font-size="15" font-weight="bold">${title}</text>${bars}</svg>\n`;
}

async function containerBenchmark() {
  const core = await import('@nteract-mcp/core');
  const { childPlugins } = await import('nteract-mcp');
  const plugins = childPlugins({ env: {} });
  const bare = measure(() => core.createMcpContainer({ plugins: [] }), 200);
  const full = measure(() => core.createMcpContainer({ plugins }), 200);
  const container = core.createMcpContainer({ plugins });
  const resolver = container.get(core.NotebookTargetResolver);
  const resolve = measure(() => resolver.resolve('0b9f2c44-5d1e-4a7b-9c3d-2e8f6a1b7c90', { cwd: '/' }), 20000);
  return {
    name: 'container',
    unit: 'µs per call (median of 7 rounds)',
    results: { bareContainerBuild: bare, childContainerBuild: full, resolveNotebookIdTarget: resolve },
    ratios: { childOverBare: full / bare },
    chart: [
      { label: 'core-only container', value: bare, unit: 'µs' },
      { label: 'child container', value: full, unit: 'µs' },
      { label: 'resolve a UUID target', value: resolve, unit: 'µs' },
    ],
  };
}

/**
 * Like {@link measure} for several functions at once, their rounds interleaved (A B C A B C …), so
 * that a machine busy with other work slows them alike; medians of `rounds` rounds, in µs per call.
 */
function measureInterleaved(fns, iterations, rounds = 15) {
  for (const fn of fns) for (let i = 0; i < iterations; i++) fn();
  const perCall = fns.map(() => []);
  for (let round = 0; round < rounds; round++) {
    fns.forEach((fn, index) => {
      const start = process.hrtime.bigint();
      for (let i = 0; i < iterations; i++) fn();
      perCall[index].push(Number(process.hrtime.bigint() - start) / 1000 / iterations);
    });
  }
  return perCall.map((times) => times.sort((x, y) => x - y)[Math.floor(rounds / 2)]);
}

/** A cell as the daemon sends it: a stream output and an execute_result, `payloadBytes` of text in the latter. */
function wireCell(index, payloadBytes) {
  return {
    id: `cell-${index}`,
    cell_type: index % 5 === 0 ? 'markdown' : 'code',
    source: `import numpy as np\nx_${index} = np.arange(${index})\nprint(x_${index}.sum())\nx_${index}\n`,
    outputs:
      index % 5 === 0
        ? []
        : [
            { output_type: 'stream', name: 'stdout', text: `${(index * (index - 1)) / 2}\n` },
            {
              output_type: 'execute_result',
              execution_count: index,
              data: { 'text/plain': `array([0, 1, ..., ${index - 1}])`, 'image/png': 'A'.repeat(payloadBytes) },
              metadata: {},
            },
          ],
    execution_count: index % 5 === 0 ? null : index,
    metadata: { tags: [], collapsed: false },
  };
}

/**
 * What reading a frame with the protocol's schema costs on top of `JSON.parse` (which every frame
 * pays anyway): a `get_cells` answer of 100 cells (small outputs, and 10 KiB of image data per code
 * cell), a `stream_appended` broadcast (client side), an `update_cell` request (daemon side).
 */
async function wireValidationBenchmark() {
  const protocol = await import('@nteract-mcp/runtimed-protocol');
  const frames = {
    getCells100: {
      text: JSON.stringify({
        type: 'ok',
        id: 7,
        document_version: 120,
        cells: Array.from({ length: 100 }, (_, i) => wireCell(i, 16)),
      }),
      read: (value) =>
        protocol.parseFromDaemon(protocol.wireNotebookAnswerSchemas.get_cells, value, 'get_cells answer'),
      iterations: 400,
    },
    getCells100WithImages: {
      text: JSON.stringify({
        type: 'ok',
        id: 7,
        document_version: 120,
        cells: Array.from({ length: 100 }, (_, i) => wireCell(i, 10 * 1024)),
      }),
      read: (value) =>
        protocol.parseFromDaemon(protocol.wireNotebookAnswerSchemas.get_cells, value, 'get_cells answer'),
      iterations: 40,
    },
    streamAppended: {
      text: JSON.stringify({
        type: 'broadcast',
        event: 'stream_appended',
        document_version: 310,
        execution_id: '5f0c8a4e-2b1d-4c3a-9e7f-0a1b2c3d4e5f',
        cell_id: 'cell-12',
        seq: 41,
        index: 0,
        keep: 1450,
        text: 'epoch 3/10 loss=0.4213 acc=0.8812\n',
      }),
      read: (value) => protocol.parseFromDaemon(protocol.wireRoomEventSchema, value, 'stream_appended broadcast'),
      iterations: 50_000,
    },
    updateCellRequest: {
      text: JSON.stringify({
        type: 'update_cell',
        id: 42,
        cell_id: 'cell-12',
        source: 'for epoch in range(10):\n    train(model, epoch)\n',
        idempotency_key: '0b9f2c44-5d1e-4a7b-9c3d-2e8f6a1b7c90',
      }),
      read: (value) => {
        const checked = protocol.checkClientRequest('notebook', value);
        if (checked.kind !== 'ok') throw new Error(`fixture refused: ${JSON.stringify(checked)}`);
        return checked.request;
      },
      iterations: 50_000,
    },
  };
  const results = {};
  const ratios = {};
  const chart = [];
  for (const [name, frame] of Object.entries(frames)) {
    frame.read(JSON.parse(frame.text)); // the fixture is valid
    const value = JSON.parse(frame.text);
    const [parseOnly, withSchema, schemaOnly] = measureInterleaved(
      [() => JSON.parse(frame.text), () => frame.read(JSON.parse(frame.text)), () => frame.read(value)],
      frame.iterations,
    );
    results[name] = {
      bytes: frame.text.length,
      jsonParseUs: parseOnly,
      jsonParseAndSchemaUs: withSchema,
      schemaOnlyUs: schemaOnly,
    };
    ratios[`${name}ParseAndSchemaOverParse`] = withSchema / parseOnly;
    ratios[`${name}SchemaOverParse`] = schemaOnly / parseOnly;
    chart.push(
      { label: `${name}: JSON.parse`, value: parseOnly, unit: 'µs' },
      { label: `${name}: + schema`, value: withSchema, unit: 'µs' },
    );
  }
  return {
    name: 'wire-validation',
    unit: 'µs per frame (median of 15 interleaved rounds)',
    results,
    ratios,
    chart,
  };
}

/** A PNG of `width`×`height` noise-free gradient, as base64 (what a plot looks like to the encoder). */
async function gradientPng(width, height) {
  const { PNG } = await import('pngjs');
  const png = new PNG({ width, height });
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const at = (y * width + x) * 4;
      png.data[at] = (x * 255) / width;
      png.data[at + 1] = (y * 255) / height;
      png.data[at + 2] = 128;
      png.data[at + 3] = 255;
    }
  }
  return PNG.sync.write(png).toString('base64');
}

/**
 * What shaping outputs costs the child per tool result: a 5 MB stream output cut to head and tail,
 * one 2 MB page of it, 300 displays capped, a 200-row HTML table and 50 HTML paragraphs as
 * Markdown, a 640×480 plot passed through and a 4000×3000 PNG scaled down to its bound.
 */
async function outputShapingBenchmark() {
  const core = await import('@nteract-mcp/output-shaping');
  const lines = Array.from({ length: 400_000 }, (_, i) => `line ${String(i).padStart(7, '0')}\n`).join('');
  const big = [{ output_type: 'stream', name: 'stdout', text: lines }];
  const many = Array.from({ length: 300 }, (_, i) => ({ output_type: 'display_data', data: { 'text/plain': `${i}` } }));
  const rows = Array.from({ length: 200 }, (_, i) => `<tr><td>${i}</td><td>${i * 2}</td></tr>`).join('');
  const table = [{ output_type: 'execute_result', data: { 'text/html': `<table>${rows}</table>` } }];
  const paragraphs = Array.from({ length: 50 }, (_, i) => `<p>Paragraph <b>${i}</b> with <a href="#">a link</a></p>`);
  const html = [{ output_type: 'display_data', data: { 'text/html': paragraphs.join('') } }];
  const plot = [
    { output_type: 'display_data', data: { 'image/png': await gradientPng(640, 480), 'text/plain': '<Figure>' } },
  ];
  const poster = [
    { output_type: 'display_data', data: { 'image/png': await gradientPng(4000, 3000), 'text/plain': '<Figure>' } },
  ];
  const readMore = (offset) => `get_results(execution_id="e", offset=${offset})`;
  const shape = (outputs) => () =>
    new core.ResultShaper().result(new core.ResultShaper().shapeOutputs(outputs, readMore));
  const ms = (us) => us / 1000;
  const once = (fn) => {
    const start = process.hrtime.bigint();
    fn();
    return Number(process.hrtime.bigint() - start) / 1000;
  };
  const firstDownscaleUs = once(shape(poster));
  const results = {
    stream5MBShapeMs: ms(measure(shape(big), 5, 5)),
    stream5MBPage2MBMs: ms(
      measure(() => new core.OutputsDocument(big).page(1_000_000, 2_000_000, 8 * 1024 * 1024), 5, 5),
    ),
    displays300ShapeMs: ms(measure(shape(many), 20)),
    htmlTable200RowsMs: ms(measure(shape(table), 20)),
    html50ParagraphsMs: ms(measure(shape(html), 20)),
    png640x480PassThroughMs: ms(measure(shape(plot), 20)),
    png4000x3000DownscaleMs: ms(firstDownscaleUs),
    png4000x3000AgainCachedMs: ms(measure(shape(poster), 3, 3)),
  };
  const shown = new core.ResultShaper().shapeOutputs(big, readMore)[0].text.length;
  return {
    name: 'output-shaping',
    unit: 'ms per tool result (median)',
    results: { ...results, stream5MBChars: lines.length, stream5MBShownChars: shown },
    ratios: { pageOverShape: results.stream5MBPage2MBMs / results.stream5MBShapeMs },
    chart: Object.entries(results).map(([label, value]) => ({ label, value, unit: 'ms' })),
  };
}

const benchmarks = {
  'output-shaping': outputShapingBenchmark,
  container: containerBenchmark,
  'wire-validation': wireValidationBenchmark,
  'hop-overhead': hopOverheadBenchmark,
  'proxy-forwarding': proxyForwardingBenchmark,
  'child-start': childStartBenchmark,
  recovery: recoveryBenchmark,
  memory: memoryBenchmark,
  execution: executionBenchmark,
  'live-page': livePageBenchmark,
  'live-page-scale': livePageScaleBenchmark,
  scale: scaleBenchmark,
  'large-outputs': largeOutputsBenchmark,
  'chatty-cell': chattyCellBenchmark,
  'source-edits': sourceEditsBenchmark,
  comments: commentsBenchmark,
};
const args = process.argv.slice(2);
/** `--smoke`: a tiny size of each benchmark, to keep them working (CI); the figures need the full size. */
const size = args.includes('--smoke') ? 'smoke' : 'full';
/** `--results-dir DIR`: where results go (default bench/results; RESULTS.md is written only there). */
const resultsAt = args.indexOf('--results-dir');
const outDir = resultsAt >= 0 ? args[resultsAt + 1] : resultsDir;
/** `--cycles N`: connect/disconnect cycles of the memory benchmark, made twice (default 1,000; 20 with --smoke). */
const cyclesAt = args.indexOf('--cycles');
const memoryCycles = cyclesAt >= 0 ? Number(args[cyclesAt + 1]) : undefined;
const valued = new Set(['--results-dir', '--cycles']);
const wanted = args.filter((arg, index) => !arg.startsWith('--') && !valued.has(args[index - 1]));
const context = { here, dist: join(here, '..', 'packages', 'nteract-mcp', 'dist'), size, memoryCycles };
mkdirSync(outDir, { recursive: true });
const judged = [];
for (const [name, run] of Object.entries(benchmarks)) {
  if (wanted.length > 0 && !wanted.includes(name)) continue;
  const { chart, samples, ...report } = await run(context);
  const stamped = { ...report, size, node: process.version, measuredAt: new Date().toISOString() };
  writeFileSync(join(outDir, `${name}.json`), `${JSON.stringify(stamped, null, 2)}\n`);
  writeFileSync(join(outDir, `${name}.svg`), barChart(`${name}: ${report.unit}`, chart));
  for (const curve of report.curves ?? []) writeFileSync(join(outDir, `${name}-${curve.id}.svg`), lineChart(curve));
  if (samples) {
    const { unit, sets } = samples;
    writeFileSync(
      join(outDir, `${name}-distribution.svg`),
      distributionChart(`${name}: distribution of each figure`, unit, sets),
    );
  }
  process.stdout.write(`${JSON.stringify(stamped, null, 2)}\n`);
  judged.push(stamped);
}
// Every judged figure of this run beside its target, last: what `npm run bench` ends with.
const lines = judged.flatMap((report) =>
  (report.verdicts ?? []).map(
    (v) =>
      `${v.met ? '✓' : '✗'} ${report.name.padEnd(16)} ${v.figure.padEnd(58)} ${`${formatFigure(v.value)} ${v.unit}`.padStart(12)}   target ${v.target} ${v.unit}`,
  ),
);
const missed = judged.flatMap((report) => report.verdicts ?? []).filter((v) => !v.met).length;
process.stdout.write(
  `\nTargets (${size} size${size === 'smoke' ? ': the figures need the full size' : ''}):\n${lines.join('\n')}\n${lines.length - missed} met, ${missed} missed\n`,
);
if (outDir === resultsDir) writeResultsPage(resultsDir, join(here, 'RESULTS.md'));
