import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BrowserContext, Page } from 'playwright-core';
import { afterEach, describe, expect, it } from 'vitest';
import { startUserSession, type ToolOutcome, type UserSession, waitFor } from './support/index.js';
import { useChromium } from './support/use-chromium.js';

/**
 * Comments on cells (issue 47): threads an agent (through the shipped proxy, as a user runs it:
 * fresh HOME, nothing pre-started) and a person on the live page (headless Chromium) hold on a
 * cell, kept beside the notebook and never in it, authored by the peer that wrote them, surviving
 * a killed daemon, and told to the agents that did not write them.
 */

const browser = useChromium();

/** Where the README's picture of an open thread goes (docs/images with NTERACT_UPDATE_SCREENSHOTS=1). */
const images =
  process.env.NTERACT_UPDATE_SCREENSHOTS === '1'
    ? fileURLToPath(new URL('../docs/images/', import.meta.url))
    : undefined;

const sessions: UserSession[] = [];
const contexts: BrowserContext[] = [];
afterEach(async () => {
  for (const context of contexts.splice(0)) await context.close();
  // Joined sessions first: the first one's stop ends the daemon and removes the dirs.
  for (const session of sessions.splice(0).reverse()) await session.stop();
});

async function start(options: Parameters<typeof startUserSession>[0] = {}): Promise<UserSession> {
  const session = await startUserSession(options);
  sessions.push(session);
  return session;
}

/** A call that must succeed; its outcome. */
async function ok(session: UserSession, name: string, args: Record<string, unknown> = {}): Promise<ToolOutcome> {
  const outcome = await session.call(name, args);
  expect(outcome.isError, `${name}: ${outcome.text}`).toBe(false);
  return outcome;
}

interface ThreadJson {
  thread_id: string;
  /** The sidecar file's name for it. */
  id?: string;
  cell_id: string;
  resolved: boolean;
  resolved_by?: string;
  orphaned?: boolean;
  range?: { start: number; end: number; quote: string; state: string };
  messages: { author: string; text: string; at: string }[];
}

async function threads(session: UserSession, args: Record<string, unknown> = {}): Promise<ThreadJson[]> {
  return (await ok(session, 'list_comments', { include_resolved: true, ...args })).json?.threads as ThreadJson[];
}

/** The change notes of an answer (the lines the child adds after the tool's own text). */
function notes(outcome: ToolOutcome): string[] {
  return outcome.texts.filter((text) => text.startsWith('[nteract] '));
}

/** A person in a browser of their own, on the page the agent shows them. */
async function personOn(session: UserSession, name: string): Promise<Page> {
  const shown = await ok(session, 'show_notebook');
  const url = new URL(shown.texts[0]?.split('\n')[0] ?? '');
  url.searchParams.set('name', name);
  const context = await browser().newContext({ viewport: { width: 1000, height: 800 } });
  contexts.push(context);
  const page = await context.newPage();
  await page.goto(url.toString());
  return page;
}

