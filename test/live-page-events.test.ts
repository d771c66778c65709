import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterEach, describe, expect, it } from 'vitest';
import { startUserSession, type UserSession, waitFor } from './support/index.js';
import { useChromium } from './support/use-chromium.js';

/**
 * The live page follows the room by its events, in place (headless Chromium beside an agent on the
 * shipped `nteract-mcp`): no whole-notebook read after its first, a read again only to close a
 * gap; large outputs loaded once by URL; a long notebook drawn near the viewport only.
 */

const browser = useChromium();

const sessions: UserSession[] = [];
afterEach(async () => {
  for (const session of sessions.splice(0)) await session.stop();
});

/** What the page asked of the page server, by path: the whole-notebook reads, and every request. */
interface Requests {
  readonly snapshots: () => number;
  readonly paths: string[];
}

/**
 * A session with a notebook open (a new one, or the file `write` puts in the session's project
 * directory), its live page in the browser, and the page's requests counted.
 */
async function openPage(
  notebook: 'untitled' | ((projectDir: string) => string),
): Promise<{ session: UserSession; page: Page; requests: Requests; close: () => Promise<void> }> {
  const session = await startUserSession();
  sessions.push(session);
  const opened =
    notebook === 'untitled'
      ? await session.call('create_notebook')
      : await session.call('connect_notebook', { path: notebook(session.dirs.project) });
  expect(opened.isError, opened.text).toBe(false);
  const shown = await session.call('show_notebook');
  const url = new URL(shown.texts[0]?.split('\n')[0] ?? '');
  url.searchParams.set('name', 'Ada');
  const snapshotPath = url.pathname.replace(/^\/notebooks\//, '/api/notebooks/');
  const context = await browser().newContext({ viewport: { width: 1100, height: 900 } });
  const page = await context.newPage();
  // The page's event streams (fetched), so that a test can cut one and hold the next back (the
  // page opens a stream that failed again).
  await page.addInitScript(`{
    const streams = [];
    globalThis.__streams = streams;
    let held;
    globalThis.__holdStreams = () => {
      let release;
      held = new Promise((resolve) => { release = resolve; });
      globalThis.__releaseStreams = () => { held = undefined; release(); };
    };
    const original = globalThis.fetch;
    globalThis.fetch = async (input, init = {}) => {
      if (!String(input).endsWith('/events')) return original(input, init);
      if (held) await held;
      const controller = new AbortController();
      streams.push(controller);
      return original(input, { ...init, signal: controller.signal });
    };
  }`);
  const paths: string[] = [];
  page.on('request', (request) => paths.push(new URL(request.url()).pathname));
  await page.goto(url.toString());
  return {
    session,
    page,
    requests: { paths, snapshots: () => paths.filter((path) => path === snapshotPath).length },
    close: () => context.close(),
  };
}

async function agentCell(session: UserSession, source: string, run = false): Promise<string> {
  const made = await session.call('create_cell', { source, ...(run ? { and_run: true } : {}) });
  expect(made.isError, made.text).toBe(false);
  return String(made.json?.cell_id);
}

async function setCell(session: UserSession, cellId: string, source: string): Promise<void> {
  const set = await session.call('set_cell', { cell_id: cellId, source });
  expect(set.isError, set.text).toBe(false);
}

/** A cell's text as the page shows it (its editor, or its static source before the editor is made). */
function cellText(page: Page, cellId: string): Promise<string | null> {
  return page.locator(`#cell-${cellId}`).textContent();
}

/** Python that displays a PNG of random pixels (about 40 KB of base64), without any plotting library. */
const noisePng = [
  'import base64, os, struct, zlib',
  'from IPython.display import display',
  'w, h = 120, 80',
  "raw = b''.join(b'\\x00' + os.urandom(w * 3) for _ in range(h))",
  "chunk = lambda kind, data: struct.pack('>I', len(data)) + kind + data + struct.pack('>I', zlib.crc32(kind + data) & 0xffffffff)",
  "png = b'\\x89PNG\\r\\n\\x1a\\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', w, h, 8, 2, 0, 0, 0)) + chunk(b'IDAT', zlib.compress(raw)) + chunk(b'IEND', b'')",
  "display({'image/png': base64.b64encode(png).decode(), 'text/plain': 'noise'}, raw=True)",
].join('\n');

describe('the live page follows the room by its events', () => {
  it('applies an agent’s edit, a running cell’s streamed output and the person’s own edit in place, with no whole-notebook read; closes a gap (a lost answer, a cut stream) with one read each; loads large outputs once by URL', {
    timeout: 240_000,
  }, async () => {
    const { session, page, requests, close } = await openPage('untitled');
    const first = await agentCell(session, 'first = 1');
    await expect.poll(() => cellText(page, first)).toContain('first = 1');
    await page.waitForSelector(`#cell-${first} .cm-content`);
    const reads = requests.snapshots();
    expect(reads).toBeGreaterThan(0);

    // An agent's edit, and a cell's output as it streams (printed in three parts, a second apart).
    await setCell(session, first, 'first = "edited by the agent"');
    await expect.poll(() => cellText(page, first)).toContain('first = "edited by the agent"');
    // (The person runs it: the agent's run would answer only once it ended.)
    const streaming = await agentCell(
      session,
      'import time\nfor step in range(3):\n    print(f"step {step}", flush=True)\n    time.sleep(1)',
    );
    await page.locator(`#cell-${streaming} [data-action="run"]`).click();
    await expect
      .poll(() => page.locator(`#cell-${streaming} .outputs`).textContent(), { timeout: 60_000, interval: 50 })
      .toContain('step 0');
    expect(await page.locator(`#cell-${streaming} .outputs`).textContent()).not.toContain('step 2');
    await expect
      .poll(() => page.locator(`#cell-${streaming} .outputs`).textContent(), { timeout: 30_000 })
      .toBe('step 0\nstep 1\nstep 2\n');
    // The cell sleeps a second after its last print: its count shows once it ended.
    await expect
      .poll(() => page.locator(`#cell-${streaming} .prompt`).textContent(), { timeout: 30_000 })
      .toMatch(/^\[\d+\]$/);

    // The person's own edit: the room does not send it back; the answer is applied.
    await page.locator(`#cell-${first} .cm-content`).click();
    await page.keyboard.press('ControlOrMeta+End');
    await page.keyboard.type('  # Ada');
    await page.locator(`#cell-${first} .cm-content`).blur();
    await waitFor('her edit in the room', async () => {
      const cell = await session.call('get_cell', { cell_id: first });
      return cell.json?.source === 'first = "edited by the agent"  # Ada' ? cell : undefined;
    });
    await expect.poll(() => page.locator(`#cell-${first} .edited-by`).textContent()).toBe('edited by human:Ada');
    const after = await agentCell(session, 'after = 2');
    await expect.poll(() => cellText(page, after)).toContain('after = 2');
    expect(requests.snapshots()).toBe(reads);

    // A gap: the answer to the person's edit is lost on its way (the edit is made in the room, which
    // sends it to the other peers only). The agent's next edit comes a version ahead of the page:
    // the page reads the notebook once and shows both.
    await page.route('**/requests', async (route) => {
      await route.fetch();
      await route.abort();
    });
    await page.locator(`#cell-${after} [data-action="add-below"]`).click();
    const added = await waitFor('the added cell in the room', async () => {
      const order = ((await session.call('get_all_cells', { format: 'json', include_outputs: false })).json?.cells ??
        []) as { cell_id: string }[];
      return order.length === 4 ? order[3]?.cell_id : undefined;
    });
    await page.unroute('**/requests');
    await setCell(session, first, 'first = "after the gap"');
    await expect.poll(() => cellText(page, first)).toContain('first = "after the gap"');
    await page.waitForSelector(`#cell-${added}`);
    expect(requests.snapshots()).toBe(reads + 1);

    // The stream is cut: the agent's edit meanwhile never reaches the page as an event; once the
    // page opens its stream again, one read shows it.
    await page.evaluate('globalThis.__holdStreams(); globalThis.__streams.at(-1).abort()');
    await expect.poll(() => page.locator('#status .connection').textContent()).toBe('reconnecting…');
    await setCell(session, after, 'after = "while the stream was down"');
    await page.evaluate('globalThis.__releaseStreams()');
    await expect.poll(() => cellText(page, after), { timeout: 30_000 }).toContain('while the stream was down');
    await expect.poll(() => page.locator('#status .connection').textContent()).toBe('live');
    expect(requests.snapshots()).toBe(reads + 2);

    // A large image: loaded by URL, once; an edit elsewhere does not load it again.
    const plot = await agentCell(session, noisePng, true);
    const image = page.locator(`#cell-${plot} img[alt="image/png"]`);
    await image.waitFor({ timeout: 60_000 });
    expect(await image.getAttribute('src')).toMatch(/^\/notebooks\/[0-9a-f-]+\/outputs\/[^/]+\/0\/image%2Fpng\?v=/);
    await expect
      .poll(() => image.evaluate((node) => (node as unknown as { naturalWidth: number }).naturalWidth))
      .toBe(120);
    const imageLoads = () => requests.paths.filter((path) => path.endsWith('/0/image%2Fpng')).length;
    expect(imageLoads()).toBe(1);
    await setCell(session, first, 'first = "after the image"');
    await expect.poll(() => cellText(page, first)).toContain('first = "after the image"');
    await setCell(session, plot, `${noisePng}\n# the same image, its source edited`);
    await expect.poll(() => cellText(page, plot)).toContain('its source edited');
    expect(imageLoads()).toBe(1);
    expect(requests.snapshots()).toBe(reads + 2);
    // A large markdown result is read by URL too, and drawn.
    const words = await agentCell(
      session,
      'from IPython.display import Markdown\nMarkdown("**big** " + "word " * 2000)',
      true,
    );
    await expect.poll(() => page.locator(`#cell-${words} .outputs strong`).textContent()).toBe('big');
    expect(requests.paths.some((path) => path.endsWith('/0/text%2Fmarkdown'))).toBe(true);
    expect(requests.snapshots()).toBe(reads + 2);
    await close();
  });

  it('keeps only the cells near the viewport in a long notebook, shows an agent’s edit where the person scrolled to, and keeps the cell being edited', {
    timeout: 180_000,
  }, async () => {
    const count = 3000;
    const write = (projectDir: string) => {
      const path = join(projectDir, 'long.ipynb');
      writeFileSync(path, longNotebook(count));
      return path;
    };
    const { session: agent, page, close } = await openPage(write);
    await page.waitForSelector('#cell-c0 .cm-content');
    const drawn = () => page.locator('section.cell').count();
    expect(await drawn()).toBeLessThan(60);
    expect(Number(await page.evaluate('document.documentElement.scrollHeight'))).toBeGreaterThan(count * 50);

    // The person edits the first cell, then scrolls far down: that cell stays, her text with it.
    await page.locator('#cell-c0 .cm-content').click();
    await page.keyboard.press('ControlOrMeta+End');
    await page.keyboard.type(' + 1');
    await page.evaluate('scrollTo(0, document.documentElement.scrollHeight / 2)');
    await expect.poll(() => page.locator('section.cell').first().textContent()).toContain('cell_0 = 0 + 1');
    await page.waitForSelector('#cell-c1500');
    expect(await drawn()).toBeLessThan(60);

    // An agent's edit of a cell in view shows there.
    const inView = String(
      await page.evaluate(`[...document.querySelectorAll('section.cell')].find((cell) => {
        const box = cell.getBoundingClientRect();
        return box.top > 80 && box.bottom < innerHeight;
      })?.dataset.cellId`),
    );
    await setCell(agent, inView, 'changed = "by the agent"');
    await expect.poll(() => cellText(page, inView)).toContain('changed = "by the agent"');

    // A cell above the viewport grows by 40 lines: what the person looks at stays where it was.
    const topOf = async (cellId: string) =>
      Math.round(Number(await page.evaluate(`document.getElementById('cell-${cellId}').getBoundingClientRect().top`)));
    const above = String(
      await page.evaluate(`[...document.querySelectorAll('section.cell')].findLast((cell) =>
        cell.getBoundingClientRect().bottom < 0 && cell.id !== 'cell-c0')?.dataset.cellId`),
    );
    const before = await topOf(inView);
    const lines = Array.from({ length: 40 }, (_, i) => `line_${i} = ${i}`).join('\n');
    await setCell(agent, above, `${lines}\ngrown = True`);
    await expect.poll(() => cellText(page, above)).toContain('grown = True');
    // The page makes the editors of drawn cells in idle time (a few pixels taller than the plain
    // text) and answers each height change in the next frame: wait for it to settle there.
    await expect.poll(async () => Math.abs((await topOf(inView)) - before)).toBeLessThanOrEqual(1);

    // Done editing: her text reaches the room, and the far cell leaves the page.
    await page.locator('#cell-c0 .cm-content').blur();
    await waitFor('her edit in the room', async () => {
      const cell = await agent.call('get_cell', { cell_id: 'c0' });
      return cell.json?.source === 'cell_0 = 0 + 1' ? cell : undefined;
    });
    await expect.poll(() => page.locator('#cell-c0').count()).toBe(0);
    await page.evaluate('scrollTo(0, document.documentElement.scrollHeight)');
    await page.waitForSelector(`#cell-c${count - 1}`);
    expect(await drawn()).toBeLessThan(60);
    await close();
  });
});

/** An .ipynb of `count` one-line code cells, ids `c0`, `c1`, … */
function longNotebook(count: number): string {
  return JSON.stringify({
    nbformat: 4,
    nbformat_minor: 5,
    metadata: {},
    cells: Array.from({ length: count }, (_, i) => ({
      cell_type: 'code',
      id: `c${i}`,
      metadata: {},
      execution_count: null,
      source: `cell_${i} = ${i}`,
      outputs: [],
    })),
  });
}
