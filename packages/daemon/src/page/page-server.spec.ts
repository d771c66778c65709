import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { request as httpRequest, type OutgoingHttpHeaders } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RecordingLogger } from '@nteract-mcp/foundation/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { NotebookRoom } from '../room/notebook-room.js';
import type { RoomCatalog } from '../room/room-catalog.js';
import type { RoomPeer } from '../room/room-peers.js';
import { createKernellessCatalog } from '../testing/test-room-settings.js';
import { PageServer } from './page-server.js';

let dir: string;
let catalog: RoomCatalog;
let page: PageServer;
const token = 'c'.repeat(64);
/** What the daemon answers the page server's refusal check with (`undefined`: it acts). */
let refusing: string | undefined;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'page-'));
  const logger = new RecordingLogger();
  catalog = await createKernellessCatalog(dir, logger);
  refusing = undefined;
  page = await PageServer.start({ catalog, logger, token, refusal: () => refusing });
});

afterEach(async () => {
  await page.stop();
  await catalog.closeAll('the test ended');
  rmSync(dir, { recursive: true, force: true });
});

interface Answer {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: string;
  readonly bytes: Buffer;
}

interface Sent {
  readonly method?: string;
  /** Sent as `Authorization: Bearer <session>`, as the page's script does. */
  readonly session?: string;
  readonly host?: string;
  readonly origin?: string;
  readonly headers?: Record<string, string>;
  /** A JSON body (a string is sent as it is). */
  readonly body?: unknown;
  readonly port?: number;
}

/** One request to the page server (`page`, or the one on `port`). */
function send(path: string, sent: Sent = {}): Promise<Answer> {
  const port = sent.port ?? page.port;
  const headers: OutgoingHttpHeaders = { host: sent.host ?? `127.0.0.1:${port}`, ...sent.headers };
  if (sent.session !== undefined) headers.authorization = `Bearer ${sent.session}`;
  if (sent.origin !== undefined) headers.origin = sent.origin;
  if (sent.body !== undefined) headers['content-type'] = 'application/json';
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      { host: '127.0.0.1', port, path, method: sent.method ?? 'GET', headers },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => {
          const bytes = Buffer.concat(chunks);
          resolve({ status: response.statusCode ?? 0, headers: response.headers, body: bytes.toString('utf8'), bytes });
        });
      },
    );
    request.on('error', reject);
    request.end(
      sent.body === undefined ? undefined : typeof sent.body === 'string' ? sent.body : JSON.stringify(sent.body),
    );
  });
}

/** A GET, with the page's session if given. */
function get(path: string, options: Omit<Sent, 'method' | 'body'> = {}): Promise<Answer> {
  return send(path, options);
}

/** The page's own Origin. */
function pageOrigin(server: PageServer = page): string {
  return `http://127.0.0.1:${server.port}`;
}

/** The headers of a page's POST as its script sends them: its Origin, its session, its peer id. */
function asPage(session: string, peerId?: string): Record<string, string> {
  const headers: Record<string, string> = { origin: pageOrigin(), authorization: `Bearer ${session}` };
  if (peerId !== undefined) headers['x-runtimed-peer'] = peerId;
  return headers;
}

/** One POST of a JSON body to the page server, with exactly `headers` (besides Host and Content-Type). */
function post(path: string, body: unknown, headers: Record<string, string>): Promise<Answer> {
  return send(path, { method: 'POST', body, headers });
}

/** The launch code in a launch address's fragment. */
function launchCodeOf(url: string): string {
  const code = new URLSearchParams(new URL(url).hash.slice(1)).get('launch');
  if (code === null) throw new Error(`no launch code in ${url}`);
  return code;
}

/** A page session, as a page gets one: posting the code of a launch address to `/api/session`. */
async function openSession(server: PageServer = page): Promise<string> {
  const answer = await send('/api/session', {
    method: 'POST',
    port: server.port,
    origin: pageOrigin(server),
    body: { launch: launchCodeOf(server.launchUrl()) },
  });
  expect(answer.status, answer.body).toBe(200);
  return (JSON.parse(answer.body) as { session: string }).session;
}

interface Stream {
  readonly status: number;
  readonly received: string[];
  /** Whether the server ended the stream. */
  readonly ended: () => boolean;
  readonly close: () => void;
}

