import { request as httpRequest } from 'node:http';
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
 * A request as a browser sends it to `url` (Host from the URL unless `headers` says otherwise),
 * with `cookie` when given; a POST when `body` is given.
 */
function get(url: string, cookie?: string, headers: Record<string, string> = {}, body?: unknown): Promise<Answer> {
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
          ...(cookie ? { cookie } : {}),
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

describe('the daemon web page, as a user reaches it', () => {
  it('is listed by runtimed status, opened by runtimed open with its token, and follows the agent live', {
    timeout: 120_000,
  }, async () => {
    const session = await startUserSession();
    sessions.push(session);
    const created = await session.call('create_notebook');
    expect(created.isError, created.text).toBe(false);
    // The agent is told where its person can watch, without the address (its token).
    expect(String(created.json?.live_page)).toContain('show_notebook');
    const notebookId = String(created.json?.notebook_id);
    await session.call('create_cell', { source: 'first = 1' });

    const status = await session.runtimed(['status']);
    expect(status.stdout).toMatch(/^page: http:\/\/127\.0\.0\.1:\d+\/ \('runtimed open' prints it with its token\)$/m);
    // The token is for the user who asks: status never shows it.
    const opened = await session.runtimed(['open', notebookId]);
    expect(opened.code, opened.stderr).toBe(0);
    const url = opened.stdout.trim();
    expect(url).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:\\d+/notebooks/${notebookId}\\?token=[0-9a-f]{64}$`));
    const token = new URL(url).searchParams.get('token') as string;
    expect(status.stdout).not.toContain(token);
    expect(session.stderr()).not.toContain(token);

    const adopted = await get(url);
    expect(adopted.status).toBe(303);
    const cookie = String(adopted.headers['set-cookie']).split(';')[0] as string;
    const origin = new URL(url).origin;
    expect((await get(`${origin}/notebooks/${notebookId}`)).status).toBe(403);
    expect((await get(`${origin}/notebooks/${notebookId}`, cookie)).status).toBe(200);
    // The client the daemon serves is the one built into @nteract-mcp/daemon's dist/page/, found
    // from the shipped bins: a bundled script and stylesheet, and their licence notices.
    const script = await get(`${origin}/assets/live-page.js`, cookie);
    expect(script.status, script.body.slice(0, 200)).toBe(200);
    expect(script.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(script.body).toContain('For license information please see live-page.js.LEGAL.txt');
    expect((await get(`${origin}/assets/live-page.css`, cookie)).headers['content-type']).toBe(
      'text/css; charset=utf-8',
    );
    const notices = await get(`${origin}/assets/live-page.js.LEGAL.txt`, cookie);
    expect(notices.status).toBe(200);
    expect(notices.body).toMatch(/codemirror[\s\S]*MIT/);
    const notebook = JSON.parse((await get(`${origin}/api/notebooks/${notebookId}`, cookie)).body);
    expect(notebook.cells.map((cell: { source: string }) => cell.source)).toEqual(['first = 1']);

    // The page's stream: the agent's next edit arrives without a reload.
    const received: string[] = [];
    const target = new URL(`${origin}/api/notebooks/${notebookId}/events`);
    const stream = httpRequest({
      host: target.hostname,
      port: target.port,
      path: target.pathname,
      headers: { host: target.host, cookie },
    });
    stream.on('response', (response) =>
      response.setEncoding('utf8').on('data', (chunk: string) => received.push(chunk)),
    );
    stream.end();
    await waitFor('the page to join the room', async () => {
      const rooms = (await session.runtimed(['status', '--json'])).stdout;
      return (JSON.parse(rooms).rooms as { active_peers: number }[])[0]?.active_peers === 2;
    });
    const seen = await session.call('create_cell', { source: 'seen = "live"' });
    await waitFor('the edit on the page stream', () => received.join('').includes('seen = \\"live\\"'));

    // The person's edit, as the page sends it (its own peer, named by the stream's hello): the
    // agent's next read has it, naming her. A foreign Origin, a foreign Host (DNS rebinding) and a
    // request without the cookie are refused and change nothing.
    const pagePeer = JSON.parse(/event: hello\ndata: (.*)\n/.exec(received.join(''))?.[1] as string).peer_id;
    const cellId = String(seen.json?.cell_id);
    const requests = `${origin}/api/notebooks/${notebookId}/requests`;
    const edit = (source: string) => ({ type: 'update_cell', cell_id: cellId, source, idempotency_key: source });
    const refused = [
      await get(requests, cookie, { origin: 'http://evil.example', 'x-runtimed-peer': pagePeer }, edit('evil = 1')),
      await get(
        requests,
        cookie,
        { host: `evil.example:${target.port}`, origin, 'x-runtimed-peer': pagePeer },
        edit('evil = 2'),
      ),
      await get(requests, undefined, { origin, 'x-runtimed-peer': pagePeer }, edit('evil = 3')),
      await get(`${origin}/api/rooms`, cookie, { host: `evil.example:${target.port}` }),
    ];
    expect(refused.map((answer) => answer.status)).toEqual([403, 403, 403, 403]);
    const made = await get(requests, cookie, { origin, 'x-runtimed-peer': pagePeer }, edit('seen = "by a person"'));
    expect(made.status, made.body).toBe(200);
    const read = await session.call('get_cell', { cell_id: cellId });
    expect(read.json).toMatchObject({ source: 'seen = "by a person"', edited_by: 'human' });
    stream.destroy();

    expect((await session.runtimed(['open', '/nowhere/missing.ipynb'])).code).toBe(1);

    // The agent's way to the same page: show_notebook, for the active notebook or a given one.
    const shown = await session.call('show_notebook');
    expect(shown.isError, shown.text).toBe(false);
    expect(shown.texts[0]?.split('\n')[0]).toBe(url);
    const unknown = await session.call('show_notebook', { notebook_id: '00000000-0000-4000-8000-000000000000' });
    expect(unknown.isError).toBe(true);
    expect(unknown.text).toContain('is not open in the local daemon');
  });
});
