// The live page with a long notebook and with a large image, as a person beside the agent sees it
// in a real browser (headless Chromium), through the shipped nteract-mcp with a fresh HOME:
// - a notebook of 10,000 cells (written as an .ipynb file, then connected): first paint (from the
//   navigation's start to the first cells painted), the time per frame while scrolling by a
//   viewport at a time, and an agent's one-line `set_cell` from its answer to the change shown;
// - a notebook with a 20 MB image output (a noise PNG, ~20 MB of base64): the bytes the page
//   receives for an agent's one-line edit of another cell (every response body and the event
//   stream, from the browser's network events), and that edit from its answer to the change shown.
// Answer and page times are on one clock (the machine's), as in live-page.mjs.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { PNG } from 'pngjs';
import { editToVisible } from './lib/edit-to-visible.mjs';
import { JsonlPeer } from './lib/jsonl-peer.mjs';
import { quantile, summarizeEach, until } from './lib/stats.mjs';
import { createUserHome } from './lib/user-home.mjs';
import { verdict } from './lib/verdict.mjs';

const chromiumPath = process.env.NTERACT_CHROMIUM ?? '/usr/bin/chromium';
const chromiumArgs = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];
/** How long the page may take to show its first cells before the figure is given up (the page before virtualisation took minutes). */
const firstPaintLimitMs = 180_000;

/** An nbformat 4 notebook of `count` small cells: code with a short output every third, markdown every tenth. */
function longNotebook(count) {
  const cells = Array.from({ length: count }, (_, i) =>
    i % 10 === 9
      ? { cell_type: 'markdown', id: `md-${i}`, metadata: {}, source: `## Section ${i}\nSome words about step ${i}.` }
      : {
          cell_type: 'code',
          id: `code-${i}`,
          metadata: {},
          execution_count: i % 3 === 0 ? i : null,
          source: `value_${i} = ${i} * 2\nprint(value_${i})`,
          outputs: i % 3 === 0 ? [{ output_type: 'stream', name: 'stdout', text: `${i * 2}\n` }] : [],
        },
  );
  return notebookFile(cells);
}

/** A notebook of eight small cells and one that shows a noise PNG of `base64Bytes` of base64. */
function imageNotebook(base64Bytes) {
  const pixels = Math.ceil((base64Bytes * 3) / 4 / 4);
  const width = 2048;
  const height = Math.ceil(pixels / width);
  const png = new PNG({ width, height });
  for (let at = 0; at < png.data.length; at += 4) {
    png.data[at] = Math.random() * 256;
    png.data[at + 1] = Math.random() * 256;
    png.data[at + 2] = Math.random() * 256;
    png.data[at + 3] = 255;
  }
  const image = PNG.sync.write(png, { deflateLevel: 0 }).toString('base64');
  // The small cells first: the agent edits them where the person sees them, above the image.
  const cells = [
    ...Array.from({ length: 8 }, (_, i) => ({
      cell_type: 'code',
      id: `small-${i}`,
      metadata: {},
      execution_count: null,
      source: `small_${i} = ${i}`,
      outputs: [],
    })),
    {
      cell_type: 'code',
      id: 'plot',
      metadata: {},
      execution_count: 2,
      source: 'show_big_image()',
      outputs: [
        {
          output_type: 'display_data',
          data: { 'image/png': image, 'text/plain': '<Figure>' },
          metadata: {},
        },
      ],
    },
  ];
  return { text: notebookFile(cells), imageBytes: image.length };
}

function notebookFile(cells) {
  return JSON.stringify({
    nbformat: 4,
    nbformat_minor: 5,
    metadata: { kernelspec: { name: 'python3', display_name: 'Python 3', language: 'python' } },
    cells,
  });
}

