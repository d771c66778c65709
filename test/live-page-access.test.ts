import { chmodSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterEach, describe, expect, it } from 'vitest';
import { startUserSession, type UserSession, waitFor } from './support/index.js';
import { useChromium } from './support/use-chromium.js';

/**
 * The live page attacked from the side, as the issue found it open: another web server on
 * 127.0.0.1 (another port: a dev server the person visits, or one a Markdown link points to),
 * another page of the browser, a second daemon's page in the same browser, another local user
 * reading process arguments. Real processes: the shipped bins in a fresh HOME, headless Chromium.
 */
const browser = useChromium();
const sessions: UserSession[] = [];
const servers: Server[] = [];

afterEach(async () => {
  for (const server of servers.splice(0)) await new Promise((resolve) => server.close(resolve));
  for (const session of sessions.splice(0)) await session.stop();
});

/** A session with a notebook of one cell; the page's launch address from show_notebook. */
async function notebookSession(source: string): Promise<{ session: UserSession; notebookId: string; url: URL }> {
  const session = await startUserSession();
  sessions.push(session);
  const created = await session.call('create_notebook');
  expect(created.isError, created.text).toBe(false);
  const made = await session.call('create_cell', { source });
  expect(made.isError, made.text).toBe(false);
  const shown = await session.call('show_notebook');
  expect(shown.isError, shown.text).toBe(false);
  return { session, notebookId: String(created.json?.notebook_id), url: new URL(shown.texts[0]?.split('\n')[0] ?? '') };
}

