/** Where the page keeps its session: this origin's storage (scheme, host and port), never a cookie. */
const sessionKey = 'runtimed-session';

/** What the page says when it has no session the daemon takes (none, or its token was rotated). */
export const sessionRefusedText =
  'This page is not open to you yet: open it from the address `runtimed open` or the show_notebook tool gives (each opens it once).';

/** Thrown by {@link sessionFetch} when the daemon refuses the page's session (401). */
export class SessionRefusedError extends Error {
  public constructor(message = sessionRefusedText) {
    super(message);
    this.name = 'SessionRefusedError';
  }
}

/**
 * The page's session with the daemon: taken from a launch address (`#launch=<code>`, posted once
 * to `/api/session`, then removed from the address and so from history), kept in this origin's
 * `localStorage`, and sent by the page's script as `Authorization: Bearer` on every API call. A
 * browser sends nothing of it by itself (no cookie), so no other site or local server can make it
 * act. Resolves with why the page cannot open (a refused launch, or no launch and no session), if so.
 */
export async function startSession(): Promise<string | undefined> {
  const launch = new URLSearchParams(location.hash.slice(1)).get('launch');
  if (launch === null) return localStorage.getItem(sessionKey) === null ? sessionRefusedText : undefined;
  history.replaceState(history.state, '', `${location.pathname}${location.search}`);
  const answer = await fetch('/api/session', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ launch }),
  });
  const body = (await answer.json().catch(() => ({}))) as { session?: unknown; message?: unknown };
  if (answer.ok && typeof body.session === 'string') {
    localStorage.setItem(sessionKey, body.session);
    return undefined;
  }
  // A spent code with a session still kept (a reload of the launch address) is no refusal.
  if (localStorage.getItem(sessionKey) !== null) return undefined;
  return typeof body.message === 'string' ? body.message : `HTTP ${answer.status}`;
}

/** `fetch` with the page's session; rejects with {@link SessionRefusedError} on a 401. */
export async function sessionFetch(input: string, init: RequestInit = {}): Promise<Response> {
  const session = localStorage.getItem(sessionKey);
  if (session === null) throw new SessionRefusedError();
  const headers = new Headers(init.headers);
  headers.set('Authorization', `Bearer ${session}`);
  const answer = await fetch(input, { ...init, headers });
  if (answer.status === 401) throw new SessionRefusedError();
  return answer;
}
