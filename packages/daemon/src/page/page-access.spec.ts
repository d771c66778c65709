import { describe, expect, it } from 'vitest';
import { PageAccess, type PageRequest, pageCookieName } from './page-access.js';

const token = 'a'.repeat(64);
const access = new PageAccess(token, 4321);
const request = (overrides: Partial<PageRequest> = {}): PageRequest => ({
  method: 'GET',
  url: '/',
  host: '127.0.0.1:4321',
  origin: undefined,
  cookie: `${pageCookieName}=${token}`,
  ...overrides,
});

describe(PageAccess, () => {
  it('serves a request with the cookie, from the loopback host', () => {
    expect(access.decide(request())).toEqual({ kind: 'allow' });
    expect(access.decide(request({ host: 'localhost:4321' }))).toEqual({ kind: 'allow' });
  });

  it('takes the token once from the URL: sets an HttpOnly SameSite=Strict cookie and drops it from the address', () => {
    const decision = access.decide(request({ url: `/notebooks/n1?token=${token}&cell=c2`, cookie: undefined }));
    expect(decision).toEqual({
      kind: 'adopt',
      location: '/notebooks/n1?cell=c2',
      setCookie: `${pageCookieName}=${token}; HttpOnly; SameSite=Strict; Path=/`,
    });
  });

  it('refuses a request without the token, or with a wrong one', () => {
    expect(access.decide(request({ cookie: undefined }))).toMatchObject({ kind: 'refuse', status: 403 });
    expect(access.decide(request({ cookie: `${pageCookieName}=${'b'.repeat(64)}` }))).toMatchObject({ status: 403 });
    expect(access.decide(request({ url: '/?token=short', cookie: undefined }))).toMatchObject({ status: 403 });
  });

  it('refuses another Host (DNS rebinding), whatever the token', () => {
    for (const host of ['evil.example:4321', '127.0.0.1:80', undefined]) {
      expect(access.decide(request({ host }))).toMatchObject({ kind: 'refuse', status: 403 });
    }
  });

  it('refuses a foreign Origin, and a change without an Origin', () => {
    expect(access.decide(request({ origin: 'http://evil.example' }))).toMatchObject({ status: 403 });
    expect(access.decide(request({ method: 'POST' }))).toMatchObject({ status: 403 });
    expect(access.decide(request({ method: 'POST', origin: 'http://127.0.0.1:4321' }))).toEqual({ kind: 'allow' });
  });
});
