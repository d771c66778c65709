import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RecordingLogger } from '@nteract-mcp/foundation/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { NotebookRoom } from '../room/notebook-room.js';
import type { RoomCatalog } from '../room/room-catalog.js';
import type { RoomPeer } from '../room/room-peers.js';
import { createKernellessCatalog } from '../testing/test-room-settings.js';
import { pageCookieName } from './page-access.js';
import { PageServer } from './page-server.js';

let dir: string;
let catalog: RoomCatalog;
let page: PageServer;
const token = 'c'.repeat(64);

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'page-'));
  const logger = new RecordingLogger();
  catalog = await createKernellessCatalog(dir, logger);
  page = await PageServer.start({ catalog, logger, token });
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
}

/** One request to the page server; `cookie: true` sends the token cookie. */
function get(
  path: string,
  options: { cookie?: boolean; host?: string; origin?: string; port?: number } = {},
): Promise<Answer> {
  const port = options.port ?? page.port;
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { host: options.host ?? `127.0.0.1:${port}` };
    if (options.cookie) headers.cookie = `${pageCookieName}=${token}`;
    if (options.origin) headers.origin = options.origin;
    const sent = httpRequest({ host: '127.0.0.1', port, path, headers }, (response) => {
      let body = '';
      response.setEncoding('utf8').on('data', (chunk: string) => {
        body += chunk;
      });
      response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body }));
    });
    sent.on('error', reject);
    sent.end();
  });
}

/** One POST of a JSON body to the page server, as a page sends it (Origin of the page, its peer id). */
function post(path: string, body: unknown, headers: Record<string, string>): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const sent = httpRequest(
      {
        host: '127.0.0.1',
        port: page.port,
        path,
        method: 'POST',
        headers: {
          host: `127.0.0.1:${page.port}`,
          cookie: `${pageCookieName}=${token}`,
          'content-type': 'application/json',
          ...headers,
        },
      },
      (response) => {
        let text = '';
        response.setEncoding('utf8').on('data', (chunk: string) => {
          text += chunk;
        });
        response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body: text }));
      },
    );
    sent.on('error', reject);
    sent.end(typeof body === 'string' ? body : JSON.stringify(body));
  });
}

