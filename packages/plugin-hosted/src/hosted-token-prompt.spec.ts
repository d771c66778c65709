import {
  ElicitationCompleteNotificationSchema,
  ElicitRequestSchema,
  type ElicitResult,
} from '@modelcontextprotocol/sdk/types.js';
import { KeptCredentials } from '@nteract-mcp/core';
import {
  type ChildServerTestHarness,
  ManualClock,
  startChildServerTestHarness,
  toolError,
} from '@nteract-mcp/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { createHostedPlugin } from './create-hosted-plugin.js';
import { tokenHint } from './hosted-token-prompt.js';
import { FakeJupyterServer } from './testing/fake-jupyter-server.js';

const serverUrl = 'http://127.0.0.1:8888/';
const notebookUrl = `${serverUrl}lab/tree/a.ipynb`;
const notebook = { cells: [], metadata: { kernelspec: { name: 'python3' } }, nbformat: 4, nbformat_minor: 5 };

/** What the person does when the client offers the page: paste this token, or answer so. */
type Person = { readonly paste: string } | { readonly answer: 'decline' | 'cancel' } | { readonly wait: true };

let harness: ChildServerTestHarness;
afterEach(async () => {
  await harness.close();
});

/**
 * The child with the hosted plugin over a fake Jupyter Server whose token is `right-token`, and a
 * client that declares `capabilities` and, asked with a URL elicitation, acts as `person` does
 * (the page is fetched, and the token posted as its form does).
 */
async function start(options: {
  person: Person;
  env?: Record<string, string>;
  capabilities?: Record<string, unknown>;
  clock?: ManualClock;
}) {
  const server = new FakeJupyterServer('right-token');
  server.writeFile('a.ipynb', notebook);
  harness = await startChildServerTestHarness({
    clientCapabilities: options.capabilities ?? { elicitation: { url: {} } },
    plugins: [createHostedPlugin({ env: options.env ?? { JUPYTER_TOKEN: 'old-token' }, connector: server })],
    ...(options.clock ? { clock: options.clock } : {}),
  });
  const asked: { mode?: string; url?: string; message?: string; elicitationId?: string }[] = [];
  const pages: string[] = [];
  const completed: string[] = [];
  harness.client.setRequestHandler(ElicitRequestSchema, async (request): Promise<ElicitResult> => {
    const params = request.params as (typeof asked)[number];
    asked.push(params);
    const { person } = options;
    if ('answer' in person) return { action: person.answer };
    if ('paste' in person) {
      const url = params.url as string;
      // The person opens the page and pastes the token, once the client let them go there.
      setImmediate(async () => {
        pages.push(await (await fetch(url)).text());
        await fetch(url, {
          method: 'POST',
          headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({ token: person.paste }).toString(),
        });
      });
    }
    return { action: 'accept' };
  });
  harness.client.setNotificationHandler(ElicitationCompleteNotificationSchema, (notification) => {
    completed.push(notification.params.elicitationId);
  });
  return { server, asked, pages, completed };
}

/** Whether anything still answers at `url`. */
async function answers(url: string): Promise<boolean> {
  return fetch(url).then(
    () => true,
    () => false,
  );
}

/** Neither token in the logs. */
function expectNoTokenLogged(): void {
  const logged = JSON.stringify(harness.logger.records);
  expect(logged).not.toContain('right-token');
  expect(logged).not.toContain('wrong-token');
  expect(logged).not.toContain('old-token');
}

