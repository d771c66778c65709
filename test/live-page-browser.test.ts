import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { afterEach, describe, expect, it } from 'vitest';
import { startUserSession, type UserSession, waitFor } from './support/index.js';
import { useChromium } from './support/use-chromium.js';

/**
 * The live page as a person sees it: headless Chromium (Debian `chromium`, installed by the
 * bootstrap; `NTERACT_CHROMIUM` names another) beside an agent on the shipped `nteract-mcp`.
 */
/** Where the screenshots go: `docs/screenshots` with NTERACT_UPDATE_SCREENSHOTS=1 (the README shows them), else a temp dir. */
const screenshots =
  process.env.NTERACT_UPDATE_SCREENSHOTS === '1'
    ? fileURLToPath(new URL('../docs/screenshots/', import.meta.url))
    : mkdtempSync(join(tmpdir(), 'live-page-shots-'));

const browser = useChromium();

const sessions: UserSession[] = [];
afterEach(async () => {
  for (const session of sessions.splice(0)) await session.stop();
});

/** A session with a notebook open, and the live page for it in the browser as the person named Ada. */
async function openPage(
  notebook: { path: string } | 'untitled',
): Promise<{ session: UserSession; page: Page; close: () => Promise<void> }> {
  const session = await startUserSession();
  sessions.push(session);
  const opened =
    notebook === 'untitled'
      ? await session.call('create_notebook')
      : await session.call('connect_notebook', { path: join(session.dirs.project, notebook.path) });
  expect(opened.isError, opened.text).toBe(false);
  const shown = await session.call('show_notebook');
  const url = new URL(shown.texts[0]?.split('\n')[0] ?? '');
  url.searchParams.set('name', 'Ada');
  const context = await browser().newContext({ viewport: { width: 1100, height: 900 } });
  const page = await context.newPage();
  await page.goto(url.toString());
  return { session, page, close: () => context.close() };
}

/** Creates a cell as the agent; its id. */
async function agentCell(
  session: UserSession,
  source: string,
  options: { run?: boolean; type?: 'markdown' } = {},
): Promise<string> {
  const made = await session.call('create_cell', {
    source,
    ...(options.run ? { and_run: true } : {}),
    ...(options.type ? { cell_type: options.type } : {}),
  });
  expect(made.isError, made.text).toBe(false);
  return String(made.json?.cell_id);
}

/** The cell ids in the order the agent reads them. */
async function agentOrder(session: UserSession): Promise<string[]> {
  const cells = await session.call('get_all_cells', { format: 'json', include_outputs: false });
  return ((cells.json?.cells ?? []) as { cell_id: string }[]).map((cell) => cell.cell_id);
}

/** The cell ids in the order the page shows them. */
function pageOrder(page: Page): Promise<string[]> {
  return page.locator('section.cell').evaluateAll((cells) => cells.map((cell) => cell.id.slice('cell-'.length)));
}

/** What the tests use of the browser's globals (this file is not compiled with the DOM library). */
interface BrowserGlobals {
  getComputedStyle(node: unknown): { readonly color: string; readonly display: string };
  readonly document: { getAnimations(): readonly object[] };
  readonly CSSTransition: abstract new () => object;
}

/** The computed colour of the first element `selector` finds (with `text` when given), as [r, g, b]. */
async function colourOf(page: Page, selector: string, text?: RegExp): Promise<number[]> {
  const found = page.locator(selector, text === undefined ? {} : { hasText: text }).first();
  const colour = await found.evaluate((node) => (globalThis as unknown as BrowserGlobals).getComputedStyle(node).color);
  return (colour.match(/\d+/g) ?? []).slice(0, 3).map(Number);
}

/**
 * A screenshot of the whole page, taken with a viewport as tall as the page (a full-page capture
 * leaves the output frames, which are other documents, blank).
 */
async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(screenshots, { recursive: true });
  await page.mouse.move(0, 0);
  const viewport = page.viewportSize() ?? { width: 1100, height: 900 };
  const height = Number(await page.evaluate('document.documentElement.scrollHeight'));
  await page.setViewportSize({ width: viewport.width, height });
  // Frames drawn at the new size, no transition (a toolbar fading) half-way.
  await page.evaluate('new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))');
  await page.waitForFunction(() => {
    const browser = globalThis as unknown as BrowserGlobals;
    return browser.document.getAnimations().every((animation) => !(animation instanceof browser.CSSTransition));
  });
  await page.screenshot({ path: join(screenshots, name) });
  await page.setViewportSize(viewport);
}

