// What a person beside the agent waits for: from the moment the agent has the answer to its edit
// (through the shipped nteract-mcp) to the moment the edit shows in the live page of a real
// browser (headless Chromium). The page records when each cell appears and when a wanted text
// shows in a cell (a MutationObserver, on the machine's clock); the agent side records when each
// answer arrived on the same clock. Two notebooks, one after the other, in one HOME and browser:
// - new and empty (create_notebook): `create_cell` at the top, the notebook growing by a cell a call;
// - ten cells with a plot (written as an .ipynb file, then connected, as a notebook an agent has
//   worked in): nine one-line code cells with a one-line output each and, fifth, a cell showing a
//   640×480 line-plot PNG; `create_cell` at the top (each new cell deleted again once shown, so the
//   notebook stays at ten cells) and a one-line `set_cell` of a cell above the plot.
// The figures: p50 over the edits of each (target <= 100 ms).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { PNG } from 'pngjs';
import { editToVisible, now } from './lib/edit-to-visible.mjs';
import { JsonlPeer } from './lib/jsonl-peer.mjs';
import { summarizeEach, until } from './lib/stats.mjs';
import { createUserHome } from './lib/user-home.mjs';
import { verdict } from './lib/verdict.mjs';

const chromiumPath = process.env.NTERACT_CHROMIUM ?? '/usr/bin/chromium';

/** The edits of each kind that warm the path first (the page's first renders, the JIT): not counted. */
const warmUp = 5;

/**
 * A 640×480 PNG (matplotlib's default figure) of a line plot, as base64: white, a framed axes box
 * with a light grid, and two curves two pixels wide; what a plot's output is to the page.
 */
function linePlotPng() {
  const width = 640;
  const height = 480;
  const png = new PNG({ width, height });
  png.data.fill(255);
  const paint = (x, y, [r, g, b]) => {
    if (x < 0 || y < 0 || x >= width || y >= height) return;
    const at = (Math.round(y) * width + Math.round(x)) * 4;
    png.data[at] = r;
    png.data[at + 1] = g;
    png.data[at + 2] = b;
  };
  const box = { left: 80, right: 576, top: 58, bottom: 427 };
  for (let x = box.left; x <= box.right; x += 62)
    for (let y = box.top; y <= box.bottom; y++) paint(x, y, [230, 230, 230]);
  for (let y = box.top; y <= box.bottom; y += 46)
    for (let x = box.left; x <= box.right; x++) paint(x, y, [230, 230, 230]);
  for (let x = box.left; x <= box.right; x++) {
    paint(x, box.top, [0, 0, 0]);
    paint(x, box.bottom, [0, 0, 0]);
  }
  for (let y = box.top; y <= box.bottom; y++) {
    paint(box.left, y, [0, 0, 0]);
    paint(box.right, y, [0, 0, 0]);
  }
  const middle = (box.top + box.bottom) / 2;
  const amplitude = (box.bottom - box.top) * 0.4;
  for (let x = box.left + 1; x < box.right; x += 0.25) {
    const t = ((x - box.left) / (box.right - box.left)) * 4 * Math.PI;
    for (const [y, colour] of [
      [middle - amplitude * Math.sin(t), [31, 119, 180]],
      [middle - amplitude * Math.cos(t) * Math.exp(-t / 8), [255, 127, 14]],
    ]) {
      paint(x, y, colour);
      paint(x, y + 1, colour);
    }
  }
  return PNG.sync.write(png).toString('base64');
}

/** An nbformat 4 notebook of ten cells, run: nine one-line ones with a one-line output each, the fifth a plot. */
function plotNotebook() {
  const oneLine = (i) => ({
    cell_type: 'code',
    id: `step-${i}`,
    metadata: {},
    execution_count: i + 1,
    source: `step_${i} = ${i} * 2; print(step_${i})`,
    outputs: [{ output_type: 'stream', name: 'stdout', text: `${i * 2}\n` }],
  });
  const plot = {
    cell_type: 'code',
    id: 'plot',
    metadata: {},
    execution_count: 5,
    source: 'plt.plot(x, np.sin(x)); plt.plot(x, np.cos(x) * np.exp(-x / 8)); plt.show()',
    outputs: [
      {
        output_type: 'display_data',
        data: { 'image/png': linePlotPng(), 'text/plain': '<Figure size 640x480 with 1 Axes>' },
        metadata: {},
      },
    ],
  };
  const cells = Array.from({ length: 10 }, (_, i) => (i === 4 ? plot : oneLine(i)));
  return JSON.stringify({
    nbformat: 4,
    nbformat_minor: 5,
    metadata: { kernelspec: { name: 'python3', display_name: 'Python 3', language: 'python' } },
    cells,
  });
}

/**
 * Opens the active notebook's live page and starts watching it: from then on the page keeps, on
 * the machine's clock, when each cell first appeared (`__seen`), when each one left (`__gone`), and
 * when the text an edit waits for (`__want`) first showed in its cell (`__shownAt`).
 */