describe('a hosted server that refuses its token asks the person for one (URL-mode elicitation)', () => {
  it('the person is sent to a one-time local page naming the server; the token pasted there opens the notebook, is kept for that server only, and shows up in no result or log', async () => {
    const { asked, pages, completed } = await start({ person: { paste: 'right-token' } });
    const result = await harness.call('connect_notebook', { url: notebookUrl });
    expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
    expect(JSON.parse((result.content[0] as { text: string }).text)).toMatchObject({
      connected: true,
      path: notebookUrl,
    });
    expect(asked).toHaveLength(1);
    expect(asked[0]?.mode).toBe('url');
    expect(asked[0]?.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/token\/[A-Za-z0-9_-]{43}$/);
    expect(asked[0]?.message).toBe(
      `The Jupyter Server at ${serverUrl} refused the token nteract-mcp has for it. Open this page to paste one: it goes to nteract-mcp only (not to the agent) and is kept in its memory for that server.`,
    );
    expect(pages[0]).toContain(`needs a token for the Jupyter Server at ${serverUrl}`);
    expect(completed).toEqual([asked[0]?.elicitationId]);
    const kept = harness.container.get(KeptCredentials).list();
    expect(kept).toEqual([{ scope: serverUrl, token: 'right-token' }]);
    expect(JSON.stringify(result)).not.toContain('right-token');
    expectNoTokenLogged();
    expect(await answers(asked[0]?.url as string)).toBe(false);
    // Kept: the next connect needs nobody.
    expect((await harness.callJson('connect_notebook', { url: notebookUrl })).connected).toBe(true);
    expect(asked).toHaveLength(1);
  });

  it('no token at all: the message says nteract-mcp has none for that JupyterHub server; the pasted one opens the notebook', async () => {
    const { asked } = await start({ person: { paste: 'right-token' }, env: {} });
    const url = 'http://hub.test/user/alice/lab/tree/a.ipynb';
    expect((await harness.callJson('connect_notebook', { url })).connected).toBe(true);
    expect(asked[0]?.message).toMatch(
      /^nteract-mcp has no token for the JupyterHub server of user 'alice' \(http:\/\/hub\.test\/user\/alice\/\)\. Open this page/,
    );
  });

  it('create_notebook on a server that refuses the token asks the same way and creates it with the pasted token', async () => {
    const { server, asked } = await start({ person: { paste: 'right-token' } });
    const created = await harness.callJson('create_notebook', { url: `${serverUrl}lab/tree/new.ipynb` });
    expect(created).toMatchObject({ url: `${serverUrl}lab/tree/new.ipynb` });
    expect(server.file('new.ipynb')).toBeDefined();
    expect(asked).toHaveLength(1);
  });

  it('a wrong token pasted: the refusal says the person’s token was refused too; nothing is kept, the page is gone', async () => {
    const { asked } = await start({ person: { paste: 'wrong-token' } });
    const refused = await toolError(harness.call('connect_notebook', { url: notebookUrl }));
    expect(refused).toContain('The token the person gave on the page was refused too.');
    expect(refused).toContain(`the Jupyter Server at ${serverUrl} refused the credentials (HTTP 403)`);
    expect(refused).not.toContain('wrong-token');
    expect(harness.container.get(KeptCredentials).list()).toEqual([]);
    expect(await answers(asked[0]?.url as string)).toBe(false);
    expect(harness.slot.active).toBeUndefined();
    expectNoTokenLogged();
  });

  it('the person declines: today’s refusal, saying they declined; the page is gone', async () => {
    const { asked } = await start({ person: { answer: 'decline' } });
    const refused = await toolError(harness.call('connect_notebook', { url: notebookUrl }));
    expect(refused).toContain('refused the credentials (HTTP 403)');
    expect(refused).toContain('The person was asked for a token on a local page and declined.');
    expect(await answers(asked[0]?.url as string)).toBe(false);
  });

  it('the link expires (10 min, no token pasted): the refusal says so, and the page answers no more', async () => {
    const clock = new ManualClock();
    const { asked } = await start({ person: { wait: true }, clock });
    const call = toolError(harness.call('connect_notebook', { url: notebookUrl }));
    await expect.poll(() => asked.length).toBe(1);
    const url = asked[0]?.url as string;
    expect(await answers(url)).toBe(true);
    clock.advance(10 * 60_000);
    const refused = await call;
    expect(refused).toContain('refused the credentials (HTTP 403)');
    expect(refused).toContain(
      `The person was asked for a token on a local page: The page for a token for the Jupyter Server at ${serverUrl} expired after 10 min without one.`,
    );
    expect(await answers(url)).toBe(false);
    expect(harness.container.get(KeptCredentials).list()).toEqual([]);
  });

  it('while the person has the page, the call says as its progress every 10 s that it still waits for them', async () => {
    const clock = new ManualClock();
    const { asked } = await start({ person: { wait: true }, clock });
    const progress: { progress: number; message?: string }[] = [];
    const call = toolError(
      harness.call('connect_notebook', { url: notebookUrl }, { onProgress: (update) => progress.push(update) }),
    );
    await expect.poll(() => asked.length).toBe(1);
    clock.advance(10_000);
    await expect.poll(() => progress.length).toBe(1);
    clock.advance(10_000);
    await expect.poll(() => progress.length).toBe(2);
    expect(progress.map((update) => update.progress)).toEqual([10, 20]);
    expect(progress[1]?.message).toBe(
      `Waiting for the person to paste a token for the Jupyter Server at ${serverUrl} on the local page (20 s so far).`,
    );
    clock.advance(10 * 60_000);
    expect(await call).toContain('expired after 10 min without one');
  });

  it('the client cancels the call while the person has the page: the page closes at once and nothing is kept', async () => {
    const { asked } = await start({ person: { wait: true } });
    const cancel = new AbortController();
    const call = harness.call('connect_notebook', { url: notebookUrl }, { signal: cancel.signal });
    call.catch(() => undefined);
    await expect.poll(() => asked.length).toBe(1);
    const url = asked[0]?.url as string;
    expect(await answers(url)).toBe(true);
    cancel.abort('the person pressed stop');
    await expect(call).rejects.toThrow();
    await expect.poll(() => answers(url)).toBe(false);
    expect(harness.container.get(KeptCredentials).list()).toEqual([]);
    expect(harness.slot.active).toBeUndefined();
  });

  it('a client without URL-mode elicitation gets today’s refusal and how to give a token; nobody is asked', async () => {
    const { asked } = await start({ person: { paste: 'right-token' }, capabilities: { elicitation: { form: {} } } });
    const refused = await toolError(harness.call('connect_notebook', { url: notebookUrl }));
    expect(refused).toContain('refused the credentials (HTTP 403)');
    expect(refused).toContain(tokenHint);
    expect(asked).toEqual([]);
  });
});
