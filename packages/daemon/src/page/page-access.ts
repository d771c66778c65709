import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** What a request carries that access depends on. */
export interface PageRequest {
  readonly method: string;
  /** The request target: path and query (`/api/rooms`, `/notebooks/x/outputs/c/0?cap=…`). */
  readonly url: string;
  readonly host: string | undefined;
  readonly origin: string | undefined;
  /** The `Authorization` header (`Bearer <session>`), which only the page's own script sends. */
  readonly authorization: string | undefined;
}

/**
 * The decision on one request:
 * - `allow`: serve it; `session` names the page session that asked (absent for what anyone may
 *   read: the page shell and its script, which hold nothing of a notebook; and the launch);
 * - `refuse`: a clear 4xx, nothing served or changed.
 */
export type PageDecision =
  | { readonly kind: 'allow'; readonly session?: string }
  | { readonly kind: 'refuse'; readonly status: 400 | 401 | 403; readonly message: string };

/** How long a launch address opens the page (it opens it once). */
export const launchLifetimeMs = 60 * 60 * 1000;

/** The path a page posts its launch code to, for its session. */
export const sessionPath = '/api/session';

/**
 * Who may use the page server. Nothing the browser sends by itself (a cookie, a basic-auth
 * header) is a credential, so nothing another server on 127.0.0.1 (any port: browsers send a
 * host's cookies to all its ports) or a page of another origin can make the browser send is one:
 *
 * - The token (`page.json`, 0600, rotated by {@link rotate}) never leaves the daemon's own user:
 *   it signs what the page uses, it is never sent to a browser.
 * - A **launch code** (from {@link launchCode}: `runtimed open`, the show_notebook tool) opens the
 *   page once, within {@link launchLifetimeMs}: it travels in the address's fragment (never sent
 *   to a server), the page posts it to {@link sessionPath} and removes it from the address, so a
 *   copy in history, in a process's arguments or in a screenshot is spent.
 * - A **session** (what {@link redeem} gives for a launch code: a random id and its signature)
 *   lives in the page's own storage (per origin: scheme, host and port) and is sent by its script
 *   as `Authorization: Bearer`; every `/api/` request needs it, a page peer acts only for the
 *   session that opened it.
 * - An **output capability** (from {@link outputCapability}, per session and notebook) in the
 *   query lets the page's `<img>` and sandboxed `<iframe>` load that notebook's outputs, and
 *   nothing else.
 * - The Host must be the loopback address the server listens on (no DNS rebinding); a request with
 *   an Origin must come from the page itself, and one that changes something must carry it.
 *
 * Sessions and codes are signatures, not records: they outlive a daemon restart (the token is
 * kept) and all die when the token is rotated.
 */
export class PageAccess {
  #token: string;
  readonly #hosts: ReadonlySet<string>;
  readonly #origins: ReadonlySet<string>;
  /** Launch codes used, until they expire: a code opens one page. */
  readonly #spent = new Map<string, number>();

  public constructor(token: string, port: number) {
    this.#token = token;
    this.#hosts = new Set([`127.0.0.1:${port}`, `localhost:${port}`]);
    this.#origins = new Set([...this.#hosts].map((host) => `http://${host}`));
  }

  /** A new random token (32 bytes, hex). */
  public static newToken(): string {
    return randomBytes(32).toString('hex');
  }

  /** The token sessions and codes are signed with (`page.json`; give it to no browser). */
  public get token(): string {
    return this.#token;
  }

  /** Replaces the token: every session, capability and launch code given so far stops working. */
  public rotate(token = PageAccess.newToken()): void {
    this.#token = token;
    this.#spent.clear();
  }

  /** A code that opens the page once before `now + launchLifetimeMs`. */
  public launchCode(now = Date.now()): string {
    const body = `${(now + launchLifetimeMs).toString(36)}.${randomBytes(12).toString('base64url')}`;
    return `${body}.${this.sign(`launch:${body}`)}`;
  }

  /**
   * A session for a launch code that is right, unexpired and unused (the code is spent), or why
   * not. The session is `<id>.<signature>`.
   */
  public redeem(code: unknown, now = Date.now()): { readonly session: string } | { readonly refused: string } {
    for (const [spent, expiry] of this.#spent) if (expiry <= now) this.#spent.delete(spent);
    const parts = typeof code === 'string' ? code.split('.') : [];
    const [expiry, nonce, signature] = parts;
    const body = `${expiry}.${nonce}`;
    if (parts.length !== 3 || signature === undefined || !this.verify(`launch:${body}`, signature)) {
      return { refused: launchRefusal('is not one this daemon gave (or its token was rotated since)') };
    }
    const expiresAt = Number.parseInt(expiry ?? '', 36);
    if (!(expiresAt > now)) return { refused: launchRefusal('has expired') };
    if (this.#spent.has(body)) return { refused: launchRefusal('was used already') };
    this.#spent.set(body, expiresAt);
    const id = randomBytes(16).toString('base64url');
    return { session: `${id}.${this.sign(`session:${id}`)}` };
  }

  /** What lets the page's images and frames of `notebookId` load for `session`: the `cap` query value. */
  public outputCapability(session: string, notebookId: string): string {
    const id = session.split('.')[0] ?? '';
    return `${id}.${this.sign(`output:${id}:${notebookId}`)}`;
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
    const path = url.pathname;
    if (path === sessionPath) return { kind: 'allow' };
    if (path.startsWith('/api/')) {
      const session = /^Bearer (\S+)$/.exec(request.authorization ?? '')?.[1];
      if (session === undefined || !this.validSession(session)) {
        return { kind: 'refuse', status: 401, message: sessionRefusal };
      }
      return { kind: 'allow', session };
    }
    const output = /^\/notebooks\/([^/]+)\/(?:outputs|files)\//.exec(path);
    if (output) {
      const [id, signature] = (url.searchParams.get('cap') ?? '').split('.');
      if (id === undefined || signature === undefined || !this.verify(`output:${id}:${output[1]}`, signature)) {
        return { kind: 'refuse', status: 403, message: sessionRefusal };
      }
      return { kind: 'allow' };
    }
    // The shell and its script: the same for everyone, holding nothing of a notebook.
    return { kind: 'allow' };
  }

  private validSession(session: string): boolean {
    const [id, signature, extra] = session.split('.');
    return (
      id !== undefined && signature !== undefined && extra === undefined && this.verify(`session:${id}`, signature)
    );
  }

  private sign(what: string): string {
    return createHmac('sha256', this.#token).update(what).digest('base64url');
  }

  private verify(what: string, signature: string): boolean {
    const expected = Buffer.from(this.sign(what));
    const offered = Buffer.from(signature);
    return offered.length === expected.length && timingSafeEqual(offered, expected);
  }
}

const sessionRefusal =
  'Not allowed: open the page from the address `runtimed open` or the show_notebook tool gives (it opens once).';

function launchRefusal(why: string): string {
  return `This page address ${why}. Ask the agent for a new one (show_notebook), or run \`runtimed open\`.`;
}