describe('the live page in a real browser', () => {
  it('shows the agent’s notebook live (highlighted code, markdown with math, coloured output and tracebacks, a plot, an HTML table), takes a person’s edit the agent then reads, names who edited each cell, and keeps working after the child and the daemon are killed', {
    timeout: 300_000,
  }, async () => {
    const { session, page, close } = await openPage({ path: 'analysis.ipynb' });
    const firstId = await agentCell(session, 'greeting = "hello from the agent"\nprint(greeting)', { run: true });
    // The launch code left the address (and history) once spent; the page keeps no cookie.
    expect(page.url()).not.toContain('launch=');
    expect(page.url()).not.toContain('token=');
    expect(await page.evaluate('document.cookie')).toBe('');
    await page.waitForSelector(`#cell-${firstId} .cm-content`);
    await expect.poll(() => page.locator(`#cell-${firstId} .outputs`).textContent()).toContain('hello from the agent');
    // CodeMirror highlights the Python, and its styles apply under the page's CSP (a string is coloured).
    await page.waitForSelector(`#cell-${firstId} .cm-content .tok-string`);
    const [r, g, b] = await colourOf(page, `#cell-${firstId} .cm-content .tok-string`);
    expect(r).toBeGreaterThan(120);
    expect(Math.max(g as number, b as number)).toBeLessThan(90);
    const editorDisplay = await page
      .locator(`#cell-${firstId} .cm-editor`)
      .evaluate((node) => (globalThis as unknown as BrowserGlobals).getComputedStyle(node).display);
    expect(editorDisplay).toBe('flex');

    // Markdown renders (sanitised) with its math as MathML; a raw script does not survive.
    const notes = await agentCell(
      session,
      [
        '## Squares, live',
        'The agent checks that $\\sum_{k=1}^{n} k^2 = \\frac{n(n+1)(2n+1)}{6}$ and plots $y = x^2$; **bold** claims need proof:',
        '',
        '$$e^{i\\pi} + 1 = 0$$',
        '',
        'See [the identity](https://en.wikipedia.org/wiki/Euler%27s_identity).',
        '',
        '<script>document.title = "markdown-pwned"</script>',
      ].join('\n'),
      { type: 'markdown' },
    );
    await page.waitForSelector(`#cell-${notes} .rendered math`);
    expect(await page.locator(`#cell-${notes} .rendered strong`).textContent()).toBe('bold');
    expect(await page.locator(`#cell-${notes} .rendered script`).count()).toBe(0);
    // A link opens outside the page.
    const link = page.locator(`#cell-${notes} .rendered a`);
    expect(await link.getAttribute('target')).toBe('_blank');
    expect(await link.getAttribute('rel')).toBe('noopener noreferrer');
    expect(await page.locator(`#cell-${notes} .source`).isHidden()).toBe(true);

    // Terminal colours in a stream and in a traceback: spans coloured through the CSSOM.
    const checks = await agentCell(
      session,
      'for n in range(1, 5):\n    ok = sum(k * k for k in range(1, n + 1)) == n * (n + 1) * (2 * n + 1) // 6\n    print(f"n={n}", "\\x1b[32mpassed\\x1b[0m" if ok else "\\x1b[31mfailed\\x1b[0m")\nprint("\\x1b[1;31mred\\x1b[0m means trouble")',
      { run: true },
    );
    await page.waitForSelector(`#cell-${checks} .outputs span`);
    const [red, green, blue] = await colourOf(page, `#cell-${checks} .outputs span`, /^red$/);
    expect(red).toBeGreaterThan(150);
    expect(Math.max(green as number, blue as number)).toBeLessThan(100);
    const failing = await agentCell(session, 'squares = {1: 1, 2: 4}\nsquares[3]', { run: true });
    await page.waitForSelector(`#cell-${failing} .outputs pre.error span`);
    expect(await page.locator(`#cell-${failing} .outputs pre.error`).textContent()).toContain('KeyError');

    // The agent plots and tabulates; the page shows the figure and the (framed) table without a reload.
    const plot = await agentCell(
      session,
      'import matplotlib.pyplot as plt\nxs = range(1, 11)\nplt.figure(figsize=(6, 3.2))\nplt.plot(xs, [x * x for x in xs], marker="o")\nplt.title("y = x²")\nplt.show()',
      { run: true },
    );
    await page.waitForSelector(`#cell-${plot} img[alt="image/png"]`);
    const table = await agentCell(
      session,
      'from IPython.display import HTML\nrows = "".join(f"<tr><td>{n}</td><td>{n * n}</td><td>{n ** 3}</td></tr>" for n in range(1, 6))\nHTML(f"<table><thead><tr><th>n</th><th>n²</th><th>n³</th></tr></thead><tbody>{rows}</tbody></table>")',
      { run: true },
    );
    await expect
      .poll(() => page.frameLocator(`#cell-${table} iframe.rich`).locator('table').textContent())
      .toContain('125');
    const said = await agentCell(
      session,
      'from IPython.display import Markdown, Math, display\ndisplay(Markdown("The table holds **five** rows."), Math(r"\\sum_{n=1}^{5} n^3 = 225"))',
      { run: true },
    );
    await page.waitForSelector(`#cell-${said} .outputs math`);
    expect(await page.locator(`#cell-${said} .outputs strong`).textContent()).toBe('five');
    await screenshot(page, 'live-page-agent.png');

    // The person edits the first cell in its editor and runs it; the agent's next read has it.
    await page.locator(`#cell-${firstId} .cm-content`).click();
    await page.keyboard.press('ControlOrMeta+A');
    await page.keyboard.type('greeting = "hello from Ada"\nprint(greeting)');
    await page.keyboard.press('Shift+Enter');
    const edited = await waitFor('the edit in the room', async () => {
      const cell = await session.call('get_cell', { cell_id: firstId });
      return cell.text.includes('hello from Ada') && cell.text.includes('out') ? cell : undefined;
    });
    // Exactly what she typed over the selected text (no line left behind).
    expect(edited.json?.source).toBe('greeting = "hello from Ada"\nprint(greeting)');
    await expect
      .poll(() => page.locator(`#cell-${firstId} .outputs`).textContent(), { timeout: 30_000 })
      .toContain('hello from Ada');
    // Who is in the room: the person by name beside the agent; who edited each cell.
    const here = await page.locator('#peers').textContent();
    expect(here).toContain('human:Ada');
    expect(here).toMatch(/agent:[a-z0-9-]+:[0-9a-f]+/);
    await expect.poll(() => page.locator(`#cell-${firstId} .edited-by`).textContent()).toBe('edited by human:Ada');
    expect(await page.locator(`#cell-${plot} .edited-by`).textContent()).toMatch(
      /^edited by .*agent:[a-z0-9-]+:[0-9a-f]+$/,
    );
    await page.locator(`#cell-${firstId} .cm-content`).blur();
    await screenshot(page, 'live-page-human-edit.png');

    // The child MCP server is killed: the page goes on, and shows the agent's next edit.
    await session.faults.killChild();
    const afterChild = await agentCell(session, 'after = "the child came back"');
    await page.waitForSelector(`#cell-${afterChild} .cm-content`, { timeout: 60_000 });
    expect(await page.locator(`#cell-${afterChild} .cm-content`).textContent()).toContain('the child came back');

    // The daemon restarts: the page reconnects by itself, same address, same notebook.
    await session.faults.killDaemon();
    const afterDaemon = await agentCell(session, 'after = "the restart"');
    await page.waitForSelector(`#cell-${afterDaemon} .cm-content`, { timeout: 60_000 });
    await expect.poll(() => page.locator('#status .connection').textContent(), { timeout: 30_000 }).toBe('live');
    await close();
  });

  it('moves cells with its buttons, shows where the other person is, keeps output scripts in an opaque-origin sandbox, and runs and interrupts a cell, as the person asks', {
    timeout: 180_000,
  }, async () => {
    const { session, page, close } = await openPage('untitled');
    const first = await agentCell(session, 'first = 1');
    const second = await agentCell(session, 'second = 2');
    const third = await agentCell(session, 'third = 3');
    await page.waitForSelector(`#cell-${third} .cm-content`);

    // Moves: down, up, and up to the top (after no cell).
    await page.locator(`#cell-${first} [data-action="move-down"]`).click();
    await waitFor('the move down in the room', async () =>
      (await agentOrder(session)).join() === [second, first, third].join() ? true : undefined,
    );
    await expect.poll(() => pageOrder(page)).toEqual([second, first, third]);
    await page.locator(`#cell-${third} [data-action="move-up"]`).click();
    await waitFor('the move up in the room', async () =>
      (await agentOrder(session)).join() === [second, third, first].join() ? true : undefined,
    );
    await expect.poll(() => pageOrder(page)).toEqual([second, third, first]);
    await page.locator(`#cell-${third} [data-action="move-up"]`).click();
    await waitFor('the move to the top in the room', async () =>
      (await agentOrder(session)).join() === [third, second, first].join() ? true : undefined,
    );

    // Another peer's change to a cell nobody edits here shows at once, in its editor.
    const changed = await session.call('set_cell', { cell_id: first, source: 'first = "changed by the agent"' });
    expect(changed.isError, changed.text).toBe(false);
    await expect
      .poll(() => page.locator(`#cell-${first} .cm-content`).textContent())
      .toBe('first = "changed by the agent"');

    // The person adds a cell below another, and deletes one.
    await page.locator(`#cell-${third} [data-action="add-below"]`).click();
    const added = await waitFor('the added cell in the room', async () => {
      const order = await agentOrder(session);
      return order.length === 4 && order[0] === third ? order[1] : undefined;
    });
    await page.waitForSelector(`#cell-${added} .cm-content`);
    // (Delete asks: a second click deletes.)
    await page.locator(`#cell-${added} [data-action="delete"]`).click();
    await page.locator(`#cell-${added} [data-action="delete"]`).click();
    await waitFor('the deleted cell gone from the room', async () =>
      (await agentOrder(session)).join() === [third, second, first].join() ? true : undefined,
    );
    await expect.poll(() => page.locator(`#cell-${added}`).count()).toBe(0);

    // A markdown cell: rendered, edited on double-click, rendered again on Shift+Enter.
    const notes = await agentCell(session, 'A *draft*', { type: 'markdown' });
    await page.waitForSelector(`#cell-${notes} .rendered em`);
    await page.locator(`#cell-${notes} .rendered`).dblclick();
    await expect.poll(() => page.locator(`#cell-${notes} .source`).isVisible()).toBe(true);
    await page.keyboard.press('ControlOrMeta+End');
    await page.keyboard.type(' with **more**');
    await page.keyboard.press('Shift+Enter');
    await page.waitForSelector(`#cell-${notes} .rendered strong`);
    expect(await page.locator(`#cell-${notes} .source`).isHidden()).toBe(true);
    await waitFor('the markdown edit in the room', async () => {
      const cell = await session.call('get_cell', { cell_id: notes });
      return cell.json?.source === 'A *draft* with **more**' ? cell : undefined;
    });

    // The cell being edited keeps the person's text and caret while the notebook changes around it,
    // and takes another peer's change of that very cell as it comes, merged with hers: she keeps
    // typing; the notebook and her page end with the same text, both peers' work in it.
    await page.locator(`#cell-${first} .cm-content`).click();
    await page.keyboard.press('ControlOrMeta+End');
    await page.keyboard.type('  # by Ada');
    const meanwhile = await agentCell(session, 'meanwhile = "the agent goes on"');
    await page.waitForSelector(`#cell-${meanwhile} .cm-content`);
    const overwritten = await session.call('set_cell', { cell_id: first, source: 'first = "the agent again"' });
    expect(overwritten.isError, overwritten.text).toBe(false);
    await expect.poll(() => page.locator(`#cell-${first} .cm-content`).textContent()).toContain('the agent again');
    await page.keyboard.type(', still typing');
    await page.locator(`#cell-${first} .cm-content`).blur();
    const merged = await waitFor('her text and the agent’s in the room', async () => {
      const cell = await session.call('get_cell', { cell_id: first });
      const source = String(cell.json?.source);
      return source.includes('the agent again') && source.endsWith(', still typing') ? source : undefined;
    });
    await expect.poll(() => page.locator(`#cell-${first} .cm-content`).textContent()).toBe(merged);
    expect(await page.locator('#notice').isVisible()).toBe(false);

    // Presence: Bob's page shows Ada on the cell she is in, and no more once she left it.
    const bob = await page.context().newPage();
    await bob.goto(page.url().replace(/name=Ada/, 'name=Bob'));
    await bob.waitForSelector(`#cell-${second} .cm-content`);
    await page.locator(`#cell-${second} .cm-content`).click();
    await expect.poll(() => bob.locator(`#cell-${second} .presence`).textContent()).toContain('human:Ada');
    await page.locator(`#cell-${second} .cm-content`).blur();
    await expect.poll(() => bob.locator(`#cell-${second} .presence`).textContent()).not.toContain('human:Ada');
    await bob.close();

    // An output's script runs in a frame sandboxed without same-origin: it cannot reach the page
    // (its title stays) nor read any cookie.
    const title = await page.title();
    const framed = await agentCell(
      session,
      [
        'from IPython.display import HTML',
        'HTML("""<b id="x">framed</b><script>',
        "try { parent.document.title = 'pwned'; document.body.append(' parent: reached'); } catch (e) { document.body.append(' parent: ' + e.name); }",
        "try { document.body.append(' cookie: [' + document.cookie + ']'); } catch (e) { document.body.append(' cookie: ' + e.name); }",
        '</script>""")',
      ].join('\n'),
      { run: true },
    );
    const frame = page.locator(`#cell-${framed} iframe.rich`);
    await frame.waitFor();
    const sandbox = (await frame.getAttribute('sandbox'))?.split(/\s+/) ?? [];
    expect(sandbox).toContain('allow-scripts');
    expect(sandbox).not.toContain('allow-same-origin');
    const inFrame = page.frameLocator(`#cell-${framed} iframe.rich`).locator('body');
    await expect.poll(() => inFrame.textContent(), { timeout: 20_000 }).toContain('cookie:');
    const frameText = (await inFrame.textContent()) ?? '';
    expect(frameText).toContain('framed');
    expect(frameText).toMatch(/parent: SecurityError/);
    expect(frameText).not.toContain('runtimed_page');
    expect(frameText).not.toMatch(/[0-9a-f]{64}/);
    expect(await page.title()).toBe(title);

    // The person runs a long cell and interrupts it; the agent reads the KeyboardInterrupt.
    const sleeper = await agentCell(session, 'import time; time.sleep(30)');
    await page.locator(`#cell-${sleeper} [data-action="run"]`).click();
    const interrupt = page.locator(`#cell-${sleeper} [data-action="interrupt"]`);
    await interrupt.waitFor({ state: 'visible', timeout: 60_000 });
    expect(await page.locator(`#cell-${sleeper}`).getAttribute('class')).toContain('running');
    expect(await page.locator(`#cell-${sleeper} .prompt`).textContent()).toBe('[*]');
    expect(await page.locator(`#cell-${sleeper} .presence`).textContent()).toContain('running: human:Ada');
    // Another run waits behind it: queued.
    await page.locator(`#cell-${second} [data-action="run"]`).click();
    await expect.poll(() => page.locator(`#cell-${second}`).getAttribute('class')).toContain('queued');
    expect(await page.locator(`#cell-${second} .prompt`).textContent()).toBe('[*]');
    await interrupt.click();
    await waitFor('the interrupted cell', async () => {
      const cell = await session.call('get_cell', { cell_id: sleeper });
      return cell.text.includes('KeyboardInterrupt') ? cell : undefined;
    });
    await expect.poll(() => page.locator(`#cell-${sleeper} .outputs`).textContent()).toContain('KeyboardInterrupt');
    await expect.poll(() => interrupt.isHidden()).toBe(true);
    // The queued run left the queue (ran, or was aborted by the interrupt, as the kernel decides).
    await expect.poll(() => page.locator(`#cell-${second} .prompt`).textContent()).not.toBe('[*]');
    expect(await page.locator(`#cell-${second}`).getAttribute('class')).not.toContain('queued');
    await close();
  });
});