/** Connects the agent to the notebook at `path` and opens its live page; the agent and the page. */
async function openNotebook(browser, user, dist, path, firstPaint) {
  const peer = new JsonlPeer(process.execPath, [join(dist, 'nteract-mcp.js')], {
    ...user.env,
    NTERACT_MCP_LOG_LEVEL: 'error',
  });
  await peer.initialize();
  await peer.call('connect_notebook', { path });
  const shown = await peer.call('show_notebook', {});
  const url = shown.content[0].text.split('\n')[0];
  const context = await browser.newContext({ viewport: { width: 1100, height: 900 } });
  const page = await context.newPage();
  // Before the page's own script: the time its first cell is in the document and painted (the
  // frame after it appears), from the navigation's start; and, later, when a wanted text shows.
  await page.addInitScript(() => {
    globalThis.__want = undefined;
    globalThis.__shownAt = undefined;
    const observer = new MutationObserver(() => {
      if (globalThis.__firstCell === undefined && document.querySelector('section.cell')) {
        globalThis.__firstCell = -1;
        requestAnimationFrame(() => {
          globalThis.__firstCell = performance.now();
        });
      }
      const want = globalThis.__want;
      if (want && globalThis.__shownAt === undefined) {
        const cell = document.getElementById(`cell-${want.id}`);
        if (cell?.textContent.includes(want.text)) globalThis.__shownAt = performance.timeOrigin + performance.now();
      }
    });
    addEventListener('DOMContentLoaded', () =>
      observer.observe(document.body, { childList: true, subtree: true, characterData: true }),
    );
  });
  await page.goto(url);
  const painted = await until(
    'the first cells painted',
    async () => {
      const at = await page.evaluate(() => globalThis.__firstCell);
      return typeof at === 'number' && at > 0 ? at : undefined;
    },
    firstPaint ? firstPaintLimitMs : 60_000,
    20,
  ).catch(() => Number.NaN);
  return { peer, page, context, firstPaintMs: painted };
}

/** The id of a cell the page shows in its viewport now. */
function visibleCellId(page) {
  return page.evaluate(() => {
    for (const cell of document.querySelectorAll('section.cell')) {
      const box = cell.getBoundingClientRect();
      if (box.top >= 60 && box.bottom <= innerHeight) return cell.dataset.cellId;
    }
    return undefined;
  });
}

/**
 * Times per frame (ms) while scrolling down by a viewport in every frame, `frames` times: the time
 * between one frame's start and the next (each frame draws what the last scroll brought into view).
 */
function scrollFrames(page, frames) {
  return page.evaluate(
    (count) =>
      new Promise((done) => {
        const times = [];
        let last;
        const step = (at) => {
          if (last !== undefined) times.push(at - last);
          last = at;
          if (times.length === count) {
            done(times);
            return;
          }
          window.scrollBy(0, innerHeight);
          requestAnimationFrame(step);
        };
        requestAnimationFrame(step);
      }),
    frames,
  );
}