/** Another local web server (another port of 127.0.0.1): records what every request carried, serves `html`. */
async function otherLocalServer(html: string): Promise<{ origin: string; seen: IncomingHttpHeaders[] }> {
  const seen: IncomingHttpHeaders[] = [];
  const server = createServer((request, response) => {
    seen.push(request.headers);
    response.writeHead(200, { 'content-type': 'text/html' });
    response.end(html);
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

/** How many peers the daemon's room has (status --json). */
async function activePeers(session: UserSession): Promise<number> {
  const status = JSON.parse((await session.runtimed(['status', '--json'])).stdout);
  return (status.rooms as { active_peers: number }[])[0]?.active_peers ?? 0;
}

async function pageShows(page: Page, text: string): Promise<void> {
  await expect.poll(() => page.locator('main').textContent(), { timeout: 30_000 }).toContain(text);
}

describe('the live page, attacked from the side', () => {
  it('gives another local server nothing it can use, joins nobody on a GET, keeps two daemons apart and the launch address out of history', {
    timeout: 240_000,
  }, async () => {
    const { session, notebookId, url } = await notebookSession('secret_plan = 42');
    const daemonOrigin = url.origin;
    const context = await browser().newContext();
    const page = await context.newPage();
    await page.goto(url.toString());
    await pageShows(page, 'secret_plan = 42');
    // Finding 3: the launch code left the address, and it is spent.
    expect(page.url()).toBe(`${daemonOrigin}/notebooks/${notebookId}`);
    const reused = await fetch(`${daemonOrigin}/api/session`, {
      method: 'POST',
      headers: { origin: daemonOrigin, 'content-type': 'application/json' },
      body: JSON.stringify({ launch: url.hash.replace('#launch=', '') }),
    });
    expect(reused.status).toBe(403);
    await waitFor('the page in the room', async () => (await activePeers(session)) === 2);

    // Findings 1 and 4: the person visits another local server, whose page tries the daemon: an
    // image that opens the event stream as "Mallory", a cross-origin read, a form that posts an edit.
    const target = `${daemonOrigin}/api/notebooks/${notebookId}`;
    const attacker = await otherLocalServer(`<!doctype html><body>
<img src="${target}/events?name=Mallory">
<form id="f" method="post" action="${target}/requests" enctype="text/plain">
<input name='{"type":"insert_cell","index":0,"source":"import os; os.system(\\"touch pwned\\")","x":"' value='"}'></form>
<script>
fetch('${daemonOrigin}/api/rooms', { credentials: 'include' }).then((r) => r.status, (e) => 'blocked').then((s) => { document.title = 'read ' + s; document.getElementById('f').submit(); });
</script></body>`);
    const other = await context.newPage();
    await other.goto(`${attacker.origin}/`);
    await other.waitForLoadState('networkidle');
    // The other server received no cookie, no authorization: nothing of the daemon's.
    expect(attacker.seen.length).toBeGreaterThan(0);
    for (const headers of attacker.seen) {
      expect(headers.cookie).toBeUndefined();
      expect(headers.authorization).toBeUndefined();
    }
    // It tries the API with whatever it got (every header the browser sent it): refused.
    for (const headers of attacker.seen) {
      const { host: _host, ...replayed } = headers as Record<string, string>;
      const answer = await fetch(`${daemonOrigin}/api/rooms`, { headers: replayed });
      expect(answer.status).toBe(401);
    }
    // Nobody joined, nothing was inserted, no file was made.
    expect(await activePeers(session)).toBe(2);
    const cells = await session.call('get_all_cells', { format: 'json' });
    expect(cells.text).not.toContain('pwned');
    expect(cells.text).toContain('secret_plan');

    // Finding 5: a second daemon's page in the same browser; both keep working.
    const second = await notebookSession('second_daemon = True');
    expect(second.url.origin).not.toBe(daemonOrigin);
    const secondPage = await context.newPage();
    await secondPage.goto(second.url.toString());
    await pageShows(secondPage, 'second_daemon = True');
    const read = (where: Page) =>
      where.evaluate(`(async () => {
        const session = localStorage.getItem('runtimed-session') ?? '';
        return (await fetch('/api/rooms', { headers: { authorization: 'Bearer ' + session } })).status;
      })()`);
    expect([await read(page), await read(secondPage)]).toEqual([200, 200]);
    // The person's edit on the first page still goes through (its session was not overwritten).
    await page.locator('button.add-cell.code').click();
    await waitFor('the page’s new cell in the notebook', async () => {
      const listed = await session.call('get_all_cells', { format: 'json' });
      return (listed.json?.cells as unknown[] | undefined)?.length === 2;
    });
    await context.close();
  });

  it('runtimed open gives the browser no token and no launch code in its arguments', { timeout: 120_000 }, async () => {
    const { session, notebookId } = await notebookSession('x = 1');
    // A stub xdg-open that records its arguments, as another local user could read them in /proc.
    const bin = join(session.dirs.home, 'bin');
    const record = join(session.dirs.home, 'xdg-open-argv');
    mkdirSync(bin, { recursive: true });
    writeFileSync(join(bin, 'xdg-open'), `#!/bin/sh\nprintf '%s\\n' "$@" > '${record}'\n`);
    chmodSync(join(bin, 'xdg-open'), 0o755);
    const opened = await session.runtimed(['open', notebookId], {
      PATH: `${bin}:${process.env.PATH}`,
      DISPLAY: ':99',
    });
    expect(opened.code, opened.stderr).toBe(0);
    await waitFor('xdg-open to run', () => {
      try {
        return readFileSync(record, 'utf8').length > 0;
      } catch {
        return false;
      }
    });
    const argv = readFileSync(record, 'utf8').trim();
    expect(argv).not.toContain('launch=');
    expect(argv).not.toMatch(/[0-9a-f]{64}/);
    expect(argv).not.toContain('token');
    // It names a file only the user reads, which sends the browser to a launch address.
    const file = argv.replace(/^file:\/\//, '');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const launch = /#launch=([\w.-]+)/.exec(readFileSync(file, 'utf8'))?.[1];
    expect(launch).toBeDefined();
    const context = await browser().newContext();
    const page = await context.newPage();
    await page.goto(`file://${file}`);
    await pageShows(page, 'x = 1');
    expect(page.url()).not.toContain('launch=');
    await context.close();
  });
});
