import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { deflateSync } from 'node:zlib';
import type { BrowserContext, Page } from 'playwright-core';
import { afterEach, describe, expect, it } from 'vitest';
import { startUserSession, type UserSession, waitFor } from './support/index.js';
import { useChromium } from './support/use-chromium.js';

/**
 * The live page as a Jupyter user expects it (headless Chromium beside an agent on the shipped
 * `nteract-mcp`): the kernel's controls, `input()` asked in the page, `Out[n]`, Shift+Enter moving
 * on, a delete that asks, links in terminal output, retina images at their size, long outputs in
 * a scroll box, and a name the daemon refuses said as such.
 */

const browser = useChromium();

/** Where the screenshots go: `docs/screenshots` with NTERACT_UPDATE_SCREENSHOTS=1 (the README shows them), else a temp dir. */
const screenshots =
  process.env.NTERACT_UPDATE_SCREENSHOTS === '1'
    ? fileURLToPath(new URL('../docs/screenshots/', import.meta.url))
    : mkdtempSync(join(tmpdir(), 'jupyter-user-shots-'));

/** A `width`×`height` PNG of a colour gradient, base64 (an image as a person would paste it). */
function gradientPng(width: number, height: number): string {
  const crcTable = Array.from({ length: 256 }, (_, n) => {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    return c >>> 0;
  });
  const crc = (bytes: Buffer) => {
    let c = 0xffffffff;
    for (const byte of bytes) c = (crcTable[(c ^ byte) & 0xff] as number) ^ (c >>> 8);
    return (c ^ 0xffffffff) >>> 0;
  };
  const chunk = (kind: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(kind, 'latin1'), data]);
    const length = Buffer.alloc(4);
    length.writeUInt32BE(data.length);
    const sum = Buffer.alloc(4);
    sum.writeUInt32BE(crc(body));
    return Buffer.concat([length, body, sum]);
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([8, 2, 0, 0, 0], 8);
  const rows = Buffer.alloc((width * 3 + 1) * height);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      rows.set(
        [40 + Math.round((180 * x) / width), 90 + Math.round((120 * y) / height), 200],
        y * (width * 3 + 1) + 1 + x * 3,
      );
    }
  }
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(rows)),
    chunk('IEND', Buffer.alloc(0)),
  ]).toString('base64');
}

const sessions: UserSession[] = [];
const contexts: BrowserContext[] = [];
afterEach(async () => {
  for (const context of contexts.splice(0)) await context.close();
  for (const session of sessions.splice(0)) await session.stop();
});

/** A session on the notebook file `file` of its project, and its page opened for `name`. */
async function openPage(file: string, name = 'Ada'): Promise<{ session: UserSession; page: Page }> {
  const session = await startUserSession();
  sessions.push(session);
  const opened = await session.call('connect_notebook', { path: join(session.dirs.project, file) });
  expect(opened.isError, opened.text).toBe(false);
  return { session, page: await pageFor(session, name) };
}

async function pageFor(
  session: UserSession,
  name: string,
  prepare?: (context: BrowserContext) => Promise<unknown>,
): Promise<Page> {
  const shown = await session.call('show_notebook');
  expect(shown.isError, shown.text).toBe(false);
  const url = new URL(shown.texts[0]?.split('\n')[0] ?? '');
  url.searchParams.set('name', name);
  const context = await browser().newContext({ viewport: { width: 1100, height: 900 } });
  contexts.push(context);
  await prepare?.(context);
  const page = await context.newPage();
  await page.goto(url.toString());
  return page;
}

async function agentCell(session: UserSession, source: string, run = false): Promise<string> {
  const made = await session.call('create_cell', { source, ...(run ? { and_run: true } : {}) });
  expect(made.isError, made.text).toBe(false);
  return String(made.json?.cell_id);
}

async function agentOutputs(session: UserSession, cellId: string): Promise<string> {
  const cell = await session.call('get_cell', { cell_id: cellId });
  expect(cell.isError, cell.text).toBe(false);
  return cell.text;
}

