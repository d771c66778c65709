import { mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BrowserContext, Page, Request } from 'playwright-core';
import { afterEach, describe, expect, it } from 'vitest';
import { startUserSession, type UserSession, waitFor } from './support/index.js';
import { useChromium } from './support/use-chromium.js';

/**
 * A cell typed in by a person on the live page while an agent, or another person, edits it too
 * (headless Chromium beside an agent on the shipped `nteract-mcp`): every change is merged at the
 * character level, the page never shows a text the notebook does not have (once the person's own
 * is sent), a visit that changed nothing sends nothing, and a text typed while the daemon is down
 * is sent when it is back, the cell saying meanwhile that it is not saved.
 */

const browser = useChromium();

/** Where the screenshots go: `docs/screenshots` with NTERACT_UPDATE_SCREENSHOTS=1 (the README shows them), else a temp dir. */
const screenshots =
  process.env.NTERACT_UPDATE_SCREENSHOTS === '1'
    ? fileURLToPath(new URL('../docs/screenshots/', import.meta.url))
    : mkdtempSync(join(tmpdir(), 'co-editing-shots-'));

const sessions: UserSession[] = [];
const contexts: BrowserContext[] = [];
afterEach(async () => {
  for (const context of contexts.splice(0)) await context.close();
  for (const session of sessions.splice(0)) await session.stop();
});

/** A session with a new notebook: untitled, or the file `file` in the project (made by connecting to it). */
async function openNotebook(file?: string): Promise<UserSession> {
  const session = await startUserSession();
  sessions.push(session);
  const opened =
    file === undefined
      ? await session.call('create_notebook')
      : await session.call('connect_notebook', { path: join(session.dirs.project, file) });
  expect(opened.isError, opened.text).toBe(false);
  return session;
}

interface PersonPage {
  readonly page: Page;
  /** The bodies of the page's `update_cell` requests, as posted. */
  readonly updates: Record<string, unknown>[];
}

/** A person in a browser of their own, on the page the agent shows them (its launch address is good once). */
async function personOn(session: UserSession, name: string): Promise<PersonPage> {
  const shown = await session.call('show_notebook');
  expect(shown.isError, shown.text).toBe(false);
  const url = new URL(shown.texts[0]?.split('\n')[0] ?? '');
  const context = await browser().newContext({ viewport: { width: 1100, height: 900 } });
  contexts.push(context);
  const page = await context.newPage();
  const updates: Record<string, unknown>[] = [];
  page.on('request', (request: Request) => {
    if (request.method() !== 'POST' || !request.url().endsWith('/requests')) return;
    const body = JSON.parse(request.postData() ?? '{}') as Record<string, unknown>;
    if (body.type === 'update_cell') updates.push(body);
  });
  const named = new URL(url);
  named.searchParams.set('name', name);
  await page.goto(named.toString());
  return { page, updates };
}

async function agentCell(session: UserSession, source: string): Promise<string> {
  const made = await session.call('create_cell', { source });
  expect(made.isError, made.text).toBe(false);
  return String(made.json?.cell_id);
}

async function roomSource(session: UserSession, cellId: string): Promise<string> {
  const cell = await session.call('get_cell', { cell_id: cellId });
  expect(cell.isError, cell.text).toBe(false);
  return String(cell.json?.source);
}

/**
 * The text in the cell's editor: its lines, without the placeholder an empty one shows. The page's
 * script, as this file has no DOM types.
 */