/** Opens a notebook's event stream as a page of `session` named `name` does (a POST); what it received, and how to close it. */
async function listen(notebookId: string, session: string, name?: string): Promise<Stream> {
  const received: string[] = [];
  let ended = false;
  let close!: () => void;
  const status = await new Promise<number>((resolve, reject) => {
    const sent = httpRequest(
      {
        host: '127.0.0.1',
        port: page.port,
        method: 'POST',
        path: `/api/notebooks/${notebookId}/events`,
        headers: { host: `127.0.0.1:${page.port}`, 'content-type': 'application/json', ...asPage(session) },
      },
      (response) => {
        response.setEncoding('utf8').on('data', (chunk: string) => received.push(chunk));
        response.on('end', () => {
          ended = true;
        });
        resolve(response.statusCode ?? 0);
      },
    );
    sent.on('error', reject);
    sent.end(name === undefined ? '' : JSON.stringify({ name }));
    close = () => sent.destroy();
  });
  return { status, received, ended: () => ended, close };
}

/** The `hello` a stream opened with (its page's peer). */
async function helloOf(stream: Stream): Promise<{ peer_id: string; label: string; document_version: number }> {
  await expect.poll(() => stream.received.join('')).toContain('event: hello');
  return JSON.parse(/event: hello\ndata: (.*)\n/.exec(stream.received.join(''))?.[1] as string);
}

async function openRoom(): Promise<{ room: NotebookRoom; agent: RoomPeer; agentSaw: Record<string, unknown>[] }> {
  const admission = await catalog.create({ workingDir: dir, ephemeral: true });
  const agentSaw: Record<string, unknown>[] = [];
  const agent: RoomPeer = {
    id: 'agent-1',
    label: 'agent:spec:1',
    send: (frame) => agentSaw.push({ ...frame }),
    disconnect: () => undefined,
  };
  admission.room.addPeer(agent);
  admission.release();
  return { room: admission.room, agent, agentSaw };
}