describe('the live page for a Jupyter user', () => {
  it('runs all from the kernel bar, asks the code’s input() in the page, labels results Out[n], and restarts, clears and saves with a confirming click', {
    timeout: 240_000,
  }, async () => {
    const { session, page } = await openPage('controls.ipynb');
    const first = await agentCell(session, 'x = 41');
    const second = await agentCell(session, 'x += 1\nx');
    const asking = await agentCell(session, "name = input('Your name? ')\nprint('hello', name)");
    await page.waitForSelector(`#cell-${asking} .cm-content, #cell-${asking} .source-static`);

    await page.locator('.kernel-control.run-all').click();
    // The code asks: the page asks the person, under the cell.
    const field = page.locator(`#cell-${asking} .input-request input`);
    await field.waitFor();
    expect(await page.locator(`#cell-${asking} .input-prompt`).textContent()).toBe('Your name? ');
    await field.fill('Ada');
    mkdirSync(screenshots, { recursive: true });
    await page.screenshot({ path: join(screenshots, 'live-page-input-and-kernel-bar.png') });
    await field.press('Enter');
    await expect
      .poll(() => page.locator(`#cell-${asking} .outputs`).textContent(), { timeout: 60_000 })
      .toContain('hello Ada');
    await expect.poll(() => page.locator(`#cell-${asking} .input-request`).isHidden()).toBe(true);
    expect(await agentOutputs(session, asking)).toContain('hello Ada');
    // The result of the second cell, labelled as Jupyter does.
    await expect
      .poll(() => page.locator(`#cell-${second} .output.result`).getAttribute('data-prompt'))
      .toMatch(/^Out\[\d+\]:$/);
    expect(await page.locator(`#cell-${second} .output.result`).textContent()).toBe('42');
    expect(await page.locator(`#cell-${first} .prompt`).textContent()).toMatch(/^\[\d+\]$/);

    // Restart asks for a second click, then restarts: the variables are gone.
    const restart = page.locator('.kernel-control.restart');
    await restart.click();
    expect(await restart.textContent()).toBe('Restart? Click again');
    const still = await session.call('run_code', { code: 'print(x)' });
    expect(still.text).toContain('42');
    await restart.click();
    await expect.poll(() => page.locator('#notice').textContent(), { timeout: 60_000 }).toContain('kernel restarted');
    await waitFor('the kernel without x', async () => {
      const gone = await session.call('run_code', { code: "print('x' in globals())" });
      return gone.text.includes('False') ? true : undefined;
    });

    // A kernel that died says so, and its Restart stands out: restarting is what there is to do.
    await session.call('run_code', { code: 'import os; os._exit(1)' });
    await expect.poll(() => page.locator('.kernel-control.restart.wanted').count(), { timeout: 60_000 }).toBe(1);
    expect(await page.locator('#status .kernel').textContent()).toMatch(/kernel (dead|stopped)/);
    await restart.click();
    await restart.click();
    await expect.poll(() => page.locator('.kernel-control.restart.wanted').count(), { timeout: 60_000 }).toBe(0);
    await expect.poll(() => page.locator('#status .kernel').textContent(), { timeout: 60_000 }).toBe('kernel idle');

    // Clear outputs asks too, then every output is gone, in the notebook as well.
    const clear = page.locator('.kernel-control.clear-all');
    await clear.click();
    expect(await page.locator(`#cell-${asking} .outputs`).textContent()).toContain('hello Ada');
    await clear.click();
    await expect.poll(() => page.locator('.outputs:not([hidden])').count()).toBe(0);
    await waitFor('the outputs cleared in the room', async () =>
      (await agentOutputs(session, asking)).includes('hello Ada') ? undefined : true,
    );

    // Save writes the file it is bound to, and says where.
    await page.locator('.kernel-control.save').click();
    await expect.poll(() => page.locator('#notice').textContent()).toContain('controls.ipynb');
  });

  it('moves on with Shift+Enter (a new cell after the last), asks before deleting, opens an HTML output’s link in a new tab, links terminal hyperlinks, sizes retina images, scrolls long outputs, and says when it refuses a name', {
    timeout: 240_000,
  }, async () => {
    const { session, page } = await openPage('keys.ipynb', "Ada O'Brien");
    const cellId = await agentCell(session, 'y = 1');
    await page.waitForSelector(`#cell-${cellId} .cm-content`);
    await expect.poll(() => page.locator('#status .connection').textContent()).toBe('live');
    await expect.poll(() => page.locator('#peers').textContent()).toContain("human:Ada O'Brien");

    // Shift+Enter in the last cell runs it and adds a cell below, where the caret goes.
    await page.locator(`#cell-${cellId} .cm-content`).click();
    await page.keyboard.press('Shift+Enter');
    await expect.poll(() => page.locator('section.cell').count()).toBe(2);
    await page.keyboard.type('z = 2');
    const added = String(await page.locator('section.cell').nth(1).getAttribute('data-cell-id'));
    await page.locator(`#cell-${added} .cm-content`).blur();
    await waitFor('the new cell’s text in the room', async () => {
      const cell = await session.call('get_cell', { cell_id: added });
      return cell.json?.source === 'z = 2' ? true : undefined;
    });

    // Delete asks: the first click arms, the second deletes.
    const remove = page.locator(`#cell-${added} [data-action="delete"]`);
    await remove.click();
    expect(await remove.getAttribute('class')).toContain('armed');
    expect(await page.locator(`#cell-${added}`).count()).toBe(1);
    await remove.click();
    await expect.poll(() => page.locator(`#cell-${added}`).count()).toBe(0);

    // A terminal hyperlink (OSC 8) is a link; another OSC sequence shows nothing.
    const linked = await agentCell(
      session,
      "print('see \\x1b]8;;https://example.com/docs\\x1b\\\\the docs\\x1b]8;;\\x1b\\\\ now\\x1b]0;a title\\x07')",
      true,
    );
    const link = page.locator(`#cell-${linked} .outputs a`);
    await link.waitFor();
    expect(await link.getAttribute('href')).toBe('https://example.com/docs');
    expect(await link.getAttribute('target')).toBe('_blank');
    expect(await link.textContent()).toBe('the docs');
    expect(await page.locator(`#cell-${linked} .outputs`).textContent()).toBe('see the docs now\n');

    // A link in an HTML output opens in a new tab.
    const html = await agentCell(
      session,
      'from IPython.display import HTML\nHTML(\'<a id="go" href="https://example.invalid/docs">the docs</a>\')',
      true,
    );
    // (The machine has no network: the linked site is answered here.)
    await page
      .context()
      .route('https://example.invalid/**', (route) =>
        route.fulfill({ contentType: 'text/html', body: '<title>the docs</title>' }),
      );
    const frame = page.frameLocator(`#cell-${html} iframe.rich`);
    await frame.locator('#go').waitFor();
    const [opened] = await Promise.all([page.context().waitForEvent('page'), frame.locator('#go').click()]);
    await expect.poll(() => opened.url()).toBe('https://example.invalid/docs');
    await expect.poll(() => opened.title()).toBe('the docs');
    await opened.close();

    // A retina image shows at the size its metadata gives (half its pixels).
    const retina = await agentCell(
      session,
      [
        'import base64, struct, zlib',
        'from IPython.display import display',
        'w, h = 120, 80',
        "raw = b''.join(b'\\x00' + b'\\x80' * (w * 3) for _ in range(h))",
        "chunk = lambda kind, data: struct.pack('>I', len(data)) + kind + data + struct.pack('>I', zlib.crc32(kind + data) & 0xffffffff)",
        "png = b'\\x89PNG\\r\\n\\x1a\\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', w, h, 8, 2, 0, 0, 0)) + chunk(b'IDAT', zlib.compress(raw)) + chunk(b'IEND', b'')",
        "display({'image/png': base64.b64encode(png).decode()}, raw=True, metadata={'image/png': {'width': 60, 'height': 40}})",
      ].join('\n'),
      true,
    );
    const image = page.locator(`#cell-${retina} .outputs img`);
    await image.waitFor();
    await expect.poll(async () => (await image.boundingBox())?.width).toBe(60);
    expect(Number(await image.evaluate((node) => (node as unknown as { naturalWidth: number }).naturalWidth))).toBe(
      120,
    );

    // A long output scrolls in its own box.
    const long = await agentCell(session, "print('\\n'.join(f'line {i}' for i in range(500)))", true);
    const box = page.locator(`#cell-${long} pre.output`);
    await box.waitFor();
    const sizes = await box.evaluate((node) => {
      const element = node as unknown as { clientHeight: number; scrollHeight: number };
      return [element.clientHeight, element.scrollHeight];
    });
    expect(sizes[0]).toBeGreaterThan(100);
    expect(sizes[1]).toBeGreaterThan((sizes[0] ?? 0) * 3);

    // A name the daemon does not take: the page says so instead of reconnecting for ever.
    const refused = await pageFor(session, 'Ada <script>');
    await expect.poll(() => refused.locator('#notice').textContent()).toContain('cannot join');
    expect(await refused.locator('#status .connection').textContent()).toBe('not open to you');
  });

  it('shows a markdown cell’s attached image, an image beside the notebook and a web image, and keeps the attachment in the saved file', {
    timeout: 120_000,
  }, async () => {
    const session = await startUserSession();
    sessions.push(session);
    // A PNG as Jupyter keeps an image pasted into a markdown cell.
    const png = gradientPng(240, 90);
    const path = join(session.dirs.project, 'pasted.ipynb');
    writeFileSync(
      path,
      JSON.stringify({
        cells: [
          {
            cell_type: 'markdown',
            id: 'notes',
            metadata: {},
            source: [
              'Pasted: ![the plot](attachment:plot.png)\n',
              '\n',
              'Beside the notebook: ![figure](figures/result.png)\n',
              '\n',
              'From the web: ![logo](https://example.invalid/logo.png)',
            ],
            attachments: { 'plot.png': { 'image/png': png } },
          },
        ],
        metadata: {},
        nbformat: 4,
        nbformat_minor: 5,
      }),
    );
    mkdirSync(join(session.dirs.project, 'figures'));
    writeFileSync(join(session.dirs.project, 'figures', 'result.png'), Buffer.from(gradientPng(120, 45), 'base64'));
    const opened = await session.call('connect_notebook', { path });
    expect(opened.isError, opened.text).toBe(false);
    // (The machine has no network: the web image is answered here, before the page asks for it.)
    const page = await pageFor(session, 'Ada', (context) =>
      context.route('https://example.invalid/**', (route) =>
        route.fulfill({ contentType: 'image/png', body: Buffer.from(gradientPng(60, 24), 'base64') }),
      ),
    );
    const pasted = page.locator('#cell-notes .rendered img[alt="the plot"]');
    await pasted.waitFor();
    expect(await pasted.getAttribute('src')).toBe(`data:image/png;base64,${png}`);
    await expect
      .poll(() => pasted.evaluate((node) => (node as unknown as { naturalWidth: number }).naturalWidth))
      .toBe(240);
    const beside = page.locator('#cell-notes .rendered img[alt="figure"]');
    await expect
      .poll(() => beside.evaluate((node) => (node as unknown as { naturalWidth: number }).naturalWidth))
      .toBe(120);
    expect(await beside.getAttribute('src')).toMatch(/\/files\/figures\/result\.png\?cap=/);
    const web = page.locator('#cell-notes .rendered img[alt="logo"]');
    expect(await web.getAttribute('src')).toBe('https://example.invalid/logo.png');
    // Loaded: the page's CSP lets https: images in.
    await expect
      .poll(() => web.evaluate((node) => (node as unknown as { naturalWidth: number }).naturalWidth))
      .toBe(60);
    mkdirSync(screenshots, { recursive: true });
    await page.locator('#cell-notes').screenshot({ path: join(screenshots, 'live-page-markdown-image.png') });
    // An edit and a save keep the attachment in the file.
    const edited = await session.call('replace_in_cell', {
      cell_id: 'notes',
      find: 'Pasted:',
      replace: 'Pasted here:',
    });
    expect(edited.isError, edited.text).toBe(false);
    const saved = await session.call('save_notebook', {});
    expect(saved.isError, saved.text).toBe(false);
    const file = JSON.parse(readFileSync(path, 'utf8')) as { cells: { source: string[]; attachments?: unknown }[] };
    expect(file.cells[0]?.source[0]).toBe('Pasted here: ![the plot](attachment:plot.png)\n');
    expect(file.cells[0]?.attachments).toEqual({ 'plot.png': { 'image/png': png } });
  });

  it('takes Jupyter’s command keys on the selected cell (Escape, b, m, d d, arrows, Enter) and undoes the person’s last edit with z', {
    timeout: 180_000,
  }, async () => {
    const { session, page } = await openPage('commands.ipynb');
    const first = await agentCell(session, 'p = 1');
    const second = await agentCell(session, 'q = 2');
    await page.waitForSelector(`#cell-${second} .cm-content`);
    const order = async () =>
      ((await session.call('get_all_cells', { format: 'json', include_outputs: false })).json?.cells as {
        cell_id: string;
        cell_type: string;
      }[]) ?? [];

    // Escape leaves the text: the cell is selected; b adds a code cell below and selects it.
    await page.locator(`#cell-${first} .cm-content`).click();
    await page.keyboard.press('Escape');
    await expect.poll(() => page.locator(`#cell-${first}`).getAttribute('class')).toContain('selected');
    await page.keyboard.press('b');
    const added = await waitFor('a cell below the first', async () => {
      const cells = await order();
      return cells.length === 3 && cells[0]?.cell_id === first ? cells[1]?.cell_id : undefined;
    });
    await expect.poll(() => page.locator(`#cell-${added}`).getAttribute('class')).toContain('selected');
    // m makes it markdown; d d deletes it.
    await page.keyboard.press('m');
    await waitFor('the new cell as markdown', async () =>
      (await order()).find((cell) => cell.cell_id === added)?.cell_type === 'markdown' ? true : undefined,
    );
    await page.keyboard.press('d');
    await page.keyboard.press('d');
    await waitFor('the new cell deleted', async () => ((await order()).length === 2 ? true : undefined));

    // The selection moved on to the second cell; Enter edits it.
    await expect.poll(() => page.locator(`#cell-${second}`).getAttribute('class')).toContain('selected');
    await page.keyboard.press('Enter');
    await page.keyboard.press('End');
    await page.keyboard.type(' + 40');
    await page.keyboard.press('Escape');
    await waitFor('her edit in the room', async () => {
      const cell = await session.call('get_cell', { cell_id: second });
      return cell.json?.source === 'q = 2 + 40' ? true : undefined;
    });

    // The arrows move the selection.
    await page.keyboard.press('ArrowUp');
    await expect.poll(() => page.locator(`#cell-${first}`).getAttribute('class')).toContain('selected');
    expect(await page.locator(`#cell-${second}`).getAttribute('class')).not.toContain('selected');
    await page.keyboard.press('ArrowDown');
    await expect.poll(() => page.locator(`#cell-${second}`).getAttribute('class')).toContain('selected');

    // z undoes her last edit, in the room and on her page.
    await page.keyboard.press('z');
    await waitFor('her edit undone', async () => {
      const cell = await session.call('get_cell', { cell_id: second });
      return cell.json?.source === 'q = 2' ? true : undefined;
    });
    await expect.poll(() => page.locator(`#cell-${second} .cm-content`).textContent()).toBe('q = 2');
  });
});
