import { request } from 'node:http';
import { CoreError } from '@nteract-mcp/core';
import { ManualClock } from '@nteract-mcp/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { defaultTokenPageMs, HostedTokenPage, tokenPageEndedCode } from './hosted-token-page.js';

const label = 'the Jupyter Server at http://127.0.0.1:8888/';
const pages: HostedTokenPage[] = [];
afterEach(() => {
  for (const page of pages.splice(0)) page.close();
});

async function openPage(clock = new ManualClock()): Promise<HostedTokenPage> {
  const page = await HostedTokenPage.open({ serverLabel: label, clock });
  pages.push(page);
  return page;
}

function post(url: string, body: string, headers: Record<string, string> = {}) {
  return fetch(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded', ...headers },
    body,
  });
}

/** A GET of `url` with its Host header set to `host` (fetch may not set it). */
function getWithHost(url: string, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const call = request(url, { headers: { host } }, (response) => {
      response.resume();
      resolve(response.statusCode ?? 0);
    });
    call.on('error', reject);
    call.end();
  });
}

/** Whether anything still answers at `url`. */
async function answers(url: string): Promise<boolean> {
  return fetch(url).then(
    () => true,
    () => false,
  );
}

describe(HostedTokenPage, () => {
  it('serves a form naming the server at a random loopback port and an unguessable path, not cached, not framed', async () => {
    const page = await openPage();
    expect(page.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/token\/[A-Za-z0-9_-]{43}$/);
    expect(page.url).not.toContain(page.elicitationId);
    const shown = await fetch(page.url);
    expect(shown.status).toBe(200);
    expect(shown.headers.get('cache-control')).toBe('no-store');
    expect(shown.headers.get('x-frame-options')).toBe('DENY');
    const html = await shown.text();
    expect(html).toContain('needs a token for the Jupyter Server at http://127.0.0.1:8888/');
    expect(html).toContain('<input type="password" name="token"');
    const other = await openPage();
    expect(other.url).not.toBe(page.url);
  });

  it('takes one token: the person’s paste resolves it, the answer does not repeat it, and the page is gone after', async () => {
    const page = await openPage();
    const answered = await post(page.url, `token=${encodeURIComponent(' s3cret-token ')}`);
    expect(answered.status).toBe(200);
    const text = await answered.text();
    expect(text).toContain('Received');
    expect(text).not.toContain('s3cret-token');
    expect((await page.token()).reveal()).toBe('s3cret-token');
    await expect.poll(() => answers(page.url)).toBe(false);
  });

  it('refuses what does not name the page, another Host, another origin and other methods, without using the page up; an empty form is asked again', async () => {
    const page = await openPage();
    const origin = new URL(page.url).origin;
    expect((await fetch(`${origin}/token/wrong`)).status).toBe(404);
    expect((await fetch(`${page.url.slice(0, -1)}x`)).status).toBe(404);
    expect((await fetch(`${origin}/`)).status).toBe(404);
    expect(await getWithHost(page.url, 'attacker.example:80')).toBe(404);
    expect((await post(page.url, 'token=t', { Origin: 'http://attacker.example' })).status).toBe(405);
    expect((await fetch(page.url, { method: 'PUT', body: 'token=t' })).status).toBe(405);
    const empty = await post(page.url, 'token=');
    expect(empty.status).toBe(400);
    expect(await empty.text()).toContain('No token was given');
    expect((await post(page.url, 'x'.repeat(32 * 1024))).status).toBe(413);
    // Still there, still waiting.
    expect((await fetch(page.url)).status).toBe(200);
    expect((await post(page.url, 'token=right')).status).toBe(200);
    expect((await page.token()).reveal()).toBe('right');
  });

  it('expires after 10 min without a token: the wait ends with that reason and the page answers no more', async () => {
    const clock = new ManualClock();
    const page = await openPage(clock);
    expect(defaultTokenPageMs).toBe(600_000);
    clock.advance(defaultTokenPageMs - 1);
    expect((await fetch(page.url)).status).toBe(200);
    clock.advance(1);
    const ended = await page.token().then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(CoreError.is(ended) && ended.code).toBe(tokenPageEndedCode);
    expect((ended as Error).message).toBe(
      'The page for a token for the Jupyter Server at http://127.0.0.1:8888/ expired after 10 min without one.',
    );
    await expect.poll(() => answers(page.url)).toBe(false);
  });
});