describe('comments on cells', () => {
  it('an agent and a person on the page hold a thread: comment, reply, resolve, reopen; the .ipynb never changes', {
    timeout: 240_000,
  }, async () => {
    const session = await start();
    const path = join(session.dirs.project, 'talk.ipynb');
    await ok(session, 'connect_notebook', { path });
    const cellId = String((await ok(session, 'create_cell', { source: 'total = 3\nprint(total)' })).json?.cell_id);
    await ok(session, 'save_notebook');
    const before = readFileSync(path);
    const page = await personOn(session, 'Ada');
    const cell = page.locator(`#cell-${cellId}`);
    await cell.waitFor();

    // The agent comments on `total` in line 1: the page shows the thread on the cell.
    const added = await ok(session, 'add_comment', {
      cell_id: cellId,
      text: 'Why is the total hard-coded?',
      range: { start: 0, end: 5 },
    });
    const thread = added.json?.thread as ThreadJson;
    expect(thread.messages[0]?.author).toMatch(/agent:claude-code:/);
    expect(thread.range).toMatchObject({ quote: 'total', state: 'intact' });
    const toggle = cell.getByRole('button', { name: /Comments: 1 open thread/ });
    await toggle.waitFor();
    await toggle.click();
    const shown = cell.locator(`.comment-thread[data-thread-id="${thread.thread_id}"]`);
    await expect.poll(() => shown.locator('.comment-body').first().textContent()).toBe('Why is the total hard-coded?');
    expect(await shown.locator('.comment-author').first().textContent()).toMatch(/agent:claude-code:/);

    // She replies on the page: the agent's next answer says so once, and lists her reply as hers.
    await shown;
    // Typed key by key, as she would: the page's command keys (a, b, d d…) leave the box alone.
    await shown.getByRole('textbox', { name: 'Reply to this thread' }).click();
    await page.keyboard.type('It comes from the invoice; I will read it in.');
    await shown.getByRole('button', { name: 'Reply' }).click();
    await expect.poll(() => shown.locator('.comment-body').count()).toBe(2);
    const told = await waitFor('a change note of her reply', async () => {
      const outcome = await ok(session, 'list_comments', { cell_id: cellId });
      return notes(outcome).some((note) => note.includes('human:Ada replied')) ? outcome : undefined;
    });
    const listed = (told.json?.threads as ThreadJson[] | undefined)?.[0];
    expect(listed?.messages.map((message) => [message.author, message.text])).toEqual([
      [expect.stringMatching(/agent:claude-code:/), 'Why is the total hard-coded?'],
      ['human:Ada', 'It comes from the invoice; I will read it in.'],
    ]);
    expect(notes(await ok(session, 'list_comments'))).toEqual([]);

    if (images) {
      mkdirSync(images, { recursive: true });
      // The pointer off the cell: its toolbar shows on hover only.
      await page.mouse.move(0, 0);
      await cell.screenshot({ path: join(images, 'comments-thread.png') });
    }

    // She resolves it: the agent sees it resolved, by her.
    await shown.getByRole('button', { name: 'Resolve' }).click();
    await waitFor('the thread resolved', async () => {
      const [now] = await threads(session);
      return now?.resolved ? now : undefined;
    }).then((now) => expect(now.resolved_by).toBe('human:Ada'));
    expect(await threads(session, { include_resolved: false })).toEqual([]);
    await expect.poll(() => shown.getAttribute('class')).toContain('resolved');

    // The agent reopens it: the page shows it open again.
    await ok(session, 'reopen_comment', { thread_id: thread.thread_id });
    await expect.poll(() => shown.getAttribute('class')).not.toContain('resolved');
    await expect.poll(() => shown.getByRole('button', { name: 'Resolve' }).isVisible()).toBe(true);

    // She starts a thread of her own on the page: the agent is told, and lists it as hers.
    await cell.getByRole('textbox', { name: 'New comment on this cell' }).click();
    await page.keyboard.type('Also: print the currency.');
    await cell.getByRole('button', { name: 'Comment', exact: true }).click();
    await expect.poll(() => cell.locator('.comment-thread').count()).toBe(2);
    const started = await waitFor('a change note of her new thread', async () => {
      const outcome = await ok(session, 'list_comments');
      return notes(outcome).some((note) => note.includes('human:Ada started')) ? outcome : undefined;
    });
    expect(((started.json?.threads ?? []) as ThreadJson[]).map((one) => one.messages[0]?.author)).toEqual([
      expect.stringMatching(/agent:claude-code:/),
      'human:Ada',
    ]);

    // Refusals change nothing and say why.
    const unknownThread = await session.call('reply_comment', { thread_id: 't-nothere', text: 'hello' });
    expect(unknownThread.isError).toBe(true);
    expect(unknownThread.text).toContain("no comment thread 't-nothere'");
    const unknownCell = await session.call('add_comment', { cell_id: 'no-such-cell', text: 'hello' });
    expect(unknownCell.isError).toBe(true);
    expect(unknownCell.text).toContain("no cell 'no-such-cell'");
    const tooLong = await session.call('reply_comment', { thread_id: thread.thread_id, text: 'x'.repeat(4001) });
    expect(tooLong.isError).toBe(true);
    expect(tooLong.text).toContain('at most 4000 characters');
    expect((await threads(session)).map((one) => one.messages.length)).toEqual([2, 1]);

    // The notebook file is what it was before any comment, after a save and the autosave; the
    // comments are in the sidecar beside it.
    await ok(session, 'save_notebook');
    expect(readFileSync(path).equals(before)).toBe(true);
    const sidecar = `${path}.comments.json`;
    await waitFor('the sidecar written', async () =>
      existsSync(sidecar) && readFileSync(sidecar, 'utf8').includes('It comes from the invoice') ? true : undefined,
    );
    await ok(session, 'set_cell', { cell_id: cellId, source: 'total = read_invoice()\nprint(total)' });
    await ok(session, 'save_notebook');
    const edited = readFileSync(path, 'utf8');
    expect(edited).not.toContain('invoice;');
    expect(edited).not.toContain('hard-coded');
    // The range follows the cell's source: intact while its text is there, vanished once it is gone.
    expect((await threads(session))[0]?.range?.state).toBe('intact');
    await ok(session, 'set_cell', { cell_id: cellId, source: 'x = 1\nprint(x)' });
    expect((await threads(session))[0]?.range?.state).toBe('vanished');
  });

  it('keeps every thread and message through a daemon SIGKILL (journaled before each answer)', {
    timeout: 180_000,
  }, async () => {
    const session = await start();
    const path = join(session.dirs.project, 'kept.ipynb');
    await ok(session, 'connect_notebook', { path });
    const first = String((await ok(session, 'create_cell', { source: 'a = 1' })).json?.cell_id);
    const second = String((await ok(session, 'create_cell', { source: 'b = 2' })).json?.cell_id);
    await ok(session, 'save_notebook');
    const one = (await ok(session, 'add_comment', { cell_id: first, text: 'first thread' })).json?.thread as ThreadJson;
    await ok(session, 'reply_comment', { thread_id: one.thread_id, text: 'a reply' });
    const two = (await ok(session, 'add_comment', { cell_id: second, text: 'second thread' })).json
      ?.thread as ThreadJson;
    await ok(session, 'resolve_comment', { thread_id: two.thread_id });
    // At once: the sidecar is written a moment after a change, the journal before its answer. What
    // the sidecar held then lacks the resolve (its write was still a second away): that comes back
    // from the journal alone.
    await session.faults.killDaemon();
    const sidecar = `${path}.comments.json`;
    const atKill = existsSync(sidecar)
      ? (JSON.parse(readFileSync(sidecar, 'utf8')) as { threads: ThreadJson[] })
      : undefined;
    expect(atKill?.threads.find((thread) => thread.id === two.thread_id)?.resolved ?? false).toBe(false);

    let kept: ThreadJson[] = [];
    await waitFor('the daemon back with the comments', async () => {
      const outcome = await session.call('list_comments', { include_resolved: true });
      if (outcome.isError) return undefined;
      kept = outcome.json?.threads as ThreadJson[];
      return true;
    });
    expect(kept.map((thread) => [thread.cell_id, thread.resolved, thread.messages.map((m) => m.text)])).toEqual([
      [first, false, ['first thread', 'a reply']],
      [second, true, ['second thread']],
    ]);
    expect(readFileSync(path, 'utf8')).not.toContain('first thread');
  });

  it('a comment by agent A is seen by agent B with A as its author, and told to B once', {
    timeout: 180_000,
  }, async () => {
    const alpha = await start({ clientInfo: { name: 'alpha-agent', title: 'Alpha', version: '1.0.0' } });
    const beta = await start({ joining: alpha, clientInfo: { name: 'beta-agent', title: 'Beta', version: '1.0.0' } });
    const path = join(alpha.dirs.project, 'shared.ipynb');
    await ok(alpha, 'connect_notebook', { path });
    const cellId = String((await ok(alpha, 'create_cell', { source: 'rate = 0.2' })).json?.cell_id);
    await ok(beta, 'connect_notebook', { path });
    const added = (await ok(alpha, 'add_comment', { cell_id: cellId, text: 'Is 0.2 the right rate?' })).json
      ?.thread as ThreadJson;
    expect(added.messages[0]?.author).toMatch(/agent:alpha-agent:/);

    const told = await waitFor('beta told of alpha’s comment', async () => {
      const outcome = await ok(beta, 'list_comments');
      const note = notes(outcome).find((line) => line.includes('agent:alpha-agent:') && line.includes('started'));
      return note === undefined ? undefined : outcome;
    });
    const seen = (told.json?.threads as ThreadJson[] | undefined)?.[0];
    expect(seen?.messages[0]).toMatchObject({
      author: expect.stringMatching(/agent:alpha-agent:/),
      text: 'Is 0.2 the right rate?',
    });
    expect(notes(await ok(beta, 'list_comments'))).toEqual([]);

    // B answers; A hears of it with B's name, and A's own changes are never told back to A.
    await ok(beta, 'reply_comment', { thread_id: added.thread_id, text: 'Yes, per the 2026 table.' });
    await waitFor('alpha told of beta’s reply', async () => {
      const outcome = await ok(alpha, 'list_comments');
      return notes(outcome).some((note) => note.includes('agent:beta-agent:') && note.includes('replied'))
        ? true
        : undefined;
    });
    const last = (await threads(alpha))[0]?.messages.at(-1);
    expect(last?.author).toMatch(/agent:beta-agent:/);
  });
});
