import { randomBytes, timingSafeEqual } from 'node:crypto';

/** The cookie the page keeps the token in, once it came in the URL. */
export const pageCookieName = 'runtimed_page';

/** What a request carries that access depends on. */
export interface PageRequest {
  readonly method: string;
  /** The request target: path and query (`/notebooks/x?token=…`). */
  readonly url: string;
  readonly host: string | undefined;
  readonly origin: string | undefined;
  readonly cookie: string | undefined;
}

/**
 * The decision on one request:
 * - `allow`: serve it;
 * - `adopt`: the token came in the URL and is right: set the cookie and send the browser to the
 *   same address without the token (so it stays out of history, bookmarks and Referer);
 * - `refuse`: a clear 4xx, nothing served or changed.
 */
export type PageDecision =
  | { readonly kind: 'allow' }
  | { readonly kind: 'adopt'; readonly location: string; readonly setCookie: string }
  | { readonly kind: 'refuse'; readonly status: 400 | 403; readonly message: string };

/**
 * Who may use the page server, as Jupyter Server decides it: a random token per daemon, accepted
 * once from the URL and then kept in an HttpOnly, SameSite=Strict cookie; the Host must be the
 * loopback address the server listens on (no DNS rebinding); a request that carries an Origin must
 * come from the page itself (no cross-site use), and one that changes something must carry it.
 */
export class PageAccess {
  readonly #token: Buffer;
  readonly #hosts: ReadonlySet<string>;
  readonly #origins: ReadonlySet<string>;

  public constructor(
    public readonly token: string,
    port: number,
  ) {
    this.#token = Buffer.from(token);
    this.#hosts = new Set([`127.0.0.1:${port}`, `localhost:${port}`]);
    this.#origins = new Set([...this.#hosts].map((host) => `http://${host}`));
  }

  /** A new random token (32 bytes, hex). */
  public static newToken(): string {
    return randomBytes(32).toString('hex');
  }

  public decide(request: PageRequest): PageDecision {
    const host = request.host?.toLowerCase();
    if (host === undefined || !this.#hosts.has(host)) {
      return { kind: 'refuse', status: 403, message: 'This page is served to 127.0.0.1 only (Host refused).' };
    }
    const changes = request.method !== 'GET' && request.method !== 'HEAD';
    if (request.origin !== undefined ? !this.#origins.has(request.origin.toLowerCase()) : changes) {
      return { kind: 'refuse', status: 403, message: 'Cross-site request refused (Origin).' };
    }
    let url: URL;
    try {
      url = new URL(request.url, 'http://127.0.0.1');
    } catch {
      return { kind: 'refuse', status: 400, message: 'Bad request target.' };
    }
    const offered = url.searchParams.get('token');
    if (offered !== null) {
      if (!this.matches(offered)) return { kind: 'refuse', status: 403, message: refusedText };
      url.searchParams.delete('token');
      return {
        kind: 'adopt',
        location: `${url.pathname}${url.search}`,
        setCookie: `${pageCookieName}=${this.token}; HttpOnly; SameSite=Strict; Path=/`,
      };
    }
    const cookie = readCookie(request.cookie, pageCookieName);
    if (cookie === undefined || !this.matches(cookie)) return { kind: 'refuse', status: 403, message: refusedText };
    return { kind: 'allow' };
  }

  private matches(candidate: string): boolean {
    const offered = Buffer.from(candidate);
    return offered.length === this.#token.length && timingSafeEqual(offered, this.#token);
  }
}

const refusedText =
  'Not allowed: open the address `runtimed open` or the show_notebook tool gives (it carries the token).';

function readCookie(header: string | undefined, name: string): string | undefined {
  for (const part of header?.split(';') ?? []) {
    const [key, ...value] = part.trim().split('=');
    if (key === name) return value.join('=');
  }
  return undefined;
}
