import { existsSync } from 'node:fs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  findSecretLeaks,
  type JupyterHubUnderTest,
  processesWithHome,
  startJupyterHub,
  startUserSession,
  type ToolOutcome,
  type UserSession,
  waitFor,
} from './support/index.js';

/**
 * Hosted notebooks on a real JupyterHub (Debian's jupyterhub, configurable-http-proxy from npm),
 * started here on loopback ports with the dummy authenticator and the simple local spawner: each
 * agent (the shipped proxy, as a user runs it, with its own user's JUPYTERHUB_API_TOKEN) on its
 * own user's notebook. alice, bob and dave are plain users; carol's server culls kernels idle 4 s.
 * A second Hub runs under a path prefix (`base_url = '/jhub/'`) with one user, erin.
 */

const cullIdleSecs = 4;
let hub: JupyterHubUnderTest;
const tokens: Record<string, string> = {};
const sessions: UserSession[] = [];
const startedAt = Date.now();

beforeAll(async () => {
  hub = await startJupyterHub({
    users: [{ name: 'alice' }, { name: 'bob' }, { name: 'carol', cullIdleSecs }, { name: 'dave' }],
  });
  for (const user of ['alice', 'bob', 'carol', 'dave']) {
    tokens[user] = await hub.tokenFor(user);
    await hub.startServer(user);
  }
}, 240_000);

afterEach(async () => {
  for (const session of sessions.splice(0)) await session.stop();
});

afterAll(async () => {
  await hub?.dispose();
  process.stderr.write(`[jupyterhub.test] hub tests took ${((Date.now() - startedAt) / 1000).toFixed(1)} s\n`);
}, 120_000);

const notebook = {
  type: 'notebook',
  format: 'json',
  content: {
    cells: [],
    metadata: { kernelspec: { name: 'python3', display_name: 'Python 3' } },
    nbformat: 4,
    nbformat_minor: 5,
  },
};

/** Puts an empty notebook `path` on `user`'s server (or its named `server`) and returns its URL (no token in it). */
async function notebookOf(user: string, path: string, server?: string): Promise<string> {
  const put = await hub.userApi(user, tokens[user] as string, 'PUT', `api/contents/${path}`, notebook, server);
  expect(put.status, JSON.stringify(put.json)).toBeLessThan(300);
  return hub.notebookUrl(user, path, server);
}

/** An agent of `user`: its MCP client config gives it the user's Hub API token. */
async function agentOf(user: string, env: Record<string, string> = {}): Promise<UserSession> {
  const session = await startUserSession({ env: { JUPYTERHUB_API_TOKEN: tokens[user] as string, ...env } });
  sessions.push(session);
  return session;
}

/** No Hub token in a result, a log, a file of the session, or the handoff environment of its child. */
function expectNoTokens(session: UserSession, outcomes: readonly ToolOutcome[]): void {
  expect(findSecretLeaks(session, outcomes, Object.values(tokens))).toEqual([]);
}

function recorder(session: UserSession) {
  const seen: ToolOutcome[] = [];
  const call = async (name: string, args: Record<string, unknown> = {}) => {
    const outcome = await session.call(name, args);
    seen.push(outcome);
    return outcome;
  };
  return { seen, call };
}

