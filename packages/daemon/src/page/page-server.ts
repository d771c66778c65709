import { randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from '@nteract-mcp/foundation';
import { checkClientRequest } from '@nteract-mcp/runtimed-protocol';
import { DaemonError } from '../daemon-error.js';
import { BlobText } from '../persistence/blob-text.js';
import type { RoomCatalog } from '../room/room-catalog.js';
import type { RoomPeer } from '../room/room-peers.js';
import { errorFrame } from '../server/error-frame.js';
import { blobValueHash, outputValueHash, outputValueText, referenceCell, referenceFrame } from './output-references.js';
import { PageAccess, sessionPath } from './page-access.js';
import { PageAssets } from './page-assets.js';
import { outputFrameHeaders, renderOutputFrame } from './render-output-frame.js';
import { renderPageShell } from './render-page-shell.js';
import { serveNotebookFile } from './serve-notebook-file.js';

/** The headers every answer carries: nothing inline runs, nothing is framed or cached, no Referer. */
const securityHeaders: Readonly<Record<string, string>> = {
  'Content-Security-Policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: https:; " +
    "connect-src 'self'; frame-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'Cache-Control': 'no-store',
};

const notebookIdPattern = /^[0-9a-f-]{36}$/;
/** A person's name as the page may give it: letters (with their marks), digits, spaces, `.`, `_`, `-` and apostrophes. */
const humanNamePattern = /^[\p{L}\p{M}\p{N} ._'\u2019-]{1,40}$/u;
/** The largest request body a page may send (a cell's source). */
const maxBodyBytes = 1024 * 1024;

/** A page listening to a room: the room's peer it is, by the id its stream was told. */
interface PagePeer {
  readonly peer: RoomPeer;
  readonly notebookId: string;
  /** The page session that opened the stream: the only one that may act as this peer. */
  readonly session: string;
  /** Its event stream (ended when the server stops). */
  readonly stream: ServerResponse;
}

export interface PageServerOptions {
  readonly catalog: RoomCatalog;
  readonly logger: Logger;
  /** The port on 127.0.0.1; 0 (default) picks a free one. */
  readonly port?: number;
  /** The token; default a new random one. */
  readonly token?: string;
  /** Where the live page's client files are; default `dist/page/` of this package (see {@link PageAssets}). */
  readonly assetsDir?: string;
  /**
   * Why the daemon must not act on a request now (it stops, was superseded or just stalled), or
   * `undefined`: a person's request is then refused (503), nothing done, as an agent's is.
   */
  readonly refusal?: () => string | undefined;
}

/**
 * The daemon's web page, on 127.0.0.1 only: an index of the open notebooks and a page per
 * notebook that follows the room live (a server-sent event stream of the room's broadcasts; the
 * page joins the room as a peer while it is open). Every request passes {@link PageAccess} first.
 * Routes: `/` and `/notebooks/<id>` (pages: the same shell for anyone, holding nothing of a
 * notebook), `POST /api/session` (a launch code for a session), `/api/rooms`, `/api/notebooks/<id>`
 * (the notebook now, its large output values as references: see {@link referenceCell}, and the
 * session's output capability), `/api/notebooks/<id>/activity` (who is where, what runs and
 * waits), `POST /api/notebooks/<id>/events` (the stream, output values referenced alike; the page
 * joins the room as it opens), `POST /api/notebooks/<id>/requests` (a person's edit or run),
 * `/notebooks/<id>/outputs/<cell id>/<index>` (an HTML or SVG output, as the document of its
 * sandboxed frame), `/notebooks/<id>/outputs/<cell id>/<index>/<mime>?v=<hash>` (one large output
 * value, content-addressed and cached), `/assets/live-page.js`, the chunks it imports, `.css` and
 * `.js.LEGAL.txt` (the client, built into `dist/page/`).
 */
export class PageServer {
  readonly #server: Server;
  readonly #peers = new Map<string, PagePeer>();
  readonly #assets: PageAssets;
  #access: PageAccess | undefined;

  private constructor(private readonly options: PageServerOptions) {
    this.#server = createServer((request, response) => this.serve(request, response));
    const { assetsDir } = options;
    this.#assets = new PageAssets(options.logger, assetsDir === undefined ? undefined : () => assetsDir);
  }

  /** Listens on 127.0.0.1. */
  public static async start(options: PageServerOptions): Promise<PageServer> {
    const page = new PageServer(options);
    await new Promise<void>((resolve, reject) => {
      page.#server.once('error', reject);
      page.#server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
    });
    const { port } = page.#server.address() as AddressInfo;
    page.#access = new PageAccess(options.token ?? PageAccess.newToken(), port);
    return page;
  }

  public get port(): number {
    return (this.#server.address() as AddressInfo).port;
  }

  /** `http://127.0.0.1:<port>/`, without the token. */
  public get baseUrl(): string {
    return `http://127.0.0.1:${this.port}/`;
  }

  /** What signs the page's sessions (`page.json`; never give it to a browser, never log it). */
  public get token(): string {
    return this.access.token;
  }

  /**
   * An address that opens the page (the index, or a notebook's page) once, within an hour: its
   * launch code is in the fragment, which the browser never sends to a server.
   */
  public launchUrl(notebookId?: string): string {
    const path = notebookId === undefined ? '' : `notebooks/${notebookId}`;
    return `${this.baseUrl}${path}#launch=${this.access.launchCode()}`;
  }

  /**
   * Replaces the token: every page session and launch address so far stops working and every
   * open stream ends (its page asks the person to open it again). Returns the new token.
   */
  public rotate(): string {
    this.access.rotate();
    for (const { stream } of this.#peers.values()) stream.end();
    return this.access.token;
  }

  /** Stops listening and ends every open stream. */
  public async stop(): Promise<void> {
    for (const { stream } of this.#peers.values()) stream.end();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  private get access(): PageAccess {
    if (!this.#access) throw new Error('the page server is not listening');
    return this.#access;
  }

  private serve(request: IncomingMessage, response: ServerResponse): void {
    const decision = this.access.decide({
      method: request.method ?? 'GET',
      url: request.url ?? '/',
      host: request.headers.host,
      origin: request.headers.origin,
      authorization: request.headers.authorization,
    });
    if (decision.kind === 'refuse') {
      this.answer(response, decision.status, 'text/plain', decision.message);
      return;
    }
    const session = decision.session;
    const cap = (notebookId: string) => this.access.outputCapability(session ?? '', notebookId);
    const path = new URL(request.url ?? '/', 'http://127.0.0.1').pathname;
    if (path === sessionPath) {
      if (request.method === 'POST') void this.launch(request, response);
      else this.answer(response, 405, 'text/plain', 'POST a launch code here.');
      return;
    }
    const posted =
      request.method === 'POST' ? /^\/api\/notebooks\/([^/]+)\/(requests|presence|events)$/.exec(path) : null;
    if (posted && session !== undefined) {
      const [, notebookId, what] = posted as unknown as [string, string, string];
      if (what === 'events') void this.stream(request, response, notebookId, session);
      else if (what === 'requests') void this.request(request, response, notebookId, session);
      else void this.presence(request, response, notebookId, session);
      return;
    }
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      this.answer(response, 405, 'text/plain', `${request.method} is not served here.`);
      return;
    }
    const [, first, id, rest] = path.split('/');
    if (path === '/') {
      this.answer(response, 200, 'text/html', renderPageShell(undefined, this.#assets.startImports()));
      return;
    }
    if (first === 'assets' && rest === undefined) {
      const asset = this.#assets.read(id ?? '');
      if (asset?.kind === 'found') this.answer(response, 200, asset.type, asset.body);
      else if (asset?.kind === 'missing') this.answer(response, 500, 'text/plain', asset.message);
      else this.answer(response, 404, 'text/plain', 'Not found.');
      return;
    }
    if (path === '/api/rooms') {
      this.json(response, 200, { rooms: this.options.catalog.list() });
      return;
    }
    if (first === 'notebooks' && id !== undefined && rest === undefined) {
      // Whether the notebook is open is the API's to say, to a session.
      if (notebookIdPattern.test(id))
        this.answer(response, 200, 'text/html', renderPageShell(id, this.#assets.startImports()));
      else this.answer(response, 404, 'text/plain', `No open notebook ${id}.`);
      return;
    }
    if (first === 'notebooks' && id !== undefined && rest === 'outputs') {
      const [, , , , cellId, index, extra] = path.split('/');
      const [, , , , , , , more] = path.split('/');
      if (cellId !== undefined && index !== undefined && extra === undefined) {
        this.withRoom(response, id, (room) => this.outputFrame(response, room, cellId, index));
        return;
      }
      if (cellId !== undefined && index !== undefined && extra !== undefined && more === undefined) {
        this.withRoom(response, id, (room) => this.outputValue(request, response, room, cellId, index, extra));
        return;
      }
    }
    if (first === 'notebooks' && id !== undefined && rest === 'files') {
      const segments = path.split('/').slice(4);
      this.withRoom(response, id, (room) => void serveNotebookFile(response, room.path, segments, securityHeaders));
      return;
    }
    if (first === 'api' && id === 'notebooks') {
      const [, , , notebookId, tail] = path.split('/');
      if (notebookId !== undefined && tail === undefined) {
        this.withRoom(response, notebookId, (room) =>
          this.json(response, 200, {
            notebook_id: room.notebookId,
            path: room.path ?? null,
            document_version: room.documentVersion,
            runtime: room.runtime,
            conditions: room.conditions(),
            ...room.activity(),
            cells: room.cells().map((cell) => referenceCell(room.notebookId, cell, cap(room.notebookId))),
            output_capability: cap(room.notebookId),
          }),
        );
        return;
      }
      if (notebookId !== undefined && tail === 'activity') {
        this.withRoom(response, notebookId, (room) => this.json(response, 200, room.activity()));
        return;
      }
    }
    this.answer(response, 404, 'text/plain', 'Not found.');
  }

  private withRoom(
    response: ServerResponse,
    notebookId: string,
    serve: (room: NonNullable<ReturnType<RoomCatalog['get']>>) => void,
  ): void {
    const room = notebookIdPattern.test(notebookId) ? this.options.catalog.get(notebookId) : undefined;
    if (!room) {
      this.answer(response, 404, 'text/plain', `No open notebook ${notebookId}.`);
      return;
    }
    serve(room);
  }

  /** A launch code (`{"launch": "<code>"}`) for a session (`{"session": "<session>"}`), or 403 saying why not. */
  private async launch(request: IncomingMessage, response: ServerResponse): Promise<void> {
    let code: unknown;
    try {
      code = (JSON.parse(await readBody(request)) as { launch?: unknown } | null)?.launch;
    } catch (error) {
      this.answer(response, 400, 'text/plain', `The body must be {"launch": "<code>"}: ${(error as Error).message}`);
      return;
    }
    const redeemed = this.access.redeem(code);
    if ('refused' in redeemed) this.json(response, 403, { message: redeemed.refused });
    else this.json(response, 200, { session: redeemed.session });
  }

  /**
   * The room's broadcasts as server-sent events on the answer to a POST (`{"name": "<person>"}`),
   * the page a peer of the room while it listens: joining is a change, so no GET does it.
   */
  private async stream(
    request: IncomingMessage,
    response: ServerResponse,
    notebookId: string,
    session: string,
  ): Promise<void> {
    let name: unknown;
    try {
      const body = await readBody(request);
      name = body === '' ? undefined : (JSON.parse(body) as { name?: unknown } | null)?.name;
    } catch (error) {
      this.answer(response, 400, 'text/plain', `The body must be {"name": "<your name>"}: ${(error as Error).message}`);
      return;
    }
    name ??= 'human';
    if (typeof name !== 'string' || !humanNamePattern.test(name)) {
      this.answer(response, 400, 'text/plain', 'name: 1 to 40 letters, digits, spaces, apostrophes, dots, dashes.');
      return;
    }
    if (!notebookIdPattern.test(notebookId) || !this.options.catalog.get(notebookId)) {
      this.answer(response, 404, 'text/plain', `No open notebook ${notebookId}.`);
      return;
    }
    let admission: Awaited<ReturnType<RoomCatalog['attach']>>;
    try {
      admission = await this.options.catalog.attach(notebookId);
    } catch (error) {
      this.answer(response, 404, 'text/plain', (error as Error).message);
      return;
    }
    const { room } = admission;
    const cap = this.access.outputCapability(session, notebookId);
    response.writeHead(200, { ...securityHeaders, 'Content-Type': 'text/event-stream' });
    response.write(': open\n\n');
    const peer: RoomPeer = {
      id: randomUUID(),
      label: name === 'human' ? 'human' : `human:${name}`,
      // The page (served by this daemon) applies source edits to its copy of the cell.
      readsSourceEdits: true,
      // And shows the cells' comment threads as they change.
      readsComments: true,
      send: (frame) => response.write(`data: ${JSON.stringify(referenceFrame(notebookId, frame, cap))}\n\n`),
      disconnect: () => response.end(),
    };
    // The page's own peer id: its requests name it (`X-Runtimed-Peer`) to act as this peer. And the
    // document's version as the page joins: every change after it comes as an event on this stream.
    const hello = { peer_id: peer.id, label: peer.label, document_version: room.documentVersion };
    response.write(`event: hello\ndata: ${JSON.stringify(hello)}\n\n`);
    room.addPeer(peer);
    admission.release();
    this.#peers.set(peer.id, { peer, notebookId, session, stream: response });
    // The answer's close: the request's fired once its body was read (a POST), long before.
    response.on('close', () => {
      this.#peers.delete(peer.id);
      room.removePeer(peer.id, 'left');
    });
  }

  /**
   * A notebook request from a page (an edit, a run, an interrupt), made as that page's peer of the
   * room: through the room's journaled mutations, with the same checks, idempotency keys and
   * broadcasts as an agent's. Answered with the room's answer, or a clear 4xx changing nothing.
   */
  private async request(
    request: IncomingMessage,
    response: ServerResponse,
    notebookId: string,
    session: string,
  ): Promise<void> {
    const posted = await this.posted(request, response, notebookId, session);
    if (!posted) return;
    const refused = this.options.refusal?.();
    if (refused !== undefined) {
      this.json(response, 503, {
        code: 'shutting_down',
        message: `This daemon did not apply the request: ${refused}.`,
      });
      return;
    }
    const { pagePeer, room, body } = posted;
    const checked = checkClientRequest('notebook', { id: 0, ...(body as object) });
    if (checked.kind !== 'ok') {
      const why =
        checked.kind === 'invalid'
          ? checked.message
          : checked.kind === 'unknown'
            ? `unknown request type '${checked.type}'`
            : 'not a request';
      this.answer(response, 400, 'text/plain', why);
      return;
    }
    try {
      const answer = await room.handle(pagePeer.peer, checked.request);
      const cap = this.access.outputCapability(session, notebookId);
      this.json(response, 200, referenceFrame(notebookId, answer as Record<string, unknown>, cap));
    } catch (error) {
      const frame = errorFrame(error);
      this.json(response, DaemonError.is(error) ? 409 : 500, { code: frame.code, message: frame.message });
    }
  }

  /** A page says which cell its person is on (`{"cell_id": "<id>" | null}`); answered 204. */
  private async presence(
    request: IncomingMessage,
    response: ServerResponse,
    notebookId: string,
    session: string,
  ): Promise<void> {
    const posted = await this.posted(request, response, notebookId, session);
    if (!posted) return;
    const cellId = (posted.body as { cell_id?: unknown } | null)?.cell_id;
    if (cellId !== null && typeof cellId !== 'string') {
      this.answer(response, 400, 'text/plain', 'The body must be {"cell_id": "<cell id>"} or {"cell_id": null}.');
      return;
    }
    try {
      posted.room.setPresence(posted.pagePeer.peer, cellId);
    } catch (error) {
      this.answer(response, 404, 'text/plain', (error as Error).message);
      return;
    }
    response.writeHead(204, securityHeaders);
    response.end();
  }

  /**
   * What every POST of a page needs: the page's peer (named by `X-Runtimed-Peer`, on this
   * notebook, opened by this session: no page acts as another's peer), its room, and the JSON
   * body. Answers the refusal itself and gives `undefined`.
   */
  private async posted(
    request: IncomingMessage,
    response: ServerResponse,
    notebookId: string,
    session: string,
  ): Promise<{ pagePeer: PagePeer; room: NonNullable<ReturnType<RoomCatalog['get']>>; body: unknown } | undefined> {
    const peerId = request.headers['x-runtimed-peer'];
    const pagePeer = typeof peerId === 'string' ? this.#peers.get(peerId) : undefined;
    if (!pagePeer || pagePeer.notebookId !== notebookId || pagePeer.session !== session) {
      // Not joined (yet): a page whose stream reconnects to a restarted daemon sends again once it has.
      this.json(response, 409, {
        code: 'page_not_joined',
        message: 'Open the notebook page first (its stream names the peer).',
      });
      return undefined;
    }
    const room = this.options.catalog.get(notebookId);
    if (!room) {
      this.answer(response, 404, 'text/plain', `No open notebook ${notebookId}.`);
      return undefined;
    }
    try {
      return { pagePeer, room, body: JSON.parse(await readBody(request)) };
    } catch (error) {
      this.answer(response, 400, 'text/plain', `The body must be one JSON request: ${(error as Error).message}`);
      return undefined;
    }
  }

  /**
   * The document of a cell's HTML or SVG output for its frame on the page (sandboxed, under its own
   * CSP: {@link outputFrameHeaders}); 404 when the cell has no such output (any more).
   */
  private outputFrame(
    response: ServerResponse,
    room: NonNullable<ReturnType<RoomCatalog['get']>>,
    cellId: string,
    index: string,
  ): void {
    const output = /^\d{1,6}$/.test(index)
      ? room.cells().find((cell) => cell.id === cellId)?.outputs[Number(index)]
      : undefined;
    const data = (output?.data ?? {}) as Record<string, unknown>;
    const markup = data['text/html'] ?? data['image/svg+xml'];
    if (markup === undefined) {
      this.answer(response, 404, 'text/plain', `No HTML or SVG output ${index} in cell ${cellId}.`);
      return;
    }
    const text = outputValueText(markup);
    response.writeHead(200, { ...outputFrameHeaders, 'Content-Type': 'text/html; charset=utf-8' });
    response.end(renderOutputFrame(text));
  }

  /**
   * One large output value the page was given a reference to (see {@link referenceCell}): an
   * image as its bytes, any other value as text (never as markup: HTML and SVG show through their
   * frame's document). The URL names the content's hash, so the answer is cached for good (and
   * answered 304 to a revalidation); 404 when the cell has no such value, or no longer this one.
   */
  private outputValue(
    request: IncomingMessage,
    response: ServerResponse,
    room: NonNullable<ReturnType<RoomCatalog['get']>>,
    cellId: string,
    index: string,
    encodedMime: string,
  ): void {
    const wanted = new URL(request.url ?? '/', 'http://127.0.0.1').searchParams.get('v');
    let mime: string;
    let id: string;
    try {
      mime = decodeURIComponent(encodedMime);
      id = decodeURIComponent(cellId);
    } catch {
      this.answer(response, 404, 'text/plain', 'Not found.');
      return;
    }
    const cell = room.cells().find((candidate) => candidate.id === id);
    const output = /^\d{1,6}$/.test(index) ? cell?.outputs[Number(index)] : undefined;
    const value = ((output?.data ?? {}) as Record<string, unknown>)[mime];
    // A value kept in a blob is hashed by its name and read only to answer.
    const text = value === undefined || value instanceof BlobText ? undefined : outputValueText(value);
    const hash =
      value instanceof BlobText ? blobValueHash(value) : text === undefined ? undefined : outputValueHash(text);
    if (value === undefined || hash !== wanted) {
      this.answer(response, 404, 'text/plain', `No such output value ${index}/${mime} in cell ${cellId} (any more).`);
      return;
    }
    const headers = {
      ...securityHeaders,
      'Content-Security-Policy': "sandbox; default-src 'none'",
      'Cache-Control': 'private, max-age=31536000, immutable',
      ETag: `"${hash}"`,
    };
    if (request.headers['if-none-match'] === `"${hash}"`) {
      response.writeHead(304, headers);
      response.end();
      return;
    }
    const image = /^image\/(png|jpeg|gif|webp)$/.test(mime);
    if (value instanceof BlobText && !image) {
      // A text in a blob goes out as the blob's bytes (its UTF-8), streamed from the file.
      this.streamBlob(response, { ...headers, 'Content-Type': 'text/plain; charset=utf-8' }, value);
      return;
    }
    const whole = text ?? outputValueText(value);
    response.writeHead(200, { ...headers, 'Content-Type': image ? mime : 'text/plain; charset=utf-8' });
    response.end(image ? Buffer.from(whole, 'base64') : whole);
  }

  /** Answers `value`'s blob file as the body (a missing blob: the text saying it is lost). */
  private streamBlob(response: ServerResponse, headers: Record<string, string>, value: BlobText): void {
    const file = createReadStream(value.path);
    file.once('open', () => {
      response.writeHead(200, headers);
      file.pipe(response);
    });
    file.once('error', () => {
      if (response.headersSent) {
        response.destroy();
        return;
      }
      response.writeHead(200, headers);
      response.end(value.text());
    });
  }

  private json(response: ServerResponse, status: number, body: unknown): void {
    this.answer(response, status, 'application/json', JSON.stringify(body));
  }

  private answer(response: ServerResponse, status: number, type: string, body: string | Buffer): void {
    response.writeHead(status, { ...securityHeaders, 'Content-Type': `${type}; charset=utf-8` });
    response.end(body);
  }
}

/** The body of `request` as text, refusing one over {@link maxBodyBytes}. */
function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBodyBytes) {
        reject(new Error(`over ${maxBodyBytes} bytes`));
        request.destroy();
        return;
      }
      chunks.push(chunk);
    });
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}
