import { describe, expect, it } from 'vitest';
import { launchLifetimeMs, PageAccess, type PageRequest, sessionPath } from './page-access.js';

const token = 'a'.repeat(64);
const port = 4321;
const notebookId = '11111111-2222-3333-4444-555555555555';
const otherNotebookId = '66666666-7777-8888-9999-000000000000';

const request = (overrides: Partial<PageRequest> = {}): PageRequest => ({
  method: 'GET',
  url: '/',
  host: `127.0.0.1:${port}`,
  origin: undefined,
  authorization: undefined,
  ...overrides,
});

/** A session of `access`, from a launch code it gave. */
function sessionOf(access: PageAccess): string {
  const redeemed = access.redeem(access.launchCode());
  if (!('session' in redeemed)) throw new Error(`no session: ${redeemed.refused}`);
  return redeemed.session;
}

const bearer = (session: string) => `Bearer ${session}`;

describe(PageAccess, () => {
  it('refuses another Host (DNS rebinding), whatever the session', () => {
    const access = new PageAccess(token, port);
    const session = sessionOf(access);
    for (const host of ['evil.example:4321', '127.0.0.1:80', 'localhost', '127.0.0.1', undefined]) {
      expect(access.decide(request({ host }))).toMatchObject({ kind: 'refuse', status: 403 });
      expect(access.decide(request({ host, url: '/api/rooms', authorization: bearer(session) }))).toMatchObject({
        kind: 'refuse',
        status: 403,
      });
    }
    expect(access.decide(request({ host: 'localhost:4321' }))).toEqual({ kind: 'allow' });
    expect(access.decide(request({ host: 'LOCALHOST:4321' }))).toEqual({ kind: 'allow' });
  });

  it('refuses a foreign Origin, and a change without an Origin', () => {
    const access = new PageAccess(token, port);
    const session = sessionOf(access);
    const api = { url: '/api/rooms', authorization: bearer(session) };
    for (const origin of ['http://evil.example', 'http://127.0.0.1:80', 'https://127.0.0.1:4321', 'null']) {
      expect(access.decide(request({ ...api, origin }))).toMatchObject({ kind: 'refuse', status: 403 });
      expect(access.decide(request({ origin }))).toMatchObject({ kind: 'refuse', status: 403 });
    }
    // A POST without an Origin: refused, even to the launch and with a session.
    expect(access.decide(request({ method: 'POST' }))).toMatchObject({ kind: 'refuse', status: 403 });
    expect(access.decide(request({ method: 'POST', url: sessionPath }))).toMatchObject({ status: 403 });
    expect(access.decide(request({ ...api, method: 'POST' }))).toMatchObject({ kind: 'refuse', status: 403 });
    // The page's own Origin (either loopback name): allowed.
    expect(access.decide(request({ ...api, method: 'POST', origin: 'http://127.0.0.1:4321' }))).toEqual({
      kind: 'allow',
      session,
    });
    expect(access.decide(request({ ...api, method: 'POST', origin: 'http://localhost:4321' }))).toEqual({
      kind: 'allow',
      session,
    });
    // A GET without an Origin (a navigation, an image): allowed.
    expect(access.decide(request(api))).toEqual({ kind: 'allow', session });
  });

  it('serves /api/ only with a valid session as a bearer', () => {
    const access = new PageAccess(token, port);
    const session = sessionOf(access);
    const [id, signature] = session.split('.') as [string, string];
    expect(access.decide(request({ url: '/api/rooms' }))).toMatchObject({ kind: 'refuse', status: 401 });
    for (const authorization of [
      'Bearer ',
      'Bearer nonsense',
      `Bearer ${id}`,
      `Bearer ${id}.${'x'.repeat(signature.length)}`,
      `Bearer ${id}x.${signature}`,
      `Bearer ${session}.extra`,
      `Basic ${session}`,
      session,
      `Bearer ${token}`,
    ]) {
      expect(access.decide(request({ url: '/api/rooms', authorization })), authorization).toMatchObject({
        kind: 'refuse',
        status: 401,
      });
    }
    expect(access.decide(request({ url: '/api/rooms', authorization: bearer(session) }))).toEqual({
      kind: 'allow',
      session,
    });
    expect(access.decide(request({ url: `/api/notebooks/${notebookId}?x=1`, authorization: bearer(session) }))).toEqual(
      { kind: 'allow', session },
    );
    // A session of another daemon (another token): refused.
    const other = new PageAccess('b'.repeat(64), port);
    expect(access.decide(request({ url: '/api/rooms', authorization: bearer(sessionOf(other)) }))).toMatchObject({
      kind: 'refuse',
      status: 401,
    });
  });

  it('lets anyone reach the launch, which the handler checks', () => {
    const access = new PageAccess(token, port);
    expect(access.decide(request({ method: 'POST', url: sessionPath, origin: 'http://127.0.0.1:4321' }))).toEqual({
      kind: 'allow',
    });
  });

  it('gives a session for a launch code once', () => {
    const access = new PageAccess(token, port);
    const code = access.launchCode();
    const first = access.redeem(code);
    expect(first).toEqual({ session: expect.any(String) });
    const second = access.redeem(code);
    expect(second).toEqual({ refused: expect.stringContaining('was used already') });
    expect('session' in second).toBe(false);
    // Each code gives its own session.
    const another = access.redeem(access.launchCode());
    expect('session' in another && 'session' in first && another.session !== first.session).toBe(true);
  });

  it('refuses an expired launch code', () => {
    const access = new PageAccess(token, port);
    const now = Date.UTC(2030, 0, 1);
    const code = access.launchCode(now);
    expect(access.redeem(code, now + launchLifetimeMs)).toEqual({ refused: expect.stringContaining('has expired') });
    expect(access.redeem(code, now + launchLifetimeMs + 1000)).toEqual({
      refused: expect.stringContaining('has expired'),
    });
    // Just inside its lifetime: it opens the page.
    expect(access.redeem(code, now + launchLifetimeMs - 1)).toEqual({ session: expect.any(String) });
  });

  it('refuses a forged or garbled launch code', () => {
    const access = new PageAccess(token, port);
    const code = access.launchCode();
    const [expiry, nonce, signature] = code.split('.') as [string, string, string];
    const otherCode = new PageAccess('b'.repeat(64), port).launchCode();
    const later = (Number.parseInt(expiry, 36) + launchLifetimeMs).toString(36);
    for (const forged of [
      undefined,
      null,
      42,
      { launch: code },
      '',
      'nonsense',
      `${expiry}.${nonce}`,
      `${expiry}.${nonce}.${signature}.x`,
      `${expiry}.${nonce}x.${signature}`,
      `${later}.${nonce}.${signature}`,
      `${expiry}.${nonce}.${signature.slice(0, -1)}`,
      `${expiry}.${nonce}.${'A'.repeat(signature.length)}`,
      otherCode,
    ]) {
      expect(access.redeem(forged), String(forged)).toEqual({
        refused: expect.stringContaining('is not one this daemon gave'),
      });
    }
    // None of these spent the real code.
    expect(access.redeem(code)).toEqual({ session: expect.any(String) });
  });

  it('after rotate() refuses every session, capability and launch code given before', () => {
    const access = new PageAccess(token, port);
    const session = sessionOf(access);
    const cap = access.outputCapability(session, notebookId);
    const unused = access.launchCode();
    const outputUrl = `/notebooks/${notebookId}/outputs/c1/0?cap=${cap}`;
    expect(access.decide(request({ url: '/api/rooms', authorization: bearer(session) }))).toEqual({
      kind: 'allow',
      session,
    });
    expect(access.decide(request({ url: outputUrl }))).toEqual({ kind: 'allow' });

    access.rotate();
    expect(access.token).not.toBe(token);
    expect(access.decide(request({ url: '/api/rooms', authorization: bearer(session) }))).toMatchObject({
      kind: 'refuse',
      status: 401,
    });
    expect(access.decide(request({ url: outputUrl }))).toMatchObject({ kind: 'refuse', status: 403 });
    expect(access.redeem(unused)).toEqual({ refused: expect.stringContaining('is not one this daemon gave') });
    // New ones work.
    const fresh = sessionOf(access);
    expect(access.decide(request({ url: '/api/rooms', authorization: bearer(fresh) }))).toEqual({
      kind: 'allow',
      session: fresh,
    });

    // Rotating to a given token: sessions signed with it work, those of the one before do not.
    access.rotate(token);
    expect(access.token).toBe(token);
    expect(access.decide(request({ url: '/api/rooms', authorization: bearer(session) }))).toEqual({
      kind: 'allow',
      session,
    });
    expect(access.decide(request({ url: '/api/rooms', authorization: bearer(fresh) }))).toMatchObject({
      status: 401,
    });
  });

  it('lets an output capability load outputs of its notebook only', () => {
    const access = new PageAccess(token, port);
    const session = sessionOf(access);
    const cap = access.outputCapability(session, notebookId);
    const frame = (id: string, query: string) => request({ url: `/notebooks/${id}/outputs/c1/0${query}` });
    expect(access.decide(frame(notebookId, `?cap=${cap}`))).toEqual({ kind: 'allow' });
    expect(access.decide(request({ url: `/notebooks/${notebookId}/outputs/c1/0/image%2Fpng?v=h&cap=${cap}` }))).toEqual(
      { kind: 'allow' },
    );
    // Another notebook, no capability, a garbled or forged one, a session instead of it: refused.
    expect(access.decide(frame(otherNotebookId, `?cap=${cap}`))).toMatchObject({ kind: 'refuse', status: 403 });
    expect(access.decide(frame(notebookId, ''))).toMatchObject({ kind: 'refuse', status: 403 });
    expect(access.decide(frame(notebookId, '?cap='))).toMatchObject({ kind: 'refuse', status: 403 });
    expect(access.decide(frame(notebookId, `?cap=${cap.split('.')[0]}`))).toMatchObject({ status: 403 });
    expect(access.decide(frame(notebookId, `?cap=x${cap}`))).toMatchObject({ status: 403 });
    expect(access.decide(frame(notebookId, `?cap=${session}`))).toMatchObject({ status: 403 });
    expect(access.decide({ ...frame(notebookId, ''), authorization: bearer(session) })).toMatchObject({
      status: 403,
    });
    // A capability of another daemon (another token), for the same session id and notebook: refused.
    const other = new PageAccess('b'.repeat(64), port);
    const otherCap = other.outputCapability(sessionOf(other), notebookId);
    expect(access.decide(frame(notebookId, `?cap=${otherCap}`))).toMatchObject({ kind: 'refuse', status: 403 });
    expect(access.decide(frame(notebookId, `?cap=${other.outputCapability(session, notebookId)}`))).toMatchObject({
      status: 403,
    });
    // The capability is no session.
    expect(access.decide(request({ url: '/api/rooms', authorization: bearer(cap) }))).toMatchObject({ status: 401 });
  });

  it('serves the shell, its script and the notebook pages to anyone, without a session', () => {
    const access = new PageAccess(token, port);
    for (const url of ['/', `/notebooks/${notebookId}`, '/assets/live-page.js', '/assets/live-page.css', '/x']) {
      expect(access.decide(request({ url })), url).toEqual({ kind: 'allow' });
      expect(access.decide(request({ url, method: 'HEAD' })), url).toEqual({ kind: 'allow' });
      expect(access.decide(request({ url, origin: 'http://127.0.0.1:4321' })), url).toEqual({ kind: 'allow' });
    }
  });
});
