import { readdirSync, readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startUserSession, type UserSession, waitFor } from './support/index.js';

const sessions: UserSession[] = [];
afterEach(async () => {
  for (const session of sessions.splice(0)) await session.stop();
});

interface Answer {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: string;
}

/**
 * A request as a browser sends it to `url` (Host from the URL unless `headers` says otherwise);
 * a POST when `body` is given.
 */
function get(url: string, headers: Record<string, string> = {}, body?: unknown): Promise<Answer> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const sent = httpRequest(
      {
        host: target.hostname,
        port: target.port,
        path: `${target.pathname}${target.search}`,
        method: body === undefined ? 'GET' : 'POST',
        headers: {
          host: target.host,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          ...headers,
        },
      },
      (response) => {
        let body = '';
        response.setEncoding('utf8').on('data', (chunk: string) => {
          body += chunk;
        });
        response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body }));
      },
    );
    sent.on('error', reject);
    sent.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

/** What the page's script does with a launch address: posts its code for a session. */
async function launch(url: string): Promise<Answer> {
  const target = new URL(url);
  const code = new URLSearchParams(target.hash.slice(1)).get('launch');
  return get(`${target.origin}/api/session`, { origin: target.origin }, { launch: code });
}

describe('the daemon web page, as a user reaches it', () => {
  it('is listed by runtimed status, opened once by the address runtimed open gives, and follows the agent live', {
    timeout: 120_000,
  }, async () => {
    const session = await startUserSession();
    sessions.push(session);
    const created = await session.call('create_notebook');
    expect(created.isError, created.text).toBe(false);
    // The agent is told where its person can watch, without an address.
    expect(String(created.json?.live_page)).toContain('show_notebook');
    const notebookId = String(created.json?.notebook_id);
    await session.call('create_cell', { source: 'first = 1' });

    const status = await session.runtimed(['status']);
    expect(status.stdout).toMatch(/^page: http:\/\/127\.0\.0\.1:\d+\/ /m);
    const opened = await session.runtimed(['open', notebookId]);
    expect(opened.code, opened.stderr).toBe(0);
    const url = opened.stdout.trim().split('\n')[0] as string;
    // The code is in the fragment (a browser never sends it to a server); no token anywhere.
    expect(url).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:\\d+/notebooks/${notebookId}#launch=[\\w.-]+$`));
    const pageRecord = readdirSync(session.dirs.runtime, { recursive: true }).find((name) =>
      String(name).endsWith('page.json'),
    );
    const token = JSON.parse(readFileSync(join(session.dirs.runtime, String(pageRecord)), 'utf8')).token as string;
    expect(token).toMatch(/^[0-9a-f]{64}$/);
    for (const text of [url, status.stdout, opened.stdout, session.stderr()]) expect(text).not.toContain(token);

    const origin = new URL(url).origin;
    const launched = await launch(url);
    expect(launched.status, launched.body).toBe(200);
    const bearer = { authorization: `Bearer ${JSON.parse(launched.body).session}` };
    // The address opens the page once: a copy in history or in a process's arguments is spent.
    const again = await launch(url);
    expect(again.status).toBe(403);
    expect(JSON.parse(again.body).message).toContain('was used already');
    // The shell and its script are the same for anyone and hold nothing of the notebook; the API
    // needs the session, which no browser sends by itself.
    const shell = await get(`${origin}/notebooks/${notebookId}`);
    expect(shell.status).toBe(200);
    expect(shell.body).not.toContain('first = 1');
    expect((await get(`${origin}/api/notebooks/${notebookId}`)).status).toBe(401);
    // The client the daemon serves is the one built into @nteract-mcp/daemon's dist/page/, found
    // from the shipped bins: a bundled script and stylesheet, and their licence notices.
    const script = await get(`${origin}/assets/live-page.js`);
    expect(script.status, script.body.slice(0, 200)).toBe(200);
    expect(script.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(script.body).toContain('For license information please see live-page.js.LEGAL.txt');
    expect((await get(`${origin}/assets/live-page.css`)).headers['content-type']).toBe('text/css; charset=utf-8');
    const notices = await get(`${origin}/assets/live-page.js.LEGAL.txt`);
    expect(notices.status).toBe(200);
    expect(notices.body).toMatch(/codemirror[\s\S]*MIT/);
    const notebook = JSON.parse((await get(`${origin}/api/notebooks/${notebookId}`, bearer)).body);
    expect(notebook.cells.map((cell: { source: string }) => cell.source)).toEqual(['first = 1']);

    // The page's stream (a POST: joining the room is a change): the agent's next edit arrives
    // without a reload. A name with an apostrophe is a name.
    const received: string[] = [];
    let streamEnded = false;
    const target = new URL(`${origin}/api/notebooks/${notebookId}/events`);
    const stream = httpRequest({
      host: target.hostname,
      port: target.port,
      path: target.pathname,
      method: 'POST',
      headers: { host: target.host, origin, 'content-type': 'application/json', ...bearer },
    });
    stream.on('response', (response) => {
      response.setEncoding('utf8').on('data', (chunk: string) => received.push(chunk));
      response.on('end', () => {
        streamEnded = true;
      });
    });
    stream.end(JSON.stringify({ name: "Ada O'Brien" }));
    await waitFor('the page to join the room', async () => {
      const rooms = (await session.runtimed(['status', '--json'])).stdout;
      return (JSON.parse(rooms).rooms as { active_peers: number }[])[0]?.active_peers === 2;
    });
    const seen = await session.call('create_cell', { source: 'seen = "live"' });
    await waitFor('the edit on the page stream', () => received.join('').includes('seen = \\"live\\"'));

    // The person's edit, as the page sends it (its own peer, named by the stream's hello): the
    // agent's next read has it, naming her. A foreign Origin, a foreign Host (DNS rebinding) and a
    // request without the session are refused and change nothing.
    const hello = JSON.parse(/event: hello\ndata: (.*)\n/.exec(received.join(''))?.[1] as string);
    expect(hello.label).toBe("human:Ada O'Brien");
    const pagePeer = hello.peer_id;
    const cellId = String(seen.json?.cell_id);
    const requests = `${origin}/api/notebooks/${notebookId}/requests`;
    const edit = (source: string) => ({ type: 'update_cell', cell_id: cellId, source, idempotency_key: source });
    const refused = [
      await get(requests, { ...bearer, origin: 'http://evil.example', 'x-runtimed-peer': pagePeer }, edit('evil = 1')),
      await get(
        requests,
        { ...bearer, host: `evil.example:${target.port}`, origin, 'x-runtimed-peer': pagePeer },
        edit('evil = 2'),
      ),
      await get(requests, { origin, 'x-runtimed-peer': pagePeer }, edit('evil = 3')),
      await get(`${origin}/api/rooms`, { ...bearer, host: `evil.example:${target.port}` }),
    ];
    expect(refused.map((answer) => answer.status)).toEqual([403, 403, 401, 403]);
    const made = await get(requests, { ...bearer, origin, 'x-runtimed-peer': pagePeer }, edit('seen = "by a person"'));
    expect(made.status, made.body).toBe(200);
    const read = await session.call('get_cell', { cell_id: cellId });
    expect(read.json).toMatchObject({ source: 'seen = "by a person"', edited_by: "human:Ada O'Brien" });
    expect(JSON.stringify(read.json)).not.toContain('evil');

    // `runtimed page --rotate`: every session so far is refused and its stream ends.
    const rotated = await session.runtimed(['page', '--rotate']);
    expect(rotated.code, rotated.stderr).toBe(0);
    expect((await get(`${origin}/api/rooms`, bearer)).status).toBe(401);
    await waitFor('the stream to end', () => streamEnded);
    stream.destroy();

    expect((await session.runtimed(['open', '/nowhere/missing.ipynb'])).code).toBe(1);

    // The agent's way to the same page: show_notebook, for the active notebook or a given one,
    // a new address each time (each opens the page once).
    const shown = await session.call('show_notebook');
    expect(shown.isError, shown.text).toBe(false);
    const shownUrl = shown.texts[0]?.split('\n')[0] as string;
    expect(shownUrl).toMatch(new RegExp(`^${origin}/notebooks/${notebookId}#launch=`));
    expect(shownUrl).not.toBe(url);
    expect((await launch(shownUrl)).status).toBe(200);
    const unknown = await session.call('show_notebook', { notebook_id: '00000000-0000-4000-8000-000000000000' });
    expect(unknown.isError).toBe(true);
    expect(unknown.text).toContain('is not open in the local daemon');
  });
});
