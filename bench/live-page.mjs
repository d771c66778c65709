// What a person beside the agent waits for: from the moment the agent has the answer to its
// `create_cell` (through the shipped nteract-mcp) to the moment the new cell is in the live page
// of a real browser (headless Chromium). The page records when each cell appears (a
// MutationObserver, on the machine's clock); the agent side records when each answer arrived on
// the same clock. The figure: p50 over the edits (target <= 100 ms).
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { JsonlPeer } from './lib/jsonl-peer.mjs';
import { summarizeEach, until } from './lib/stats.mjs';
import { createUserHome } from './lib/user-home.mjs';
import { verdict } from './lib/verdict.mjs';

const chromiumPath = process.env.NTERACT_CHROMIUM ?? '/usr/bin/chromium';

/** Milliseconds on the wall clock, sub-millisecond, as `performance.timeOrigin + now()` in the page. */
const now = () => performance.timeOrigin + performance.now();

export async function livePageBenchmark({ dist, size }) {
  const edits = size === 'smoke' ? 5 : 100;
  const user = createUserHome(dist);
  const browser = await chromium.launch({ executablePath: chromiumPath, args: ['--no-sandbox'] });
  const samples = { answerToVisible: [] };
  try {
    const peer = new JsonlPeer(process.execPath, [join(dist, 'nteract-mcp.js')], {
      ...user.env,
      NTERACT_MCP_LOG_LEVEL: 'error',
    });
    await peer.initialize();
    await peer.call('create_notebook', {});
    const shown = await peer.call('show_notebook', {});
    const url = shown.content[0].text.split('\n')[0];
    const page = await browser.newPage();
    await page.goto(url);
    await page.waitForSelector('main button');
    await page.evaluate(() => {
      const seen = {};
      globalThis.__seen = seen;
      new MutationObserver(() => {
        for (const section of document.querySelectorAll('section.cell')) {
          if (!(section.id in seen)) seen[section.id] = performance.timeOrigin + performance.now();
        }
      }).observe(document.getElementById('content'), { childList: true, subtree: true });
    });
    for (let i = 0; i < edits + 5; i++) {
      // At the top, where the person looks: a long notebook's page draws only the cells near its
      // viewport, so a cell appended below it would never appear.
      const answer = await peer.call('create_cell', { source: `x${i} = ${i}`, index: 0 });
      const answeredAt = now();
      const cellId = JSON.parse(answer.content[0].text).cell_id;
      const visibleAt = await until(
        `cell ${cellId} in the page`,
        () => page.evaluate((id) => globalThis.__seen[`cell-${id}`], cellId),
        30_000,
        2,
      );
      // The first few warm the path (the page's first renders, the JIT).
      if (i >= 5) samples.answerToVisible.push(Math.max(0, visibleAt - answeredAt));
    }
    await peer.close();
  } finally {
    await browser.close();
    user.stop();
  }
  const stats = summarizeEach(samples);
  return {
    name: 'live-page',
    unit: "ms from the agent's create_cell answer to the cell in the live page (headless Chromium)",
    results: stats,
    ratios: {},
    targets: { answerToVisibleP50Ms: '<= 100' },
    verdicts: [verdict('create_cell answer → visible in the page, p50', stats.answerToVisible.p50, 'ms', '<= 100')],
    samples: { unit: 'ms', sets: samples },
    chart: [
      { label: 'answer → visible p50', value: stats.answerToVisible.p50, unit: 'ms' },
      { label: 'answer → visible p90', value: stats.answerToVisible.p90, unit: 'ms' },
      { label: 'answer → visible p99', value: stats.answerToVisible.p99, unit: 'ms' },
    ],
  };
}