describe(PageServer, () => {
  it('gives a launch address on 127.0.0.1 with a one-time code in its fragment only; the shell holds no notebook data', async () => {
    const { room, agent } = await openRoom();
    await room.handle(agent, { type: 'insert_cell', source: 'secret = 42' });
    const launch = page.launchUrl(room.notebookId);
    const url = new URL(launch);
    expect(url.host).toBe(`127.0.0.1:${page.port}`);
    expect(url.pathname).toBe(`/notebooks/${room.notebookId}`);
    expect(url.search).toBe('');
    expect(launch).not.toContain(token);
    const code = launchCodeOf(launch);
    // What a browser sends to the server (path and query) carries no credential.
    expect(`${url.pathname}${url.search}`).not.toContain(code);
    expect(new URL(page.launchUrl()).pathname).toBe('/');
    expect(launchCodeOf(page.launchUrl())).not.toBe(code);

    // The shell, to anyone without credentials: the same page for everyone, nothing of the notebook.
    const shell = await get(url.pathname);
    expect(shell.status).toBe(200);
    expect(shell.headers['content-security-policy']).toContain("script-src 'self'");
    expect(shell.headers['set-cookie']).toBeUndefined();
    expect(shell.body).toContain(`data-notebook="${room.notebookId}"`);
    expect(shell.body).toContain('<script type="module" src="/assets/live-page.js"></script>');
    expect(shell.body).not.toContain('secret');
    expect(shell.body).not.toContain(token);
    expect((await get('/')).status).toBe(200);

    // The code gives a session once; a second redeem is refused, saying why.
    const origin = pageOrigin();
    const first = await send('/api/session', { method: 'POST', origin, body: { launch: code } });
    expect(first.status, first.body).toBe(200);
    expect(first.headers['set-cookie']).toBeUndefined();
    const { session } = JSON.parse(first.body) as { session: string };
    expect(typeof session).toBe('string');
    expect(session).not.toContain(token);
    const second = await send('/api/session', { method: 'POST', origin, body: { launch: code } });
    expect(second.status).toBe(403);
    expect((JSON.parse(second.body) as { message: string }).message).toContain('was used already');
    // Refused alike: a forged code, a body without one, one that is no JSON, no Origin, a GET.
    expect((await send('/api/session', { method: 'POST', origin, body: { launch: 'x.y.z' } })).status).toBe(403);
    expect((await send('/api/session', { method: 'POST', origin, body: {} })).status).toBe(403);
    expect((await send('/api/session', { method: 'POST', origin, body: '{not json' })).status).toBe(400);
    const unspent = launchCodeOf(page.launchUrl());
    expect((await send('/api/session', { method: 'POST', body: { launch: unspent } })).status).toBe(403);
    expect((await get('/api/session')).status).toBe(405);
    // Neither spent the code.
    expect((await send('/api/session', { method: 'POST', origin, body: { launch: unspent } })).status).toBe(200);

    // The session reads the notebook.
    const notebook = await get(`/api/notebooks/${room.notebookId}`, { session });
    expect(notebook.status).toBe(200);
    expect(JSON.parse(notebook.body).cells.map((cell: { source: string }) => cell.source)).toEqual(['secret = 42']);
  });

  it('refuses without a session, from another Host or Origin, opens no stream on a GET, and changes nothing', async () => {
    const { room } = await openRoom();
    const session = await openSession();
    const before = room.peerCount;
    expect((await get('/api/rooms')).status).toBe(401);
    expect((await get('/api/rooms', { session: 'not.a-session' })).status).toBe(401);
    expect((await get(`/api/notebooks/${room.notebookId}`)).status).toBe(401);
    expect((await get('/api/rooms', { session, host: 'evil.example' })).status).toBe(403);
    expect((await get('/api/rooms', { session, host: `evil.example:${page.port}` })).status).toBe(403);
    expect((await get('/api/rooms', { session, origin: 'http://evil.example' })).status).toBe(403);
    expect((await get('/', { host: 'evil.example' })).status).toBe(403);
    expect((await get('/api/rooms', { session })).status).toBe(200);

    // A GET opens no stream and adds no peer, even with the session.
    const got = await get(`/api/notebooks/${room.notebookId}/events`, { session });
    expect([404, 405]).toContain(got.status);
    expect(got.headers['content-type']).not.toContain('text/event-stream');
    // A POST without the session, from another Origin or without one: refused.
    const events = `/api/notebooks/${room.notebookId}/events`;
    expect((await post(events, {}, { origin: pageOrigin() })).status).toBe(401);
    expect((await post(events, {}, { origin: 'http://evil.example', authorization: `Bearer ${session}` })).status).toBe(
      403,
    );
    expect((await post(events, {}, { authorization: `Bearer ${session}` })).status).toBe(403);
    expect(room.peerCount).toBe(before);

    expect((await get('/api/notebooks/not-a-notebook', { session })).status).toBe(404);
    // The shell is served for any UUID-shaped id (whether it is open is the API's to say), not for others.
    expect((await get('/notebooks/00000000-0000-0000-0000-000000000000')).status).toBe(200);
    expect((await get('/notebooks/not-a-notebook')).status).toBe(404);
    expect((await get('/api/notebooks/00000000-0000-0000-0000-000000000000', { session })).status).toBe(404);
  });

  it('lists the rooms and gives a notebook as it is now, with its output capability', async () => {
    const { room, agent } = await openRoom();
    const session = await openSession();
    await room.handle(agent, { type: 'insert_cell', source: 'x = 1' });
    const rooms = JSON.parse((await get('/api/rooms', { session })).body) as { rooms: { notebook_id: string }[] };
    expect(rooms.rooms.map((listed) => listed.notebook_id)).toEqual([room.notebookId]);
    const notebook = JSON.parse((await get(`/api/notebooks/${room.notebookId}`, { session })).body);
    expect(notebook.cells.map((cell: { source: string }) => cell.source)).toEqual(['x = 1']);
    expect(notebook.output_capability).toEqual(expect.any(String));
    // Per session.
    const other = JSON.parse((await get(`/api/notebooks/${room.notebookId}`, { session: await openSession() })).body);
    expect(other.output_capability).not.toBe(notebook.output_capability);
  });

  it("streams the room's changes to the page, which is a peer of the room while it listens", async () => {
    const { room, agent } = await openRoom();
    const session = await openSession();
    const stream = await listen(room.notebookId, session);
    expect(stream.status).toBe(200);
    await expect.poll(() => room.peerCount).toBe(2);
    expect(stream.received.join('')).toMatch(/^: open\n\nevent: hello\n/);
    expect((await helloOf(stream)).label).toBe('human');
    await room.handle(agent, { type: 'insert_cell', source: 'shown live' });
    await expect.poll(() => stream.received.join('')).toContain('shown live');
    expect(stream.received.join('')).toContain('"event":"cell_inserted"');
    stream.close();
    await expect.poll(() => room.peerCount).toBe(1);
  });

  it("names the page's peer as the person says (apostrophes too); refuses a name that is not one", async () => {
    const { room } = await openRoom();
    const session = await openSession();
    const stream = await listen(room.notebookId, session, "D'Arcy O’Neil");
    expect((await helloOf(stream)).label).toBe("human:D'Arcy O’Neil");
    const before = room.peerCount;
    for (const name of ['<b>', '', 'x'.repeat(41), 42]) {
      const refused = await post(`/api/notebooks/${room.notebookId}/events`, { name }, asPage(session));
      expect(refused.status, String(name)).toBe(400);
    }
    expect((await post(`/api/notebooks/${room.notebookId}/events`, '{not json', asPage(session))).status).toBe(400);
    const absent = await post('/api/notebooks/00000000-0000-0000-0000-000000000000/events', {}, asPage(session));
    expect(absent.status).toBe(404);
    expect(room.peerCount).toBe(before);
    stream.close();
  });

  it("refuses a person's edit, nothing done, while the daemon must not act (stopping, superseded, just stalled)", async () => {
    const { room } = await openRoom();
    const session = await openSession();
    const hello = await helloOf(await listen(room.notebookId, session, 'Ada'));
    const path = `/api/notebooks/${room.notebookId}/requests`;
    refusing = 'it is stopping';
    const refused = await post(
      path,
      { type: 'insert_cell', source: 'x = 1', idempotency_key: 'r-1' },
      asPage(session, hello.peer_id),
    );
    expect(refused.status).toBe(503);
    expect(JSON.parse(refused.body)).toEqual({
      code: 'shutting_down',
      message: 'This daemon did not apply the request: it is stopping.',
    });
    expect(room.cells()).toEqual([]);
    refusing = undefined;
    const made = await post(
      path,
      { type: 'insert_cell', source: 'x = 1', idempotency_key: 'r-1' },
      asPage(session, hello.peer_id),
    );
    expect(made.status, made.body).toBe(200);
    expect(room.cells().map((cell) => cell.source)).toEqual(['x = 1']);
  });

  it("takes a person's edit as the page's own peer of the room (named), through the room's journaled requests", async () => {
    const { room, agentSaw } = await openRoom();
    const session = await openSession();
    const stream = await listen(room.notebookId, session, 'Ada');
    const hello = await helloOf(stream);
    expect(hello.label).toBe('human:Ada');
    expect(hello.document_version).toBe(room.documentVersion);
    const path = `/api/notebooks/${room.notebookId}/requests`;
    const made = await post(
      path,
      { type: 'insert_cell', source: 'by Ada', idempotency_key: 'ada-1' },
      asPage(session, hello.peer_id),
    );
    expect(made.status, made.body).toBe(200);
    // Sent again with the same key (a retried click): applied once.
    await post(
      path,
      { type: 'insert_cell', source: 'by Ada', idempotency_key: 'ada-1' },
      asPage(session, hello.peer_id),
    );
    expect(room.cells().map((cell) => cell.source)).toEqual(['by Ada']);
    // The agent beside her sees it as any peer's edit.
    expect(agentSaw.some((frame) => frame.event === 'cell_inserted')).toBe(true);

    // Refused, changing nothing: no Origin, a foreign one, no session, no page peer, a bad request.
    const { origin: _origin, ...withoutOrigin } = asPage(session, hello.peer_id);
    expect((await post(path, { type: 'insert_cell', source: 'x' }, withoutOrigin)).status).toBe(403);
    expect(
      (
        await post(
          path,
          { type: 'insert_cell', source: 'x' },
          { ...asPage(session, hello.peer_id), origin: 'http://evil.example' },
        )
      ).status,
    ).toBe(403);
    const { authorization: _authorization, ...withoutSession } = asPage(session, hello.peer_id);
    expect((await post(path, { type: 'insert_cell', source: 'x' }, withoutSession)).status).toBe(401);
    expect((await post(path, { type: 'insert_cell', source: 'x' }, asPage(session, 'nobody'))).status).toBe(409);
    expect((await post(path, { type: 'insert_cell', source: 'x' }, asPage(session))).status).toBe(409);
    const bad = await post(path, { type: 'insert_cell', source: 42 }, asPage(session, hello.peer_id));
    expect(bad.status).toBe(400);
    expect((await post(path, '{not json', asPage(session, hello.peer_id))).status).toBe(400);
    expect(room.cells().map((cell) => cell.source)).toEqual(['by Ada']);
    stream.close();
  });

  it("lets no other session act as a page's peer", async () => {
    const { room, agent } = await openRoom();
    const made = (await room.handle(agent, { type: 'insert_cell', source: 'kept' })) as { cell: { id: string } };
    const session = await openSession();
    const intruder = await openSession();
    const stream = await listen(room.notebookId, session, 'Ada');
    const hello = await helloOf(stream);
    const version = room.documentVersion;
    const requests = `/api/notebooks/${room.notebookId}/requests`;
    const presence = `/api/notebooks/${room.notebookId}/presence`;

    const insert = await post(requests, { type: 'insert_cell', source: 'not hers' }, asPage(intruder, hello.peer_id));
    expect(insert.status).toBe(409);
    const update = await post(
      requests,
      { type: 'update_cell', cell_id: made.cell.id, source: 'changed' },
      asPage(intruder, hello.peer_id),
    );
    expect(update.status).toBe(409);
    expect((await post(presence, { cell_id: made.cell.id }, asPage(intruder, hello.peer_id))).status).toBe(409);
    expect(room.cells().map((cell) => cell.source)).toEqual(['kept']);
    expect(room.documentVersion).toBe(version);
    const activity = JSON.parse((await get(`/api/notebooks/${room.notebookId}/activity`, { session })).body);
    expect(activity.peers.find((peer: { peer_id: string }) => peer.peer_id === hello.peer_id).cell_id).toBeNull();

    // Nor the peer on another notebook.
    const { room: second } = await openRoom();
    const elsewhere = await post(
      `/api/notebooks/${second.notebookId}/requests`,
      { type: 'insert_cell', source: 'x' },
      asPage(session, hello.peer_id),
    );
    expect(elsewhere.status).toBe(409);
    expect(second.cells()).toEqual([]);

    // Its own session may.
    const own = await post(requests, { type: 'insert_cell', source: 'hers' }, asPage(session, hello.peer_id));
    expect(own.status, own.body).toBe(200);
    stream.close();
  });

  it('rotate() ends the open streams and refuses the sessions, capabilities and launch addresses given before', async () => {
    const { room } = await openRoom();
    const session = await openSession();
    const stream = await listen(room.notebookId, session, 'Ada');
    const hello = await helloOf(stream);
    await expect.poll(() => room.peerCount).toBe(2);
    const capability = JSON.parse((await get(`/api/notebooks/${room.notebookId}`, { session })).body).output_capability;
    const unused = launchCodeOf(page.launchUrl(room.notebookId));

    const rotated = page.rotate();
    expect(rotated).not.toBe(token);
    expect(page.token).toBe(rotated);
    await expect.poll(() => stream.ended()).toBe(true);
    await expect.poll(() => room.peerCount).toBe(1);
    expect((await get('/api/rooms', { session })).status).toBe(401);
    expect(
      (
        await post(
          `/api/notebooks/${room.notebookId}/requests`,
          { type: 'insert_cell', source: 'x' },
          asPage(session, hello.peer_id),
        )
      ).status,
    ).toBe(401);
    expect((await post(`/api/notebooks/${room.notebookId}/events`, {}, asPage(session))).status).toBe(401);
    expect((await get(`/notebooks/${room.notebookId}/outputs/c/0?cap=${capability}`)).status).toBe(403);
    const spent = await send('/api/session', { method: 'POST', origin: pageOrigin(), body: { launch: unused } });
    expect(spent.status).toBe(403);
    expect(room.cells()).toEqual([]);
    expect(room.peerCount).toBe(1);
    // A new launch address opens the page again.
    expect((await get('/api/rooms', { session: await openSession() })).status).toBe(200);
  });

  it('names who last edited each cell and where each peer is; a person says which cell they are on', async () => {
    const { room, agent, agentSaw } = await openRoom();
    const session = await openSession();
    const stream = await listen(room.notebookId, session, 'Ada');
    const hello = await helloOf(stream);
    const headers = asPage(session, hello.peer_id);
    const made = (await room.handle(agent, { type: 'insert_cell', source: 'by the agent' })) as {
      cell: { id: string };
    };
    const other = (await room.handle(agent, { type: 'insert_cell', source: 'second' })) as { cell: { id: string } };
    const edited = await post(
      `/api/notebooks/${room.notebookId}/requests`,
      { type: 'update_cell', cell_id: made.cell.id, source: 'by Ada', idempotency_key: 'ada-2' },
      headers,
    );
    expect(edited.status, edited.body).toBe(200);
    const said = await post(`/api/notebooks/${room.notebookId}/presence`, { cell_id: other.cell.id }, headers);
    expect(said.status, said.body).toBe(204);
    // The agent hears where the person is; the person's page does not hear its own presence.
    expect(agentSaw).toContainEqual(
      expect.objectContaining({ event: 'presence', peer_label: 'human:Ada', cell_id: other.cell.id }),
    );
    expect(stream.received.join('')).not.toContain('"event":"presence"');

    const notebook = JSON.parse((await get(`/api/notebooks/${room.notebookId}`, { session })).body);
    expect(notebook.cells.map((cell: { edited_by?: string }) => cell.edited_by)).toEqual(['human:Ada', 'agent:spec:1']);
    expect(notebook.peers).toEqual([
      { peer_id: 'agent-1', label: 'agent:spec:1', cell_id: other.cell.id, running_cell_id: null },
      { peer_id: hello.peer_id, label: 'human:Ada', cell_id: other.cell.id, running_cell_id: null },
    ]);
    expect(notebook.executions).toEqual({ running: null, queued: [] });

    // Refused, changing nothing: a cell that is not there, a body that names none.
    const unknown = await post(`/api/notebooks/${room.notebookId}/presence`, { cell_id: 'nope' }, headers);
    expect(unknown.status).toBe(404);
    expect((await post(`/api/notebooks/${room.notebookId}/presence`, { cell: 1 }, headers)).status).toBe(400);
    const after = JSON.parse((await get(`/api/notebooks/${room.notebookId}`, { session })).body);
    expect(after.peers[1].cell_id).toBe(other.cell.id);
    stream.close();
  });

  it("serves the client's built files (the script's chunks too) with their types and the page's headers, to anyone; a clear 500 when they are not built", async () => {
    const built = join(dir, 'built');
    mkdirSync(built);
    writeFileSync(join(built, 'live-page.js'), 'void 0;');
    writeFileSync(join(built, 'live-page.css'), 'body{}');
    writeFileSync(join(built, 'cell-editor-AB12CD34.js'), 'export {};');
    writeFileSync(join(built, 'live-page.imports.json'), '["cell-editor-AB12CD34.js"]');
    const logger = new RecordingLogger();
    const withClient = await PageServer.start({ catalog, logger, token, assetsDir: built });
    const missing = await PageServer.start({ catalog, logger, token, assetsDir: join(dir, 'not-built') });
    try {
      const script = await get('/assets/live-page.js', { port: withClient.port });
      expect(script.status).toBe(200);
      expect(script.headers['content-type']).toBe('text/javascript; charset=utf-8');
      expect(script.headers['content-security-policy']).toContain("script-src 'self'");
      expect(script.body).toBe('void 0;');
      const style = await get('/assets/live-page.css', { port: withClient.port });
      expect(style.headers['content-type']).toBe('text/css; charset=utf-8');
      const chunk = await get('/assets/cell-editor-AB12CD34.js', { port: withClient.port });
      expect(chunk.status).toBe(200);
      expect(chunk.headers['content-type']).toBe('text/javascript; charset=utf-8');
      expect(chunk.headers['content-security-policy']).toBe(script.headers['content-security-policy']);
      expect(chunk.headers['cache-control']).toBe(script.headers['cache-control']);
      expect(chunk.body).toBe('export {};');
      expect((await get('/assets/other.js', { port: withClient.port })).status).toBe(404);
      // Still only to the loopback Host.
      expect((await get('/assets/live-page.js', { port: withClient.port, host: 'evil.example' })).status).toBe(403);
      // The page's HTML asks for the chunks the script imports as it starts beside it.
      const shell = await get('/', { port: withClient.port });
      expect(shell.body).toContain('<link rel="modulepreload" href="/assets/cell-editor-AB12CD34.js">');
      expect((await get('/', { port: missing.port })).body).not.toContain('modulepreload');

      const absent = await get('/assets/live-page.js', { port: missing.port });
      expect(absent.status).toBe(500);
      expect(absent.body).toContain('run npm run build');
      await get('/assets/live-page.css', { port: missing.port });
      expect(logger.find('is not built', 'error')).toHaveLength(1);
    } finally {
      await withClient.stop();
      await missing.stop();
    }
  });

  it("serves a cell's HTML or SVG output as its frame's document, sandboxed under its own CSP, with the notebook's capability; nothing else", async () => {
    const path = join(dir, 'outputs.ipynb');
    const html = '<b>table</b><script>document.body.append(1)</script>';
    writeFileSync(
      path,
      JSON.stringify({
        nbformat: 4,
        nbformat_minor: 5,
        metadata: {},
        cells: [
          {
            id: 'rich',
            cell_type: 'code',
            source: 'HTML(...)',
            execution_count: 1,
            metadata: {},
            outputs: [
              { output_type: 'stream', name: 'stdout', text: 'printed\n' },
              { output_type: 'execute_result', execution_count: 1, metadata: {}, data: { 'text/html': [html] } },
              { output_type: 'display_data', metadata: {}, data: { 'image/svg+xml': '<svg id="s"></svg>' } },
            ],
          },
        ],
      }),
    );
    const admission = await catalog.open(path);
    admission.release();
    const id = admission.room.notebookId;
    const session = await openSession();
    const cap = JSON.parse((await get(`/api/notebooks/${id}`, { session })).body).output_capability as string;
    const frame = await get(`/notebooks/${id}/outputs/rich/1?cap=${cap}`);
    expect(frame.status).toBe(200);
    expect(frame.headers['content-type']).toBe('text/html; charset=utf-8');
    const csp = String(frame.headers['content-security-policy']);
    expect(csp).toContain('sandbox allow-scripts allow-popups allow-popups-to-escape-sandbox;');
    expect(csp).not.toContain('allow-same-origin');
    expect(csp).toContain("frame-ancestors 'self'");
    expect(csp).toContain("script-src 'unsafe-inline'");
    expect(frame.body).toContain(html);
    expect(frame.body).toContain('runtimedFrameHeight');
    expect((await get(`/notebooks/${id}/outputs/rich/2?cap=${cap}`)).body).toContain('<svg id="s"></svg>');
    // Not an HTML or SVG output, no such output or cell, a bad index: nothing served.
    expect((await get(`/notebooks/${id}/outputs/rich/0?cap=${cap}`)).status).toBe(404);
    expect((await get(`/notebooks/${id}/outputs/rich/3?cap=${cap}`)).status).toBe(404);
    expect((await get(`/notebooks/${id}/outputs/other/1?cap=${cap}`)).status).toBe(404);
    expect((await get(`/notebooks/${id}/outputs/rich/x?cap=${cap}`)).status).toBe(404);
    // No capability, a garbled one, the session instead of it, another notebook's: refused.
    expect((await get(`/notebooks/${id}/outputs/rich/1`)).status).toBe(403);
    expect((await get(`/notebooks/${id}/outputs/rich/1?cap=x${cap}`)).status).toBe(403);
    expect((await get(`/notebooks/${id}/outputs/rich/1`, { session })).status).toBe(403);
    expect((await get(`/notebooks/${id}/outputs/rich/1?cap=${session}`)).status).toBe(403);
    const { room: other } = await openRoom();
    const otherCap = JSON.parse((await get(`/api/notebooks/${other.notebookId}`, { session })).body).output_capability;
    expect((await get(`/notebooks/${id}/outputs/rich/1?cap=${otherCap}`)).status).toBe(403);
  });

  it('serves an image beside the notebook by its relative path with the capability: images only, inside its folder only', async () => {
    const folder = join(dir, 'project');
    mkdirSync(join(folder, 'figures'), { recursive: true });
    writeFileSync(join(folder, 'figures', 'plot.png'), Buffer.from([0x89, 0x50, 0x4e, 0x47, 1, 2, 3]));
    writeFileSync(
      join(folder, 'drawing.svg'),
      '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>',
    );
    writeFileSync(join(folder, 'notes.txt'), 'not an image');
    writeFileSync(join(dir, 'outside.png'), 'outside the folder');
    symlinkSync(join(dir, 'outside.png'), join(folder, 'linked.png'));
    const path = join(folder, 'images.ipynb');
    writeFileSync(path, JSON.stringify({ nbformat: 4, nbformat_minor: 5, metadata: {}, cells: [] }));
    const admission = await catalog.open(path);
    admission.release();
    const id = admission.room.notebookId;
    const session = await openSession();
    const cap = JSON.parse((await get(`/api/notebooks/${id}`, { session })).body).output_capability as string;

    const image = await get(`/notebooks/${id}/files/figures/plot.png?cap=${cap}`);
    expect(image.status).toBe(200);
    expect(image.headers['content-type']).toBe('image/png');
    expect(image.headers['content-length']).toBe('7');
    const svg = await get(`/notebooks/${id}/files/drawing.svg?cap=${cap}`);
    expect(svg.headers['content-type']).toBe('image/svg+xml');
    expect(String(svg.headers['content-security-policy'])).toMatch(/^sandbox; default-src 'none'/);
    // Not an image, out of the folder (by .., by an encoded .., by a symlink), missing: not served.
    expect((await get(`/notebooks/${id}/files/notes.txt?cap=${cap}`)).status).toBe(404);
    expect((await get(`/notebooks/${id}/files/../outside.png?cap=${cap}`)).status).toBe(404);
    expect((await get(`/notebooks/${id}/files/%2E%2E%2Foutside.png?cap=${cap}`)).status).toBe(404);
    expect((await get(`/notebooks/${id}/files/figures/..%2F..%2Foutside.png?cap=${cap}`)).status).toBe(404);
    expect((await get(`/notebooks/${id}/files/linked.png?cap=${cap}`)).status).toBe(404);
    expect((await get(`/notebooks/${id}/files/none.png?cap=${cap}`)).status).toBe(404);
    // No capability, the session instead, another notebook's: refused.
    expect((await get(`/notebooks/${id}/files/figures/plot.png`)).status).toBe(403);
    expect((await get(`/notebooks/${id}/files/figures/plot.png`, { session })).status).toBe(403);
    const { room: other } = await openRoom();
    const otherCap = JSON.parse((await get(`/api/notebooks/${other.notebookId}`, { session })).body).output_capability;
    expect((await get(`/notebooks/${id}/files/figures/plot.png?cap=${otherCap}`)).status).toBe(403);
    // An untitled notebook has no folder.
    expect((await get(`/notebooks/${other.notebookId}/files/figures/plot.png?cap=${otherCap}`)).status).toBe(404);
  });

  it('sends large output values as references the page loads by URL with its capability, content-addressed and cached for good', async () => {
    const path = join(dir, 'large.ipynb');
    const png = Buffer.alloc(9000, 7).toString('base64');
    const text = 'x'.repeat(5000);
    writeFileSync(
      path,
      JSON.stringify({
        nbformat: 4,
        nbformat_minor: 5,
        metadata: {},
        cells: [
          {
            id: 'plot',
            cell_type: 'code',
            source: 'plot()',
            execution_count: 1,
            metadata: {},
            outputs: [
              {
                output_type: 'display_data',
                metadata: {},
                data: { 'image/png': png, 'text/plain': ['<Figure>'], 'text/html': text },
              },
            ],
          },
        ],
      }),
    );
    const admission = await catalog.open(path);
    admission.release();
    const id = admission.room.notebookId;
    const session = await openSession();
    const snapshot = await get(`/api/notebooks/${id}`, { session });
    expect(snapshot.body.length).toBeLessThan(2000);
    const parsed = JSON.parse(snapshot.body);
    const cap = parsed.output_capability as string;
    const data = parsed.cells[0].outputs[0].data;
    expect(data['text/plain']).toBe('<Figure>');
    const ref = data['image/png'] as { runtimed_output_ref: string; hash: string; chars: number };
    expect(ref.chars).toBe(png.length);
    expect(ref.runtimed_output_ref).toBe(`/notebooks/${id}/outputs/plot/0/image%2Fpng?v=${ref.hash}&cap=${cap}`);
    const image = await get(ref.runtimed_output_ref);
    expect(image.status).toBe(200);
    expect(image.headers['content-type']).toBe('image/png');
    expect(image.headers['cache-control']).toContain('immutable');
    expect(image.headers.etag).toBe(`"${ref.hash}"`);
    expect(image.bytes.equals(Buffer.alloc(9000, 7))).toBe(true);
    // Asked again with its ETag: not sent again.
    const revalidated = await get(ref.runtimed_output_ref, { headers: { 'if-none-match': `"${ref.hash}"` } });
    expect(revalidated.status).toBe(304);
    expect(revalidated.bytes.length).toBe(0);
    // A large HTML value is served as text, never as markup, sandboxed.
    const html = data['text/html'] as { runtimed_output_ref: string };
    const served = await get(html.runtimed_output_ref);
    expect(served.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(served.headers['content-security-policy']).toContain('sandbox');
    expect(served.body).toBe(text);
    // Another hash, no capability, another notebook's: nothing served.
    expect((await get(ref.runtimed_output_ref.replace(/v=[^&]*/, 'v=other'))).status).toBe(404);
    expect((await get(ref.runtimed_output_ref.replace(/&cap=.*/, ''))).status).toBe(403);
    const { room: other } = await openRoom();
    const otherCap = JSON.parse((await get(`/api/notebooks/${other.notebookId}`, { session })).body).output_capability;
    expect((await get(ref.runtimed_output_ref.replace(/&cap=.*/, `&cap=${otherCap}`))).status).toBe(403);
    expect((await get(`/notebooks/${id}/outputs/%E0%A4%A/0/image%2Fpng?v=x&cap=${cap}`)).status).toBe(404);

    // The stream and a request's answer reference values alike, with the capability.
    const stream = await listen(id, session, 'Ada');
    const hello = await helloOf(stream);
    const answer = await post(
      `/api/notebooks/${id}/requests`,
      { type: 'get_cell', cell_id: 'plot' },
      asPage(session, hello.peer_id),
    );
    expect(answer.status, answer.body).toBe(200);
    expect(answer.body).toContain(`"runtimed_output_ref":"${ref.runtimed_output_ref}"`);
    expect(answer.body).not.toContain(png.slice(0, 100));
    // The page does not hear its own edit; it hears another peer's, referenced with its capability
    // (outputs cleared, then back with an undo: the whole cell).
    const agent: RoomPeer = {
      id: 'agent-2',
      label: 'agent:spec:2',
      send: () => undefined,
      disconnect: () => undefined,
    };
    admission.room.addPeer(agent);
    await admission.room.handle(agent, { type: 'clear_outputs', cell_id: 'plot' });
    await admission.room.handle(agent, { type: 'undo' });
    await expect.poll(() => stream.received.join('')).toContain(`&cap=${cap}`);
    expect(stream.received.join('')).toContain('"event":"cell_updated"');
    expect(stream.received.join('')).not.toContain(png.slice(0, 100));
    stream.close();

    // Who is where, without the cells.
    const activity = JSON.parse((await get(`/api/notebooks/${id}/activity`, { session })).body);
    expect(activity.executions).toEqual({ running: null, queued: [] });
    expect(activity.cells).toBeUndefined();
  });
});