async function openPage(browser, peer) {
  const shown = await peer.call('show_notebook', {});
  const url = shown.content[0].text.split('\n')[0];
  const page = await browser.newPage();
  await page.goto(url);
  await page.waitForSelector('main button');
  await page.evaluate(() => {
    const seen = {};
    const gone = {};
    globalThis.__seen = seen;
    globalThis.__gone = gone;
    globalThis.__want = undefined;
    globalThis.__shownAt = undefined;
    for (const section of document.querySelectorAll('section.cell')) seen[section.id] = 0;
    new MutationObserver(() => {
      const at = performance.timeOrigin + performance.now();
      const present = new Set();
      for (const section of document.querySelectorAll('section.cell')) {
        present.add(section.id);
        if (!(section.id in seen)) seen[section.id] = at;
      }
      for (const id of Object.keys(seen)) if (!present.has(id) && !(id in gone)) gone[id] = at;
      const want = globalThis.__want;
      if (want && globalThis.__shownAt === undefined) {
        if (document.getElementById(`cell-${want.id}`)?.textContent.includes(want.text)) globalThis.__shownAt = at;
      }
    }).observe(document.getElementById('content'), { childList: true, subtree: true, characterData: true });
  });
  return page;
}

/** The agent's `create_cell` at the top (where the person looks): ms from its answer to the cell in the page, and its id. */
async function createToVisible(peer, page, source) {
  // At the top: a long notebook's page draws only the cells near its viewport, so a cell appended
  // below it would never appear.
  const answer = await peer.call('create_cell', { source, index: 0 });
  const answeredAt = now();
  const cellId = JSON.parse(answer.content[0].text).cell_id;
  const visibleAt = await until(
    `cell ${cellId} in the page`,
    () => page.evaluate((id) => globalThis.__seen[`cell-${id}`], cellId),
    30_000,
    2,
  );
  return { ms: Math.max(0, visibleAt - answeredAt), cellId };
}

export async function livePageBenchmark({ dist, size }) {
  const edits = size === 'smoke' ? 5 : 100;
  const user = createUserHome(dist);
  const browser = await chromium.launch({ executablePath: chromiumPath, args: ['--no-sandbox'] });
  const samples = { answerToVisible: [], plotCreateToVisible: [], plotEditToVisible: [] };
  try {
    const peer = new JsonlPeer(process.execPath, [join(dist, 'nteract-mcp.js')], {
      ...user.env,
      NTERACT_MCP_LOG_LEVEL: 'error',
    });
    await peer.initialize();

    // New and empty, growing by a cell a call.
    await peer.call('create_notebook', {});
    const empty = await openPage(browser, peer);
    for (let i = 0; i < edits + warmUp; i++) {
      const { ms } = await createToVisible(peer, empty, `x${i} = ${i}`);
      if (i >= warmUp) samples.answerToVisible.push(ms);
    }
    await empty.close();

    // Ten cells with a plot, shown (the image loaded) before the first edit.
    const path = join(user.dirs.project, 'plot.ipynb');
    writeFileSync(path, plotNotebook());
    await peer.call('connect_notebook', { path });
    const plotted = await openPage(browser, peer);
    await until(
      'the plot shown',
      () => plotted.evaluate(() => document.querySelector('section.cell img')?.complete || undefined),
      60_000,
      20,
    );
    for (let i = 0; i < edits + warmUp; i++) {
      const { ms, cellId } = await createToVisible(peer, plotted, `new_${i} = ${i}`);
      if (i >= warmUp) samples.plotCreateToVisible.push(ms);
      // Back to ten cells before the next edit: deleted, and gone from the page.
      await peer.call('delete_cell', { cell_id: cellId });
      await until(
        `cell ${cellId} gone from the page`,
        () => plotted.evaluate((id) => globalThis.__gone[`cell-${id}`], cellId),
        30_000,
        2,
      );
    }
    for (let i = 0; i < edits + warmUp; i++) {
      // The four one-line cells above the plot, in view, in turn.
      const ms = await editToVisible(peer, plotted, `step-${i % 4}`, `step_${i % 4} = ${i}; print(step_${i % 4})`);
      if (i >= warmUp) samples.plotEditToVisible.push(ms);
    }
    await plotted.close();
    await peer.close();
  } finally {
    await browser.close();
    user.stop();
  }
  const stats = summarizeEach(samples);
  return {
    name: 'live-page',
    unit: "ms from the agent's answer to its edit shown in the live page (headless Chromium)",
    results: stats,
    ratios: {},
    targets: { answerToVisibleP50Ms: '<= 100', plotCreateToVisibleP50Ms: '<= 100', plotEditToVisibleP50Ms: '<= 100' },
    verdicts: [
      verdict('create_cell answer → visible in the page, p50', stats.answerToVisible.p50, 'ms', '<= 100'),
      verdict('create_cell answer → visible, 10 cells with a plot, p50', stats.plotCreateToVisible.p50, 'ms', '<= 100'),
      verdict('set_cell answer → visible, 10 cells with a plot, p50', stats.plotEditToVisible.p50, 'ms', '<= 100'),
    ],
    samples: { unit: 'ms', sets: samples },
    chart: [
      { label: 'create → visible (empty) p50', value: stats.answerToVisible.p50, unit: 'ms' },
      { label: 'create → visible (empty) p90', value: stats.answerToVisible.p90, unit: 'ms' },
      { label: 'create → visible (plot) p50', value: stats.plotCreateToVisible.p50, unit: 'ms' },
      { label: 'create → visible (plot) p90', value: stats.plotCreateToVisible.p90, unit: 'ms' },
      { label: 'set_cell → visible (plot) p50', value: stats.plotEditToVisible.p50, unit: 'ms' },
      { label: 'set_cell → visible (plot) p90', value: stats.plotEditToVisible.p90, unit: 'ms' },
    ],
  };
}