describe('hosted notebooks on a real JupyterHub, through the shipped proxy', () => {
  it('two users, each agent on its own user’s notebook (also by /hub/user-redirect/); a token without access to the other user’s server is refused with a clear error; no token leaks', {
    timeout: 180_000,
  }, async () => {
    const aliceUrl = await notebookOf('alice', 'work.ipynb');
    const bobUrl = await notebookOf('bob', 'work.ipynb');
    const alice = await agentOf('alice');
    const bob = await agentOf('bob');
    const a = recorder(alice);
    const b = recorder(bob);

    const aliceConnected = await a.call('connect_notebook', { url: aliceUrl });
    expect(aliceConnected.isError, aliceConnected.text).toBe(false);
    expect(aliceConnected.json).toMatchObject({ path: aliceUrl, connected: true, readiness: { runtime: 'ready' } });
    // bob names his notebook through the Hub's user-redirect: the Hub says whose it is.
    const bobConnected = await b.call('connect_notebook', {
      url: `${hub.baseUrl}hub/user-redirect/lab/tree/work.ipynb`,
    });
    expect(bobConnected.isError, bobConnected.text).toBe(false);
    expect(bobConnected.json).toMatchObject({ path: bobUrl, connected: true });

    const ranA = await a.call('create_cell', {
      source: 'import getpass, os\nwho = "alice"\nprint(who, os.environ["HOME"])',
      and_run: true,
    });
    const ranB = await b.call('create_cell', { source: 'who = "bob"\nprint(who)', and_run: true });
    expect(ranA.isError, ranA.text).toBe(false);
    expect(ranA.text).toMatch(/alice .*homes\/alice/);
    expect(ranB.text).toContain('bob');
    expect(hub.kernelProcesses('alice')).toHaveLength(1);
    expect(hub.kernelProcesses('bob')).toHaveLength(1);

    // alice's token on bob's server: refused, saying whose server and what would let it in.
    const refused = await a.call('connect_notebook', { url: bobUrl });
    expect(refused.isError).toBe(true);
    expect(refused.text).toContain("The JupyterHub refused this API token for the server of user 'bob'");
    expect(refused.text).toContain('access:servers!user=bob');
    // alice's session is still on her notebook.
    const still = await a.call('create_cell', { source: 'print(who)', and_run: true });
    expect(still.text).toContain('alice');
    expectNoTokens(alice, a.seen);
    expectNoTokens(bob, b.seen);
  });

  it('run_code on a Hub notebook runs in its kernel, sees the cells’ variables and adds nothing to the notebook', {
    timeout: 120_000,
  }, async () => {
    const url = await notebookOf('bob', 'scratch.ipynb');
    const bob = await agentOf('bob');
    const { seen, call } = recorder(bob);
    expect((await call('connect_notebook', { url })).isError).toBe(false);
    expect((await call('create_cell', { source: 'x = 41', and_run: true })).isError).toBe(false);
    const ran = await call('run_code', { code: 'import os\nprint(x + 1, os.environ["HOME"])' });
    expect(ran.isError, ran.text).toBe(false);
    expect(ran.json).toMatchObject({ status: 'ok' });
    expect(ran.text).toMatch(/42 .*homes\/bob/);
    const saved = await hub.userApi('bob', tokens.bob as string, 'GET', 'api/contents/scratch.ipynb');
    const cells = (saved.json as { content: { cells: { source: string; execution_count: number | null }[] } }).content
      .cells;
    expect(cells.map((cell) => [cell.source, cell.execution_count])).toEqual([['x = 41', 1]]);
    expectNoTokens(bob, seen);
  });

  it('another user’s token on a stopped server is refused as such, naming the user and the scopes; the server is not started and nobody is told to create the notebook', {
    timeout: 120_000,
  }, async () => {
    const url = await notebookOf('dave', 'his.ipynb');
    await hub.stopServer('dave');
    const alice = await agentOf('alice');
    const { seen, call } = recorder(alice);
    const refused = await call('connect_notebook', { url });
    expect(refused.isError).toBe(true);
    expect(refused.text).toContain("The JupyterHub refused this API token for the server of user 'dave'");
    expect(refused.text).toContain('nor start it while it is stopped');
    expect(refused.text).toContain('access:servers!user=dave and servers!user=dave');
    expect(refused.text).not.toContain('has no notebook');
    expect(refused.text).not.toContain('create_notebook');
    expect(await hub.serverState('dave')).toBeUndefined();
    expectNoTokens(alice, seen);
  });

  it('a kernel culled for idleness: the session comes back by itself on a new kernel, the next answer names the lost variables, restore_state brings x back', {
    timeout: 180_000,
  }, async () => {
    const url = await notebookOf('carol', 'culled.ipynb');
    const carol = await agentOf('carol');
    const { seen, call } = recorder(carol);
    expect((await call('connect_notebook', { url })).isError).toBe(false);
    const define = await call('create_cell', { source: 'import math\nx = 41 + 1', and_run: true });
    expect(define.isError, define.text).toBe(false);
    const show = await call('create_cell', { source: 'print("x is", x)', and_run: true });
    expect(show.text).toContain('x is 42');
    const [culled] = await hub.kernelIds('carol', tokens.carol as string);
    expect(culled).toBeDefined();

    // The server culls the idle kernel; the session is back by itself, on another kernel.
    await waitFor(
      'the kernel to be culled',
      async () => !(await hub.kernelIds('carol', tokens.carol as string)).includes(culled as string),
      {
        timeoutMs: 60_000,
      },
    );
    await waitFor('the rejoin on a new kernel', () => carol.stderr().includes('rejoined notebook'), {
      timeoutMs: 60_000,
    });

    const next = await call('create_cell', { source: 'print(x)', and_run: true });
    expect(next.isError, next.text).toBe(false);
    expect(next.text).toContain('runs in a new kernel');
    expect(next.text).toContain('NameError');
    const lost = next.json?.lost_state as { variables: string[]; imports: string[]; summary: string };
    expect(lost.variables).toEqual(['x']);
    expect(lost.imports).toEqual(['math']);
    expect(lost.summary).toContain('variables x');

    const restored = await call('restore_state');
    expect(restored.isError, restored.text).toBe(false);
    expect(restored.json).toMatchObject({ status: 'done', restored: { variables: ['x'] } });
    // The restored cells ran again: the second prints x.
    expect(restored.text).toContain('x is 42');
    expectNoTokens(carol, seen);
  });

  it('the user’s server stopped through the Hub API: the backend has the Hub start it again (said in session_status while it waits) and the agent’s next call runs on it; restore_state brings x back', {
    timeout: 240_000,
  }, async () => {
    const url = await notebookOf('alice', 'stopped.ipynb');
    const alice = await agentOf('alice');
    const { seen, call } = recorder(alice);
    expect((await call('connect_notebook', { url })).isError).toBe(false);
    expect((await call('create_cell', { source: 'x = 7', and_run: true })).isError).toBe(false);

    let waitingSeen = false;
    const watching = waitFor(
      'the Hub to have the server ready again',
      async () => {
        const status = await alice.call('session_status');
        const starts = (status.json?.hosted as { hub_server_starts?: { user: string }[] } | undefined)
          ?.hub_server_starts;
        if (starts?.some((start) => start.user === 'alice')) waitingSeen = true;
        return alice.stderr().includes('the JupyterHub user server is ready');
      },
      { timeoutMs: 120_000, intervalMs: 50 },
    );
    await hub.stopServer('alice');
    await watching;
    expect(waitingSeen).toBe(true);

    const next = await call('create_cell', { source: 'print(x)', and_run: true });
    expect(next.isError, next.text).toBe(false);
    expect(next.text).toContain("JupyterHub server of user 'alice'");
    expect(next.text).toContain('had stopped and was started again');
    expect(next.json?.lost_state).toMatchObject({ variables: ['x'] });
    const restored = await call('restore_state');
    expect(restored.json).toMatchObject({ status: 'done' });
    const back = await call('create_cell', { source: 'print(x * 6)', and_run: true });
    expect(back.text).toContain('42');
    expectNoTokens(alice, seen);
  });
  it('a named server: the token given for the user’s default server opens it; stopped through the Hub API, it is started again through the Hub’s named-server route (said by name in session_status) and the agent’s next call runs on it', {
    timeout: 240_000,
  }, async () => {
    const defaultUrl = await notebookOf('alice', 'default.ipynb');
    await hub.startServer('alice', 'work');
    const url = await notebookOf('alice', 'named.ipynb', 'work');
    expect(url).toBe(`${hub.baseUrl}user/alice/work/lab/tree/named.ipynb`);
    // No JUPYTERHUB_API_TOKEN: the token is given once, in the default server's URL.
    const alice = await agentOf('alice', { JUPYTERHUB_API_TOKEN: '' });
    const { seen, call } = recorder(alice);
    const first = await call('connect_notebook', { url: `${defaultUrl}?token=${tokens.alice}` });
    expect(first.isError, first.text).toBe(false);
    const named = await call('connect_notebook', { url });
    expect(named.isError, named.text).toBe(false);
    expect(named.json).toMatchObject({ path: url, connected: true });
    expect((await call('create_cell', { source: 'x = 7', and_run: true })).isError).toBe(false);
    const onWork = async () =>
      (
        (await hub.userApi('alice', tokens.alice as string, 'GET', 'api/sessions', undefined, 'work')).json as {
          path: string;
        }[]
      ).map((session) => session.path);
    expect(await onWork()).toContain('named.ipynb');

    let waitingSeen = false;
    const watching = waitFor(
      'the Hub to have the named server ready again',
      async () => {
        const status = await alice.call('session_status');
        const starts = (status.json?.hosted as { hub_server_starts?: { user: string; server?: string }[] } | undefined)
          ?.hub_server_starts;
        if (starts?.some((start) => start.user === 'alice' && start.server === 'work')) waitingSeen = true;
        return alice.stderr().includes('the JupyterHub user server is ready');
      },
      { timeoutMs: 120_000, intervalMs: 50 },
    );
    await hub.stopServer('alice', 'work');
    await watching;
    expect(waitingSeen).toBe(true);
    expect((await hub.serverState('alice', 'work'))?.ready).toBe(true);

    const next = await call('create_cell', { source: 'print(x)', and_run: true });
    expect(next.isError, next.text).toBe(false);
    expect(next.text).toContain("JupyterHub server 'work' of user 'alice'");
    expect(next.text).toContain('had stopped and was started again');
    expect(next.json?.lost_state).toMatchObject({ variables: ['x'] });
    expect(await onWork()).toContain('named.ipynb');
    expect(await hub.kernelIds('alice', tokens.alice as string, 'work')).toHaveLength(1);
    expectNoTokens(alice, seen);
  });

  it('an agent that only uses the Hub starts no local daemon: it opens, runs, lists and reports its Hub notebook with no runtimed process and no daemon socket for its user', {
    timeout: 180_000,
  }, async () => {
    const url = await notebookOf('bob', 'hub-only.ipynb');
    const bob = await agentOf('bob');
    const { seen, call } = recorder(bob);
    expect((await call('connect_notebook', { url })).isError).toBe(false);
    const ran = await call('create_cell', { source: 'print(6 * 7)', and_run: true });
    expect(ran.text).toContain('42');
    const listed = await call('list_active_notebooks');
    expect(listed.isError, listed.text).toBe(false);
    expect(listed.text).toContain('hub-only.ipynb');
    expect((await call('session_status')).isError).toBe(false);
    const daemons = processesWithHome(bob.dirs.home).filter((info) => info.cmdline.includes('runtimed'));
    expect(daemons).toEqual([]);
    expect(existsSync(bob.socketPath)).toBe(false);
    expectNoTokens(bob, seen);
  });

  it('the wait for a stopped Hub server is a setting: with NTERACT_MCP_HUB_START_TIMEOUT_SECS=1 the open says the server was not ready within 1 s; once the Hub has it ready, the same call opens it', {
    timeout: 240_000,
  }, async () => {
    const url = await notebookOf('bob', 'slow-start.ipynb');
    await hub.stopServer('bob');
    const bob = await agentOf('bob', { NTERACT_MCP_HUB_START_TIMEOUT_SECS: '1' });
    const { seen, call } = recorder(bob);
    const waited = await call('connect_notebook', { url });
    expect(waited.isError, waited.text).toBe(true);
    expect(waited.text).toContain("did not have the server of user 'bob' ready within 1 s");
    await waitFor('the Hub to have bob’s server ready', async () => (await hub.serverState('bob'))?.ready === true, {
      timeoutMs: 120_000,
      intervalMs: 200,
    });
    const opened = await call('connect_notebook', { url });
    expect(opened.isError, opened.text).toBe(false);
    expect((await call('create_cell', { source: 'print(6 * 7)', and_run: true })).text).toContain('42');
    expectNoTokens(bob, seen);
  });
});