async function editorText(page: Page, cellId: string): Promise<string> {
  return String(
    await page.evaluate(`[...document.querySelectorAll(${JSON.stringify(`#cell-${cellId} .cm-line`)})]
      .map((line) => {
        const copy = line.cloneNode(true);
        for (const widget of copy.querySelectorAll('.cm-placeholder')) widget.remove();
        return copy.textContent;
      })
      .join('\\n')`),
  );
}

/** Puts the caret at the end of line `line` (1-based) of the cell's editor. */
async function caretAtEndOfLine(page: Page, cellId: string, line: number): Promise<void> {
  await page
    .locator(`#cell-${cellId} .cm-line`)
    .nth(line - 1)
    .click();
  await page.keyboard.press('End');
}

/** Waits until the room, and every page given, hold `expected` for the cell. */
async function everywhere(session: UserSession, cellId: string, expected: string, pages: Page[]): Promise<void> {
  await waitFor(`the room has ${JSON.stringify(expected)}`, async () =>
    (await roomSource(session, cellId)) === expected ? true : undefined,
  );
  for (const page of pages) await expect.poll(() => editorText(page, cellId)).toBe(expected);
}

describe('co-editing one cell on the live page', () => {
  it('merges the agent’s edit into the line the person is typing, shows who made it, and runs and saves exactly what the page shows', {
    timeout: 180_000,
  }, async () => {
    const session = await openNotebook();
    const cellId = await agentCell(session, 'c = 1\nlabel = "x"\nprint(c, label)');
    const { page } = await personOn(session, 'Ada');
    await page.waitForSelector(`#cell-${cellId} .cm-content`);

    // She types on line 1 and stays in the cell; the agent edits line 2 at the same moment.
    await caretAtEndOfLine(page, cellId, 1);
    await page.keyboard.type('0');
    const replaced = await session.call('replace_in_cell', { cell_id: cellId, find: '"x"', replace: '"by the agent"' });
    expect(replaced.isError, replaced.text).toBe(false);
    // The agent's change shows in her editor while her caret is in it, with the agent's mark where it ended.
    await page.waitForFunction(`(() => {
      const cell = document.getElementById(${JSON.stringify(`cell-${cellId}`)});
      return cell?.querySelector('.cm-content')?.textContent?.includes('by the agent') === true &&
        cell.querySelector('.cm-peer-mark')?.dataset.label?.includes('agent:') === true;
    })()`);
    await page.keyboard.type(' + 5');
    expect(await editorText(page, cellId)).toBe('c = 10 + 5\nlabel = "by the agent"\nprint(c, label)');
    mkdirSync(screenshots, { recursive: true });
    await page.locator(`#cell-${cellId}`).screenshot({ path: join(screenshots, 'live-page-co-editing.png') });

    // She leaves the cell: the notebook has both edits, and so does her page.
    await page.locator(`#cell-${cellId} .cm-content`).blur();
    await everywhere(session, cellId, 'c = 10 + 5\nlabel = "by the agent"\nprint(c, label)', [page]);
    expect(await page.locator('#notice').isVisible()).toBe(false);

    // She runs it: what runs is what she sees.
    await page.locator(`#cell-${cellId} .cm-content`).click();
    await page.keyboard.press('Shift+Enter');
    await expect
      .poll(() => page.locator(`#cell-${cellId} .outputs`).textContent(), { timeout: 60_000 })
      .toContain('15 by the agent');
    const path = join(session.dirs.project, 'co-edited.ipynb');
    const saved = await session.call('save_notebook', { path });
    expect(saved.isError, saved.text).toBe(false);
    const file = JSON.parse(readFileSync(path, 'utf8')) as { cells: { source: string | string[] }[] };
    const sources = file.cells.map((cell) => (Array.isArray(cell.source) ? cell.source.join('') : cell.source));
    expect(sources).toContain('c = 10 + 5\nlabel = "by the agent"\nprint(c, label)');
  });

  it('sends nothing when the person only clicked in and out while the agent changed the cell', {
    timeout: 120_000,
  }, async () => {
    const session = await openNotebook();
    const visited = await agentCell(session, 'e = 1');
    const other = await agentCell(session, 'f = 1');
    const { page, updates } = await personOn(session, 'Ada');
    await page.waitForSelector(`#cell-${visited} .cm-content`);
    await page.locator(`#cell-${visited} .cm-content`).click();
    const set = await session.call('set_cell', { cell_id: visited, source: 'e = 2' });
    expect(set.isError, set.text).toBe(false);
    await expect.poll(() => editorText(page, visited)).toBe('e = 2');
    await page.locator(`#cell-${visited} .cm-content`).blur();

    // Her next edit, in another cell, reaches the room; nothing was ever sent for the visited one.
    await caretAtEndOfLine(page, other, 1);
    await page.keyboard.type('0');
    await page.locator(`#cell-${other} .cm-content`).blur();
    await everywhere(session, other, 'f = 10', [page]);
    expect(updates.filter((update) => update.cell_id === visited)).toEqual([]);
    expect(await roomSource(session, visited)).toBe('e = 2');
    expect(await page.locator('#notice').isVisible()).toBe(false);
  });

  it('two people typing in one cell at once both keep their work, in the notebook and on both pages', {
    timeout: 180_000,
  }, async () => {
    const session = await openNotebook();
    const cellId = await agentCell(session, 'total = 0\nnote = ""');
    const ada = await personOn(session, 'Ada');
    const bob = await personOn(session, 'Bob');
    for (const person of [ada, bob]) await person.page.waitForSelector(`#cell-${cellId} .cm-content`);
    await caretAtEndOfLine(ada.page, cellId, 1);
    await caretAtEndOfLine(bob.page, cellId, 2);
    await Promise.all([
      ada.page.keyboard.type(' + 1 + 2 + 3 + 4', { delay: 40 }),
      bob.page.keyboard.type('  # counted by Bob', { delay: 40 }),
    ]);
    const expected = 'total = 0 + 1 + 2 + 3 + 4\nnote = ""  # counted by Bob';
    // While both are still in the cell, each sees the other's text.
    for (const person of [ada, bob]) await expect.poll(() => editorText(person.page, cellId)).toBe(expected);
    for (const person of [ada, bob]) await person.page.locator(`#cell-${cellId} .cm-content`).blur();
    await everywhere(session, cellId, expected, [ada.page, bob.page]);
    // Each sent only its own typing, several times, each over the version it last had.
    expect(ada.updates.length).toBeGreaterThan(0);
    expect(bob.updates.length).toBeGreaterThan(0);
    for (const update of [...ada.updates, ...bob.updates]) expect(update.expected_version).toEqual(expect.any(String));
  });

  it('keeps a text typed while the daemon is down, says it is not saved, and sends it once the daemon is back', {
    timeout: 180_000,
  }, async () => {
    // A notebook saved to a file: an untitled one is not kept across a daemon crash.
    const session = await openNotebook('kept.ipynb');
    const cellId = await agentCell(session, 'd = 1');
    const { page, updates } = await personOn(session, 'Ada');
    await page.waitForSelector(`#cell-${cellId} .cm-content`);
    await expect.poll(() => page.locator('#status .connection').textContent()).toBe('live');

    await session.faults.killDaemon();
    await expect.poll(() => page.locator('#status .connection').textContent()).not.toBe('live');
    await caretAtEndOfLine(page, cellId, 1);
    await page.keyboard.type(' + 1');
    await page.locator(`#cell-${cellId} .cm-content`).blur();
    await expect
      .poll(() => page.locator(`#cell-${cellId} .sync-state.waiting`).textContent())
      .toContain('Not saved yet');
    expect(await editorText(page, cellId)).toBe('d = 1 + 1');

    // The agent's next call brings the daemon back (the child starts it); the page reconnects and sends her text.
    let last = '';
    await waitFor('the daemon back with the cell', async () => {
      const cell = await session.call('get_cell', { cell_id: cellId });
      last = cell.text;
      return cell.isError ? undefined : true;
    }).catch((error: unknown) => {
      throw new Error(`${(error as Error).message}; the last answer: ${last}`);
    });
    await everywhere(session, cellId, 'd = 1 + 1', [page]);
    // One request, sent again with its key until the room answered it.
    expect(new Set(updates.map((update) => update.idempotency_key)).size).toBe(1);
    await expect.poll(() => page.locator(`#cell-${cellId} .sync-state`).isHidden()).toBe(true);
    await expect.poll(() => page.locator('#status .connection').textContent()).toBe('live');
  });
});
