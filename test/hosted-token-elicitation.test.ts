import {
  ElicitationCompleteNotificationSchema,
  ElicitRequestSchema,
  type ElicitResult,
} from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import {
  findSecretLeaks,
  type JupyterServerUnderTest,
  startJupyterServer,
  startUserSession,
  type ToolOutcome,
  type UserSession,
} from './support/index.js';

/**
 * A Jupyter Server whose token the agent does not have (Debian's python3-jupyter-server on a
 * loopback port), reached through the shipped proxy by a client that declares URL-mode elicitation:
 * the server's refusal sends the person (here: the client's handler, as a person in a browser would)
 * to a one-time local page, the token pasted there opens the notebook, and the token goes nowhere
 * else (no result, log, file, handoff or environment).
 */

const token = `tok-${process.pid}-${Date.now().toString(36)}-pasted`;
const sessions: UserSession[] = [];
const servers: JupyterServerUnderTest[] = [];
afterEach(async () => {
  for (const session of sessions.splice(0)) await session.stop();
  for (const server of servers.splice(0)) await server.dispose();
});

interface Asked {
  readonly mode?: string;
  readonly url?: string;
  readonly message?: string;
  readonly elicitationId?: string;
}

describe('a hosted server that refuses the token asks the person for one (URL-mode elicitation), through the shipped proxy', () => {
  it('the person pastes the token on the local page the client was sent; the notebook opens, a cell runs and is in the file on the server; a restarted child still has the token; nobody is asked twice; the token leaks nowhere', {
    timeout: 180_000,
  }, async () => {
    const server = await startJupyterServer({ token });
    servers.push(server);
    const put = await server.api('PUT', 'api/contents/work.ipynb', {
      type: 'notebook',
      format: 'json',
      content: { cells: [], metadata: { kernelspec: { name: 'python3' } }, nbformat: 4, nbformat_minor: 5 },
    });
    expect(put.status).toBeLessThan(300);
    // The agent has no token for the server: not in the URL, not in its environment.
    const session = await startUserSession({ capabilities: { elicitation: { url: {} } } });
    sessions.push(session);
    const asked: Asked[] = [];
    const pages: { status: number; html: string }[] = [];
    const posted: number[] = [];
    const completed: string[] = [];
    session.client.setRequestHandler(ElicitRequestSchema, async (request): Promise<ElicitResult> => {
      const params = request.params as Asked;
      asked.push(params);
      if (params.mode !== 'url' || params.url === undefined) return { action: 'decline' };
      const url = params.url;
      // The person follows the link, reads the page and pastes the token into its form.
      setImmediate(async () => {
        const shown = await fetch(url);
        pages.push({ status: shown.status, html: await shown.text() });
        const sent = await fetch(url, {
          method: 'POST',
          headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({ token }).toString(),
        });
        posted.push(sent.status);
      });
      return { action: 'accept' };
    });
    session.client.setNotificationHandler(ElicitationCompleteNotificationSchema, (notification) => {
      completed.push(notification.params.elicitationId);
    });
    const seen: ToolOutcome[] = [];
    const call = async (name: string, args: Record<string, unknown> = {}) => {
      const outcome = await session.call(name, args);
      seen.push(outcome);
      return outcome;
    };

    const url = server.notebookUrl('work.ipynb');
    const connected = await call('connect_notebook', { url });
    expect(connected.isError, connected.text).toBe(false);
    expect(connected.json).toMatchObject({ path: url, connected: true });
    expect(asked).toHaveLength(1);
    expect(asked[0]?.mode).toBe('url');
    expect(asked[0]?.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/token\/[A-Za-z0-9_-]{43}$/);
    expect(asked[0]?.message).toContain(`nteract-mcp has no token for the Jupyter Server at ${server.baseUrl}`);
    expect(pages).toEqual([{ status: 200, html: expect.stringContaining(`Jupyter Server at ${server.baseUrl}`) }]);
    expect(posted).toEqual([200]);
    expect(completed).toEqual([asked[0]?.elicitationId]);
    // One use: the page is gone.
    await expect(fetch(asked[0]?.url as string)).rejects.toThrow();

    const ran = await call('create_cell', { source: 'print(6 * 7)', and_run: true });
    expect(ran.isError, ran.text).toBe(false);
    expect(ran.text).toContain('42');
    await expect
      .poll(
        async () =>
          (
            (await server.api('GET', 'api/contents/work.ipynb')).json as { content: { cells: { source: string }[] } }
          ).content.cells.map((cell) => cell.source),
        { timeout: 30_000 },
      )
      .toEqual(['print(6 * 7)']);

    // A restarted child has the token from the proxy (memory, a private pipe): nobody is asked again.
    const killed = await session.faults.killChild();
    await session.pids.waitForChild(killed);
    const again = await call('create_cell', { source: 'print("again")', and_run: true });
    expect(again.isError, again.text).toBe(false);
    expect(again.text).toContain('again');
    expect(asked).toHaveLength(1);

    expect(findSecretLeaks(session, seen, [token], { childEnvironment: true })).toEqual([]);
  });
});