describe('a JupyterHub under a path prefix (base_url /jhub/), through the shipped proxy', () => {
  let prefixed: JupyterHubUnderTest;
  let erinToken = '';

  beforeAll(async () => {
    prefixed = await startJupyterHub({ users: [{ name: 'erin' }], basePath: '/jhub/' });
    erinToken = await prefixed.tokenFor('erin');
    await prefixed.startServer('erin');
  }, 240_000);

  afterAll(async () => {
    await prefixed?.dispose();
  }, 120_000);

  /** Puts an empty notebook `path` on erin's server. */
  async function putNotebook(path: string): Promise<void> {
    const put = await prefixed.userApi('erin', erinToken, 'PUT', `api/contents/${path}`, notebook);
    expect(put.status, JSON.stringify(put.json)).toBeLessThan(300);
  }

  /** The cells of `path` as saved on erin's server: source and the text of its stream outputs. */
  async function savedCells(path: string): Promise<{ source: string; output: string }[]> {
    const saved = await prefixed.userApi('erin', erinToken, 'GET', `api/contents/${path}`);
    const cells = (saved.json as { content?: { cells?: { source: string; outputs?: { text?: string }[] }[] } }).content
      ?.cells;
    return (cells ?? []).map((cell) => ({
      source: cell.source,
      output: (cell.outputs ?? []).map((output) => output.text ?? '').join(''),
    }));
  }

  async function erinAgent(): Promise<UserSession> {
    const session = await startUserSession({ env: { JUPYTERHUB_API_TOKEN: erinToken } });
    sessions.push(session);
    return session;
  }

  it('a stopped server named by its prefixed URL is started through the Hub at /jhub/hub/api/ and waited for; a cell run there is in the file on the server', {
    timeout: 240_000,
  }, async () => {
    expect(prefixed.baseUrl).toMatch(/\/jhub\/$/);
    await putNotebook('prefixed.ipynb');
    await prefixed.stopServer('erin');
    const url = prefixed.notebookUrl('erin', 'prefixed.ipynb');
    expect(url).toContain('/jhub/user/erin/lab/tree/');
    const erin = await erinAgent();
    const { seen, call } = recorder(erin);

    const connected = await call('connect_notebook', { url });
    expect(connected.isError, connected.text).toBe(false);
    expect(connected.json).toMatchObject({ path: url, connected: true });
    expect(erin.stderr()).toContain('asking the JupyterHub to start the user server');
    expect((await prefixed.serverState('erin'))?.ready).toBe(true);

    const ran = await call('create_cell', { source: 'print("ran under /jhub/")', and_run: true });
    expect(ran.isError, ran.text).toBe(false);
    expect(ran.text).toContain('ran under /jhub/');
    await expect
      .poll(() => savedCells('prefixed.ipynb'), { timeout: 30_000 })
      .toEqual([{ source: 'print("ran under /jhub/")', output: 'ran under /jhub/\n' }]);
    expect(findSecretLeaks(erin, seen, [erinToken])).toEqual([]);
  });

  it('a JupyterLab 4 / Notebook 7 /doc/tree/ link opens the notebook on the user’s default server (no server named doc is made); a cell run there is in the file on the server', {
    timeout: 180_000,
  }, async () => {
    await prefixed.startServer('erin');
    await putNotebook('doc.ipynb');
    const erin = await erinAgent();
    const { seen, call } = recorder(erin);

    const connected = await call('connect_notebook', { url: `${prefixed.baseUrl}user/erin/doc/tree/doc.ipynb` });
    expect(connected.isError, connected.text).toBe(false);
    expect(connected.json).toMatchObject({ path: prefixed.notebookUrl('erin', 'doc.ipynb'), connected: true });

    const ran = await call('create_cell', { source: 'print(6 * 7)', and_run: true });
    expect(ran.isError, ran.text).toBe(false);
    expect(ran.text).toContain('42');
    await expect
      .poll(() => savedCells('doc.ipynb'), { timeout: 30_000 })
      .toEqual([{ source: 'print(6 * 7)', output: '42\n' }]);
    const servers = ((await prefixed.hubApi('GET', 'users/erin')).json as { servers?: Record<string, unknown> })
      .servers;
    expect(Object.keys(servers ?? {})).toEqual(['']);
    expect(findSecretLeaks(erin, seen, [erinToken])).toEqual([]);
  });
});