export async function livePageScaleBenchmark({ dist, size }) {
  const smoke = size === 'smoke';
  const cellCount = smoke ? 200 : 10_000;
  const imageBytes = smoke ? 1_000_000 : 20_000_000;
  const edits = smoke ? 3 : 20;
  const frames = smoke ? 10 : 60;
  const user = createUserHome(dist);
  const browser = await chromium.launch({ executablePath: chromiumPath, args: chromiumArgs });
  const samples = { longEditToVisible: [], scrollFrame: [], imageEditToVisible: [] };
  const results = {};
  try {
    // The long notebook.
    const longPath = join(user.dirs.project, 'long.ipynb');
    writeFileSync(longPath, longNotebook(cellCount));
    const long = await openNotebook(browser, user, dist, longPath, true);
    results.cells = cellCount;
    results.firstPaintMs = long.firstPaintMs;
    if (Number.isFinite(long.firstPaintMs)) {
      results.cellsInDom = await long.page.evaluate(() => document.querySelectorAll('section.cell').length);
      results.elementsInDom = await long.page.evaluate(() => document.getElementsByTagName('*').length);
      for (let i = 0; i < edits + 2; i++) {
        const cellId = await visibleCellId(long.page);
        const ms = await editToVisible(long.peer, long.page, cellId, `long_edit_${i} = 1`);
        if (i >= 2) samples.longEditToVisible.push(ms);
      }
      samples.scrollFrame.push(...(await scrollFrames(long.page, frames)));
      const cellId = await visibleCellId(long.page);
      samples.longEditToVisible.push(await editToVisible(long.peer, long.page, cellId, 'long_edit_scrolled = 1'));
    }
    await long.context.close();
    await long.peer.close();

    // The large image.
    const imagePath = join(user.dirs.project, 'image.ipynb');
    const notebook = imageNotebook(imageBytes);
    writeFileSync(imagePath, notebook.text);
    results.imageBase64Bytes = notebook.imageBytes;
    const image = await openNotebook(browser, user, dist, imagePath, false);
    const session = await image.context.newCDPSession(image.page);
    let received = 0;
    session.on('Network.dataReceived', (event) => {
      received += event.encodedDataLength > 0 ? event.encodedDataLength : event.dataLength;
    });
    await session.send('Network.enable');
    await until(
      'the image shown',
      () => image.page.evaluate(() => document.querySelector('img')?.complete || undefined),
      60_000,
      20,
    );
    const perEdit = [];
    for (let i = 0; i < edits + 2; i++) {
      const cellId = `small-${i % 8}`;
      // Bytes still arriving from the last edit (a late read) count for it, not the next one.
      await new Promise((done) => setTimeout(done, 300));
      const before = received;
      const ms = await editToVisible(image.peer, image.page, cellId, `image_edit_${i} = 1`);
      await new Promise((done) => setTimeout(done, 300));
      if (i >= 2) {
        samples.imageEditToVisible.push(ms);
        perEdit.push(received - before);
      }
    }
    results.bytesPerEdit = perEdit;
    await image.context.close();
    await image.peer.close();
  } finally {
    await browser.close();
    user.stop();
  }
  const stats = summarizeEach(samples);
  const scrollFrameP95 = quantile(samples.scrollFrame, 0.95);
  const imageMb = Math.round(results.imageBase64Bytes / 1e6);
  const bytesPerEditP50 = [...results.bytesPerEdit].sort((a, b) => a - b)[Math.floor(results.bytesPerEdit.length / 2)];
  const figures = {
    cells: results.cells,
    firstPaintMs: results.firstPaintMs,
    cellsInDom: results.cellsInDom ?? Number.NaN,
    elementsInDom: results.elementsInDom ?? Number.NaN,
    imageBase64Bytes: results.imageBase64Bytes,
    bytesPerEditP50,
    bytesPerEditMax: Math.max(...results.bytesPerEdit),
    scrollFrameP95,
    ...stats,
  };
  return {
    name: 'live-page-scale',
    unit: 'ms in headless Chromium (first paint, per scroll frame, agent answer → visible); bytes the page receives per edit',
    results: figures,
    ratios: {},
    targets: {
      firstPaintMs: '<= 1000',
      scrollFrameP95Ms: '<= 50',
      editToVisibleP50Ms: '<= 100',
      bytesPerEdit: '<= 10240',
    },
    verdicts: [
      verdict(`first paint, ${cellCount} cells`, figures.firstPaintMs, 'ms', '<= 1000'),
      verdict(`scroll frame p50, ${cellCount} cells`, stats.scrollFrame?.p50, 'ms', '<= 50'),
      verdict(`scroll frame p95, ${cellCount} cells`, scrollFrameP95, 'ms', '<= 50'),
      verdict(`set_cell answer → visible p50, ${cellCount} cells`, stats.longEditToVisible?.p50, 'ms', '<= 100'),
      verdict(`set_cell answer → visible p50, ${imageMb} MB image`, stats.imageEditToVisible?.p50, 'ms', '<= 100'),
      verdict(`bytes received per one-line edit, ${imageMb} MB image`, bytesPerEditP50, 'B', '<= 10240'),
    ],
    samples: { unit: 'ms', sets: samples },
    chart: [
      { label: 'first paint', value: figures.firstPaintMs, unit: 'ms' },
      { label: 'scroll frame p95', value: scrollFrameP95, unit: 'ms' },
      { label: 'edit → visible (long) p50', value: stats.longEditToVisible?.p50 ?? Number.NaN, unit: 'ms' },
      { label: 'edit → visible (image) p50', value: stats.imageEditToVisible?.p50 ?? Number.NaN, unit: 'ms' },
      { label: 'KB per edit (image)', value: bytesPerEditP50 / 1024, unit: 'KB' },
    ],
  };
}
