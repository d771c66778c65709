import { randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Clock, CoreError, SecretToken, type Timer } from '@nteract-mcp/core';

/** How long a token page takes a token unless told otherwise. */
export const defaultTokenPageMs = 10 * 60_000;

/** The `code` of the `CoreError` of a token page that expired, or was closed, before a token came. */
export const tokenPageEndedCode = 'token_page_ended';

/** The most a submitted form may weigh (a token is far shorter). */
const maxBodyBytes = 16 * 1024;

const pageHeaders = {
  'Content-Type': 'text/html; charset=utf-8',
  'Cache-Control': 'no-store',
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
  'X-Content-Type-Options': 'nosniff',
  'Content-Security-Policy':
    "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'",
} as const;

export interface HostedTokenPageOptions {
  /** The server the token is for, as the page names it (`the Jupyter Server at http://…/`). */
  readonly serverLabel: string;
  readonly clock: Clock;
  /** How long the page takes a token (default {@link defaultTokenPageMs}). */
  readonly ttlMs?: number;
}

/**
 * A one-time local page where the person pastes a server's token: served on 127.0.0.1 on a random
 * port, at an unguessable path (`/token/<32 random bytes>`), for one token or until it expires
 * ({@link defaultTokenPageMs}), whichever comes first; then it stops listening. The token is read
 * from the form's body into a {@link SecretToken} and goes nowhere else: not into a log, the page,
 * or a file. Requests that do not name its path, or name another host (DNS rebinding) or come from
 * another origin, are refused and change nothing; an empty form is asked again.
 */
export class HostedTokenPage {
  /** The page's address, to give the person (its path is the only key to it). */
  public readonly url: string;
  /** The id of the elicitation that offers the page (not its key: it may be shown and logged). */
  public readonly elicitationId: string;
  readonly #server: Server;
  readonly #path: Buffer;
  readonly #origin: string;
  readonly #label: string;
  readonly #timer: Timer;
  readonly #token: Promise<SecretToken>;
  #settle: { resolve(token: SecretToken): void; reject(error: CoreError): void } | undefined;

  private constructor(server: Server, path: string, options: HostedTokenPageOptions) {
    const { port } = server.address() as AddressInfo;
    this.#server = server;
    this.#path = Buffer.from(path);
    this.#origin = `http://127.0.0.1:${port}`;
    this.url = `${this.#origin}${path}`;
    this.elicitationId = randomBytes(12).toString('hex');
    this.#label = options.serverLabel;
    this.#token = new Promise<SecretToken>((resolve, reject) => {
      this.#settle = { resolve, reject };
    });
    // Nobody may be waiting for it yet; an unread rejection is not an error.
    this.#token.catch(() => undefined);
    const ttlMs = options.ttlMs ?? defaultTokenPageMs;
    this.#timer = options.clock.setTimer(ttlMs, () =>
      this.end(
        new CoreError(
          'invalidRequest',
          `The page for a token for ${this.#label} expired after ${describeDuration(ttlMs)} without one.`,
          { code: tokenPageEndedCode },
        ),
      ),
    );
    server.on('request', (request, response) => this.serve(request, response));
  }

  /** Opens a page on a free port of 127.0.0.1. */
  public static async open(options: HostedTokenPageOptions): Promise<HostedTokenPage> {
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
    return new HostedTokenPage(server, `/token/${randomBytes(32).toString('base64url')}`, options);
  }

  /** The token the person gave; rejects with {@link tokenPageEndedCode} when the page expired or was closed first. */
  public token(): Promise<SecretToken> {
    return this.#token;
  }

  /** Stops the page (a token not given by now never will be). */
  public close(): void {
    this.end(
      new CoreError('invalidRequest', `The page for a token for ${this.#label} was closed without one.`, {
        code: tokenPageEndedCode,
      }),
    );
  }

  private end(reason: CoreError, token?: SecretToken): void {
    const settle = this.#settle;
    if (!settle) return;
    this.#settle = undefined;
    this.#timer.cancel();
    this.#server.close();
    this.#server.closeIdleConnections();
    if (token) settle.resolve(token);
    else settle.reject(reason);
  }

  private serve(request: IncomingMessage, response: ServerResponse): void {
    if (
      !this.#settle ||
      !this.isOwnPath(request.url) ||
      request.headers.host !== this.#origin.slice('http://'.length)
    ) {
      response.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8', 'Cache-Control': 'no-store' });
      response.end('Not found.\n');
      return;
    }
    if (request.method === 'GET') {
      this.page(response, 200);
      return;
    }
    const origin = request.headers.origin;
    if (request.method !== 'POST' || (origin !== undefined && origin !== this.#origin)) {
      response.writeHead(405, { 'Content-Type': 'text/plain; charset=utf-8', Allow: 'GET, POST' });
      response.end('Not allowed.\n');
      return;
    }
    readForm(request).then(
      (form) => {
        const given = form?.get('token')?.trim() ?? '';
        if (given === '') {
          this.page(response, 400, 'No token was given: paste it in the field.');
          return;
        }
        response.writeHead(200, { ...pageHeaders, Connection: 'close' });
        response.end(
          document(
            `<p>Received. nteract-mcp tries it on ${escapeHtml(this.#label)} now; the agent hears how it went.</p><p>You can close this page.</p>`,
          ),
        );
        this.end(new CoreError('invalidRequest', 'already given'), new SecretToken(given));
      },
      () => {
        response.writeHead(413, { 'Content-Type': 'text/plain; charset=utf-8', Connection: 'close' });
        response.end('Too large.\n');
      },
    );
  }

  private isOwnPath(url: string | undefined): boolean {
    const path = Buffer.from((url ?? '').split('?')[0] as string);
    return path.length === this.#path.length && timingSafeEqual(path, this.#path);
  }

  private page(response: ServerResponse, status: number, problem?: string): void {
    response.writeHead(status, pageHeaders);
    response.end(
      document(
        `<p>nteract-mcp (the MCP server of your AI agent) needs a token for ${escapeHtml(this.#label)}.</p>
<p>Paste it here. It goes to that MCP server only and is kept in its memory for that server; it is not shown to the agent, written to a file or logged. This page works once.</p>
${problem === undefined ? '' : `<p role="alert"><strong>${escapeHtml(problem)}</strong></p>`}
<form method="post" autocomplete="off">
<label>Token <input type="password" name="token" required autofocus></label>
<button type="submit">Give the token</button>
</form>`,
      ),
    );
  }
}

/** The form of a POST (`application/x-www-form-urlencoded`); rejects past {@link maxBodyBytes}. */
function readForm(request: IncomingMessage): Promise<URLSearchParams | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      // Past the bound the rest is read and dropped, so the refusal can be answered.
      if (size <= maxBodyBytes) chunks.push(chunk);
    });
    request.on('end', () => {
      if (size > maxBodyBytes) {
        reject(new Error('too large'));
        return;
      }
      const type = request.headers['content-type'] ?? '';
      if (!type.startsWith('application/x-www-form-urlencoded')) resolve(undefined);
      else resolve(new URLSearchParams(Buffer.concat(chunks).toString('utf8')));
    });
    request.on('error', reject);
  });
}

function document(body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>A token for nteract-mcp</title>
<style>body{font-family:system-ui,sans-serif;max-width:40rem;margin:3rem auto;padding:0 1rem;line-height:1.5}input{width:100%;margin:.5rem 0 1rem;padding:.4rem}</style>
</head><body>
${body}
</body></html>
`;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function describeDuration(ms: number): string {
  return ms % 60_000 === 0 ? `${ms / 60_000} min` : `${Math.round(ms / 1000)} s`;
}