/** Opens a notebook's event stream as a page named `name` does; what it received, and how to close it. */
async function listen(notebookId: string, name?: string): Promise<{ received: string[]; close: () => void }> {
  const received: string[] = [];
  let close!: () => void;
  await new Promise<void>((resolve) => {
    const sent = httpRequest(
      {
        host: '127.0.0.1',
        port: page.port,
        path: `/api/notebooks/${notebookId}/events${name === undefined ? '' : `?name=${encodeURIComponent(name)}`}`,
        headers: { host: `127.0.0.1:${page.port}`, cookie: `${pageCookieName}=${token}` },
      },
      (response) => {
        response.setEncoding('utf8').on('data', (chunk: string) => received.push(chunk));
        resolve();
      },
    );
    sent.end();
    close = () => sent.destroy();
  });
  return { received, close };
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
  it('gives a URL with the token on 127.0.0.1; the token becomes a cookie and leaves the address', async () => {
    const { room } = await openRoom();
    const url = new URL(page.url(room.notebookId));
    expect(url.host).toBe(`127.0.0.1:${page.port}`);
    const adopted = await get(`${url.pathname}${url.search}`);
    expect(adopted.status).toBe(303);
    expect(adopted.headers.location).toBe(`/notebooks/${room.notebookId}`);
    expect(adopted.headers['set-cookie']).toEqual([`${pageCookieName}=${token}; HttpOnly; SameSite=Strict; Path=/`]);
    const shell = await get(`/notebooks/${room.notebookId}`, { cookie: true });
    expect(shell.status).toBe(200);
    expect(shell.headers['content-security-policy']).toContain("script-src 'self'");
    expect(shell.body).toContain(`data-notebook="${room.notebookId}"`);
    expect(shell.body).toContain('<script type="module" src="/assets/live-page.js"></script>');
  });

  it('refuses without the token, from another Host or Origin, and changes nothing', async () => {
    const { room } = await openRoom();
    const before = room.peerCount;
    expect((await get('/api/rooms')).status).toBe(403);
    expect((await get('/api/rooms', { cookie: true, host: 'evil.example' })).status).toBe(403);
    expect((await get('/api/rooms', { cookie: true, origin: 'http://evil.example' })).status).toBe(403);
    expect((await get(`/api/notebooks/${room.notebookId}/events`)).status).toBe(403);
    expect(room.peerCount).toBe(before);
    expect((await get('/api/notebooks/not-a-notebook', { cookie: true })).status).toBe(404);
  });

  it('lists the rooms and gives a notebook as it is now', async () => {
    const { room, agent } = await openRoom();
    await room.handle(agent, { type: 'insert_cell', source: 'x = 1' });
    const rooms = JSON.parse((await get('/api/rooms', { cookie: true })).body) as { rooms: { notebook_id: string }[] };
    expect(rooms.rooms.map((listed) => listed.notebook_id)).toEqual([room.notebookId]);
    const notebook = JSON.parse((await get(`/api/notebooks/${room.notebookId}`, { cookie: true })).body);
    expect(notebook.cells.map((cell: { source: string }) => cell.source)).toEqual(['x = 1']);
  });

  it("streams the room's changes to the page, which is a peer of the room while it listens", async () => {
    const { room, agent } = await openRoom();
    const { received, close: closeStream } = await listen(room.notebookId);
    await expect.poll(() => room.peerCount).toBe(2);
    await room.handle(agent, { type: 'insert_cell', source: 'shown live' });
    await expect.poll(() => received.join('')).toContain('shown live');
    expect(received.join('')).toContain('"event":"cell_inserted"');
    closeStream();
    await expect.poll(() => room.peerCount).toBe(1);
  });

  it("takes a person's edit as the page's own peer of the room (named), through the room's journaled requests", async () => {
    const { room, agentSaw } = await openRoom();
    const { received, close } = await listen(room.notebookId, 'Ada');
    await expect.poll(() => received.join('')).toContain('event: hello');
    const hello = JSON.parse(/event: hello\ndata: (.*)\n/.exec(received.join(''))?.[1] as string);
    expect(hello.label).toBe('human:Ada');
    expect(hello.document_version).toBe(room.documentVersion);
    const origin = { origin: `http://127.0.0.1:${page.port}` };
    const path = `/api/notebooks/${room.notebookId}/requests`;
    const made = await post(
      path,
      { type: 'insert_cell', source: 'by Ada', idempotency_key: 'ada-1' },
      {
        ...origin,
        'x-runtimed-peer': hello.peer_id,
      },
    );
    expect(made.status, made.body).toBe(200);
    // Sent again with the same key (a retried click): applied once.
    await post(
      path,
      { type: 'insert_cell', source: 'by Ada', idempotency_key: 'ada-1' },
      {
        ...origin,
        'x-runtimed-peer': hello.peer_id,
      },
    );
    expect(room.cells().map((cell) => cell.source)).toEqual(['by Ada']);
    // The agent beside her sees it as any peer's edit.
    expect(agentSaw.some((frame) => frame.event === 'cell_inserted')).toBe(true);

    // Refused, changing nothing: no Origin, a foreign one, no page peer, a bad request.
    expect((await post(path, { type: 'insert_cell', source: 'x' }, { 'x-runtimed-peer': hello.peer_id })).status).toBe(
      403,
    );
    expect(
      (
        await post(
          path,
          { type: 'insert_cell', source: 'x' },
          { origin: 'http://evil.example', 'x-runtimed-peer': hello.peer_id },
        )
      ).status,
    ).toBe(403);
    expect(
      (await post(path, { type: 'insert_cell', source: 'x' }, { ...origin, 'x-runtimed-peer': 'nobody' })).status,
    ).toBe(409);
    const bad = await post(path, { type: 'insert_cell', source: 42 }, { ...origin, 'x-runtimed-peer': hello.peer_id });
    expect(bad.status).toBe(400);
    expect((await post(path, '{not json', { ...origin, 'x-runtimed-peer': hello.peer_id })).status).toBe(400);
    expect(room.cells().map((cell) => cell.source)).toEqual(['by Ada']);
    close();
  });

  it('names who last edited each cell and where each peer is; a person says which cell they are on', async () => {
    const { room, agent, agentSaw } = await openRoom();
    const { received, close } = await listen(room.notebookId, 'Ada');
    await expect.poll(() => received.join('')).toContain('event: hello');
    const hello = JSON.parse(/event: hello\ndata: (.*)\n/.exec(received.join(''))?.[1] as string);
    const headers = { origin: `http://127.0.0.1:${page.port}`, 'x-runtimed-peer': hello.peer_id };
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
    expect(received.join('')).not.toContain('"event":"presence"');

    const notebook = JSON.parse((await get(`/api/notebooks/${room.notebookId}`, { cookie: true })).body);
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
    const after = JSON.parse((await get(`/api/notebooks/${room.notebookId}`, { cookie: true })).body);
    expect(after.peers[1].cell_id).toBe(other.cell.id);
    close();
  });

  it("serves the client's built files (the script's chunks too) with their types and the page's headers; a clear 500 when they are not built", async () => {
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
      const script = await get('/assets/live-page.js', { cookie: true, port: withClient.port });
      expect(script.status).toBe(200);
      expect(script.headers['content-type']).toBe('text/javascript; charset=utf-8');
      expect(script.headers['content-security-policy']).toContain("script-src 'self'");
      expect(script.body).toBe('void 0;');
      const style = await get('/assets/live-page.css', { cookie: true, port: withClient.port });
      expect(style.headers['content-type']).toBe('text/css; charset=utf-8');
      const chunk = await get('/assets/cell-editor-AB12CD34.js', { cookie: true, port: withClient.port });
      expect(chunk.status).toBe(200);
      expect(chunk.headers['content-type']).toBe('text/javascript; charset=utf-8');
      expect(chunk.headers['content-security-policy']).toBe(script.headers['content-security-policy']);
      expect(chunk.headers['cache-control']).toBe(script.headers['cache-control']);
      expect(chunk.body).toBe('export {};');
      expect((await get('/assets/other.js', { cookie: true, port: withClient.port })).status).toBe(404);
      expect((await get('/assets/live-page.js', { port: withClient.port })).status).toBe(403);
      expect((await get('/assets/cell-editor-AB12CD34.js', { port: withClient.port })).status).toBe(403);
      // The page's HTML asks for the chunks the script imports as it starts beside it.
      const shell = await get('/', { cookie: true, port: withClient.port });
      expect(shell.body).toContain('<link rel="modulepreload" href="/assets/cell-editor-AB12CD34.js">');
      expect((await get('/', { cookie: true, port: missing.port })).body).not.toContain('modulepreload');

      const absent = await get('/assets/live-page.js', { cookie: true, port: missing.port });
      expect(absent.status).toBe(500);
      expect(absent.body).toContain('run npm run build');
      await get('/assets/live-page.css', { cookie: true, port: missing.port });
      expect(logger.find('is not built', 'error')).toHaveLength(1);
    } finally {
      await withClient.stop();
      await missing.stop();
    }
  });

  it("serves a cell's HTML or SVG output as its frame's document, sandboxed under its own CSP; nothing else", async () => {
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
    const frame = await get(`/notebooks/${id}/outputs/rich/1`, { cookie: true });
    expect(frame.status).toBe(200);
    expect(frame.headers['content-type']).toBe('text/html; charset=utf-8');
    const csp = String(frame.headers['content-security-policy']);
    expect(csp).toContain('sandbox allow-scripts;');
    expect(csp).not.toContain('allow-same-origin');
    expect(csp).toContain("frame-ancestors 'self'");
    expect(csp).toContain("script-src 'unsafe-inline'");
    expect(frame.body).toContain(html);
    expect(frame.body).toContain('runtimedFrameHeight');
    expect((await get(`/notebooks/${id}/outputs/rich/2`, { cookie: true })).body).toContain('<svg id="s"></svg>');
    // Not an HTML or SVG output, no such output or cell, a bad index, no cookie: nothing served.
    expect((await get(`/notebooks/${id}/outputs/rich/0`, { cookie: true })).status).toBe(404);
    expect((await get(`/notebooks/${id}/outputs/rich/3`, { cookie: true })).status).toBe(404);
    expect((await get(`/notebooks/${id}/outputs/other/1`, { cookie: true })).status).toBe(404);
    expect((await get(`/notebooks/${id}/outputs/rich/x`, { cookie: true })).status).toBe(404);
    expect((await get(`/notebooks/${id}/outputs/rich/1`)).status).toBe(403);
  });

  it('sends large output values as references the page loads by URL, content-addressed and cached for good; only with the cookie', async () => {
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
    const snapshot = await get(`/api/notebooks/${id}`, { cookie: true });
    expect(snapshot.body.length).toBeLessThan(2000);
    const data = JSON.parse(snapshot.body).cells[0].outputs[0].data;
    expect(data['text/plain']).toBe('<Figure>');
    const ref = data['image/png'] as { runtimed_output_ref: string; hash: string; chars: number };
    expect(ref.chars).toBe(png.length);
    expect(ref.runtimed_output_ref).toBe(`/notebooks/${id}/outputs/plot/0/image%2Fpng?v=${ref.hash}`);
    const image = await new Promise<{ status: number; headers: Answer['headers']; bytes: Buffer }>((resolve) => {
      httpRequest(
        {
          host: '127.0.0.1',
          port: page.port,
          path: ref.runtimed_output_ref,
          headers: { host: `127.0.0.1:${page.port}`, cookie: `${pageCookieName}=${token}` },
        },
        (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('end', () =>
            resolve({ status: response.statusCode ?? 0, headers: response.headers, bytes: Buffer.concat(chunks) }),
          );
        },
      ).end();
    });
    expect(image.status).toBe(200);
    expect(image.headers['content-type']).toBe('image/png');
    expect(image.headers['cache-control']).toContain('immutable');
    expect(image.headers.etag).toBe(`"${ref.hash}"`);
    expect(image.bytes.equals(Buffer.alloc(9000, 7))).toBe(true);
    // A large HTML value is served as text, never as markup, sandboxed.
    const html = data['text/html'] as { runtimed_output_ref: string };
    const served = await get(html.runtimed_output_ref, { cookie: true });
    expect(served.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(served.headers['content-security-policy']).toContain('sandbox');
    expect(served.body).toBe(text);
    // Another hash, no cookie: nothing served.
    expect((await get(ref.runtimed_output_ref.replace(/v=.*/, 'v=other'), { cookie: true })).status).toBe(404);
    expect((await get(ref.runtimed_output_ref)).status).toBe(403);
    expect((await get(`/notebooks/${id}/outputs/%E0%A4%A/0/image%2Fpng?v=x`, { cookie: true })).status).toBe(404);
    // Who is where, without the cells.
    const activity = JSON.parse((await get(`/api/notebooks/${id}/activity`, { cookie: true })).body);
    expect(activity.executions).toEqual({ running: null, queued: [] });
    expect(activity.cells).toBeUndefined();
  });
});
