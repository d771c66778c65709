import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Browser, chromium } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startUserSession, type UserSession, waitFor } from './support/index.js';

/**
 * The live page as a person sees it: headless Chromium (Debian `chromium`, installed by the
 * bootstrap; `NTERACT_CHROMIUM` names another) beside an agent on the shipped `nteract-mcp`.
 */
const chromiumPath = process.env.NTERACT_CHROMIUM ?? '/usr/bin/chromium';
/** Where the screenshots go: `docs/screenshots` with NTERACT_UPDATE_SCREENSHOTS=1 (the README shows them), else a temp dir. */
const screenshots =
  process.env.NTERACT_UPDATE_SCREENSHOTS === '1'
    ? fileURLToPath(new URL('../docs/screenshots/', import.meta.url))
    : mkdtempSync(join(tmpdir(), 'live-page-shots-'));

let browser: Browser;
beforeAll(async () => {
  browser = await chromium.launch({ executablePath: chromiumPath, args: ['--no-sandbox'] });
});
afterAll(async () => {
  await browser?.close();
});

const sessions: UserSession[] = [];
afterEach(async () => {
  for (const session of sessions.splice(0)) await session.stop();
});

describe('the live page in a real browser', () => {
  it('shows the agent building a plot live, takes a person’s edit the agent then reads, keeps outputs away from the token, and comes back after a daemon restart', {
    timeout: 240_000,
  }, async () => {
    const session = await startUserSession();
    sessions.push(session);
    const path = join(session.dirs.project, 'analysis.ipynb');
    const connected = await session.call('connect_notebook', { path });
    expect(connected.isError, connected.text).toBe(false);
    const first = await session.call('create_cell', {
      source: 'greeting = "hello from the agent"\nprint(greeting)',
      and_run: true,
    });
    expect(first.isError, first.text).toBe(false);
    const firstId = String(first.json?.cell_id);

    const shown = await session.call('show_notebook');
    const url = `${shown.texts[0]?.split('\n')[0]}&name=Ada`;
    const context = await browser.newContext({ viewport: { width: 1100, height: 900 } });
    const page = await context.newPage();
    await page.goto(url);
    // The token left the address for an HttpOnly cookie the page's scripts cannot read.
    expect(page.url()).not.toContain('token=');
    expect(await page.evaluate('document.cookie')).toBe('');
    await page.waitForSelector(`#cell-${firstId} textarea`);
    expect(await page.locator(`#cell-${firstId} .outputs`).textContent()).toContain('hello from the agent');

    // The agent plots; the page shows the figure without a reload.
    const plot = await session.call('create_cell', {
      source: 'import matplotlib.pyplot as plt\nplt.plot([1, 2, 3], [1, 4, 9])\nplt.show()',
      and_run: true,
    });
    expect(plot.isError, plot.text).toBe(false);
    await page.waitForSelector(`#cell-${String(plot.json?.cell_id)} img[alt="image/png"]`);

    // An output's script runs nowhere near the page: HTML is framed in a sandbox without scripts.
    await session.call('create_cell', {
      source:
        'from IPython.display import HTML\nHTML("<b id=x>framed</b><script>parent.document.title = document.cookie || \'pwned\'</script>")',
      and_run: true,
    });
    await page.waitForSelector('iframe.rich');
    expect(await page.locator('iframe.rich').getAttribute('sandbox')).toBe('');
    expect(await page.title()).not.toBe('pwned');

    mkdirSync(screenshots, { recursive: true });
    await page.screenshot({ path: join(screenshots, 'live-page-agent.png'), fullPage: true });

    // The person edits the first cell; the agent's next read has it.
    const editor = page.locator(`#cell-${firstId} textarea`);
    await editor.fill('greeting = "hello from Ada"\nprint(greeting)');
    await editor.press('Shift+Enter');
    await waitFor('the edit in the room', async () => {
      const cell = await session.call('get_cell', { cell_id: firstId });
      return cell.text.includes('hello from Ada') && cell.text.includes('out') ? cell : undefined;
    });
    await page.waitForFunction(
      (id) =>
        (
          globalThis as unknown as { document: { querySelector(s: string): { textContent: string | null } | null } }
        ).document
          .querySelector(`#cell-${id} .outputs`)
          ?.textContent?.includes('hello from Ada'),
      firstId,
    );
    // Who is in the room: the person by name beside the agent.
    const here = await page.locator('#peers').textContent();
    expect(here).toContain('human:Ada');
    expect(here).toMatch(/agent:[a-z0-9-]+:[0-9a-f]+/);
    await page.screenshot({ path: join(screenshots, 'live-page-human-edit.png'), fullPage: true });

    // The daemon restarts: the page reconnects by itself, same address, same notebook.
    await session.faults.killDaemon();
    const after = await session.call('create_cell', { source: 'after = "the restart"' });
    expect(after.isError, after.text).toBe(false);
    await page.waitForSelector(`#cell-${String(after.json?.cell_id)} textarea`, { timeout: 60_000 });
    await context.close();
  });
});
