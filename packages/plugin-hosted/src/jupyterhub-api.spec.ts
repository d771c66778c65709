import { CoreError, KeptCredentials } from '@nteract-mcp/core';
import { type ChildServerTestHarness, startChildServerTestHarness, toolError } from '@nteract-mcp/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { createHostedPlugin } from './create-hosted-plugin.js';
import { type HubFetch, hubLocationOf, hubServerNotRunningCode } from './jupyterhub-api.js';
import { FakeJupyterServer } from './testing/fake-jupyter-server.js';

const hub = 'http://hub.test:8000/';
const notebook = { cells: [], metadata: { kernelspec: { name: 'python3' } }, nbformat: 4, nbformat_minor: 5 };

describe(hubLocationOf, () => {
  it('knows a user server (default or named), the user-redirect of the token’s user, and nothing else', () => {
    expect(hubLocationOf(`${hub}user/al%20ice/`)).toEqual({
      kind: 'user-server',
      server: { hubApiUrl: `${hub}hub/api/`, hubHomeUrl: `${hub}hub/home`, user: 'al ice', serverName: '' },
    });
    expect(hubLocationOf(`${hub}user/alice/my%20work/`)).toEqual({
      kind: 'user-server',
      server: { hubApiUrl: `${hub}hub/api/`, hubHomeUrl: `${hub}hub/home`, user: 'alice', serverName: 'my work' },
    });
    expect(hubLocationOf(`${hub}hub/user-redirect/work/`)).toEqual({
      kind: 'user-redirect',
      hubApiUrl: `${hub}hub/api/`,
      prefix: hub,
      serverName: 'work',
    });
    expect(hubLocationOf(`${hub}user/alice/work/extra/`)).toBeUndefined();
    expect(hubLocationOf(`${hub}prefix/user/bob/`)).toMatchObject({
      server: { hubApiUrl: `${hub}prefix/hub/api/`, user: 'bob' },
    });
    expect(hubLocationOf(`${hub}hub/user-redirect/`)).toEqual({
      kind: 'user-redirect',
      hubApiUrl: `${hub}hub/api/`,
      prefix: hub,
      serverName: '',
    });
    expect(hubLocationOf(`${hub}jhub/user/bob/work/`)).toEqual({
      kind: 'user-server',
      server: {
        hubApiUrl: `${hub}jhub/hub/api/`,
        hubHomeUrl: `${hub}jhub/hub/home`,
        user: 'bob',
        serverName: 'work',
      },
    });
    expect(hubLocationOf(`${hub}jhub/hub/user-redirect/`)).toEqual({
      kind: 'user-redirect',
      hubApiUrl: `${hub}jhub/hub/api/`,
      prefix: `${hub}jhub/`,
      serverName: '',
    });
    expect(hubLocationOf('http://127.0.0.1:8888/')).toBeUndefined();
  });
});

/** What the fake Hub does: which of alice's servers the fake Jupyter Server is, and how a start goes. */
interface FakeHubOptions {
  readonly holdStart?: Promise<void>;
  /** The fake Jupyter Server is alice's server of this name (default `''`: her default server). */
  readonly serverName?: string;
  /** A start is refused with 400 and this message (e.g. the named-server limit). */
  readonly refuseStart?: string;
  /** Where the Hub's URLs start (default {@link hub}; a Hub with `base_url = '/jhub/'`: `…/jhub/`). Its API answers only under `<base>hub/api/`. */
  readonly base?: string;
}

/** A JupyterHub REST API in memory: alice's server (the fake Jupyter Server) starts when asked. */
function fakeHub(server: FakeJupyterServer, options: FakeHubOptions = {}) {
  const serverName = options.serverName ?? '';
  const startRoute = serverName === '' ? '/users/alice/server' : `/users/alice/servers/${serverName}`;
  const calls: string[] = [];
  const bodies: (string | undefined)[] = [];
  const api = `${options.base ?? hub}hub/api/`;
  const fetch: HubFetch = async (url, init) => {
    const answer = (status: number, body: unknown) => ({ status, text: async () => JSON.stringify(body) });
    // Anywhere else than the Hub's API (e.g. /hub/api/ of a Hub under a prefix) is the whole URL in the calls, and "not found".
    if (!url.startsWith(api)) {
      calls.push(`${init.method} ${url}`);
      return answer(404, { message: 'Not Found' });
    }
    calls.push(`${init.method} ${url.slice(api.length)}`);
    if (init.method === 'POST') bodies.push(init.body);
    const token = init.headers.Authorization;
    if (token !== 'token alice-token') {
      // As JupyterHub does: a user the token may not see is "not found".
      if (/\/users\/[^/]+$/.test(url)) return answer(404, { message: 'No access to resources or resources not found' });
      return answer(403, { message: 'Forbidden' });
    }
    if (url.endsWith('/api/user')) return answer(200, { name: 'alice' });
    if (url.endsWith('/users/alice') && init.method === 'GET') {
      return answer(200, {
        name: 'alice',
        servers: server.isUp ? { [serverName]: { ready: true, pending: null } } : {},
      });
    }
    if (url.endsWith(startRoute) && init.method === 'POST') {
      if (options.refuseStart !== undefined) return answer(400, { message: options.refuseStart });
      await options.holdStart;
      server.start();
      return answer(201, {});
    }
    return answer(404, { message: 'Not Found' });
  };
  return { fetch, calls, bodies };
}

describe('JupyterHub user servers', () => {
  let harness: ChildServerTestHarness;
  afterEach(async () => {
    await harness.close();
  });

  async function start(options: FakeHubOptions & { env?: Record<string, string> } = {}) {
    const server = new FakeJupyterServer('alice-token');
    server.writeFile('x.ipynb', notebook);
    server.downCode = hubServerNotRunningCode;
    const fake = fakeHub(server, options);
    harness = await startChildServerTestHarness({
      plugins: [
        createHostedPlugin({
          env: options.env ?? { JUPYTERHUB_API_TOKEN: 'alice-token', JUPYTER_TOKEN: 'other' },
          connector: server,
          hubFetch: fake.fetch,
        }),
      ],
    });
    return { server, calls: fake.calls, bodies: fake.bodies };
  }

  it('a stopped user server is started through the Hub API and waited for, said in session_status meanwhile; the kernel notice says so', async () => {
    let release: () => void = () => undefined;
    const { server, calls } = await start({ holdStart: new Promise<void>((resolve) => (release = resolve)) });
    server.stop();
    const connecting = harness.callJson('connect_notebook', { url: `${hub}user/alice/notebooks/x.ipynb` });
    await expect.poll(() => calls).toContain('POST users/alice/server');
    const status = await harness.callJson('session_status');
    expect(status.hosted).toMatchObject({ hub_server_starts: [{ user: 'alice', hub: `${hub}hub/api/` }] });
    expect(JSON.stringify(status.hosted)).toContain("The server of JupyterHub user 'alice' was stopped");
    release();
    expect(await connecting).toMatchObject({ connected: true, path: `${hub}user/alice/lab/tree/x.ipynb` });
    expect(
      ((await harness.callJson('session_status')).hosted as { hub_server_starts: unknown[] }).hub_server_starts,
    ).toEqual([]);
    const ran = await harness.callJson('create_cell', { source: 'x = 1', and_run: true });
    expect(ran.kernel_notice).toMatch(/JupyterHub server of user 'alice' .* had stopped and was started again/);
    expect(JSON.stringify(harness.logger.records)).not.toContain('alice-token');
  });

  it('resolves /hub/user-redirect/ to the server of the token’s own user', async () => {
    const { calls } = await start();
    const connected = await harness.callJson('connect_notebook', { url: `${hub}hub/user-redirect/lab/tree/x.ipynb` });
    expect(connected).toMatchObject({ connected: true, path: `${hub}user/alice/lab/tree/x.ipynb` });
    expect(calls).toEqual(['GET user']);
  });

  it('a token without access to another user’s server is refused with the user named and what would be let in', async () => {
    await start();
    const refused = await toolError(
      harness.call('connect_notebook', { url: `${hub}user/alice/lab/tree/x.ipynb?token=bob-token` }),
    );
    expect(refused).toContain("The JupyterHub refused this API token for the server of user 'alice'");
    expect(refused).toContain('access:servers!user=alice');
    expect(refused).not.toContain('bob-token');
  });

  it('another user’s token on a stopped server (the Hub answers "not found" for it) is refused as such, naming the user and the scopes; nothing is started', async () => {
    const { server, calls } = await start();
    server.stop();
    server.whileDown = (address) =>
      address.token?.reveal() === 'alice-token' ? undefined : new CoreError('notebookUnavailable', 'not found');
    const refused = await toolError(
      harness.call('connect_notebook', { url: `${hub}user/alice/lab/tree/x.ipynb?token=bob-token` }),
    );
    expect(refused).toContain("The JupyterHub refused this API token for the server of user 'alice'");
    expect(refused).toContain('nor start it while it is stopped');
    expect(refused).toContain('access:servers!user=alice and servers!user=alice');
    expect(refused).not.toContain('has no notebook');
    expect(refused).not.toContain('create_notebook');
    expect(refused).not.toContain('bob-token');
    expect(calls).toEqual(['GET users/alice']);
    expect(server.isUp).toBe(false);
  });

  it('a Hub under a path prefix: a stopped server named by a /doc/tree/ link is started through <prefix>hub/api/ and waited for; its identity is the lab/tree URL under the prefix', async () => {
    const jhub = `${hub}jhub/`;
    const { server, calls } = await start({ base: jhub });
    server.stop();
    const connected = await harness.callJson('connect_notebook', { url: `${jhub}user/alice/doc/tree/x.ipynb` });
    expect(connected).toMatchObject({ connected: true, path: `${jhub}user/alice/lab/tree/x.ipynb` });
    expect(calls).toEqual(['GET users/alice', 'POST users/alice/server', 'GET users/alice']);
    expect(server.opened.map((address) => address.serverUrl)).toContain(`${jhub}user/alice/`);
    expect(server.opened.map((address) => address.serverUrl)).not.toContain(`${jhub}user/alice/doc/`);
    const ran = await harness.callJson('create_cell', { source: 'x = 1', and_run: true });
    expect(ran.kernel_notice).toMatch(/JupyterHub server of user 'alice' .* had stopped and was started again/);
  });

  it('a Hub under a path prefix: /hub/user-redirect/doc/tree/ is resolved through <prefix>hub/api/ to the token user’s default server, never to a server named doc', async () => {
    const jhub = `${hub}jhub/`;
    const { calls } = await start({ base: jhub });
    const connected = await harness.callJson('connect_notebook', {
      url: `${jhub}hub/user-redirect/doc/tree/x.ipynb`,
    });
    expect(connected).toMatchObject({ connected: true, path: `${jhub}user/alice/lab/tree/x.ipynb` });
    expect(calls).toEqual(['GET user']);
  });

  it('a notebook missing on a running user server is said missing; the Hub is not asked', async () => {
    const { calls } = await start();
    const missing = await toolError(harness.call('connect_notebook', { url: `${hub}user/alice/lab/tree/nope.ipynb` }));
    expect(missing).toContain('has no notebook nope.ipynb');
    expect(calls).toEqual([]);
  });
  it('a stopped named server is started through the Hub’s named-server route and waited for, said by name in session_status; the kernel notice names it', async () => {
    let release: () => void = () => undefined;
    const { server, calls } = await start({
      serverName: 'work',
      holdStart: new Promise<void>((resolve) => (release = resolve)),
    });
    server.stop();
    const connecting = harness.callJson('connect_notebook', { url: `${hub}user/alice/work/lab/tree/x.ipynb` });
    await expect.poll(() => calls).toContain('POST users/alice/servers/work');
    expect(calls).not.toContain('POST users/alice/server');
    const status = await harness.callJson('session_status');
    expect(status.hosted).toMatchObject({ hub_server_starts: [{ user: 'alice', server: 'work' }] });
    expect(JSON.stringify(status.hosted)).toContain("The server 'work' of JupyterHub user 'alice' was stopped");
    release();
    expect(await connecting).toMatchObject({ connected: true, path: `${hub}user/alice/work/lab/tree/x.ipynb` });
    const ran = await harness.callJson('create_cell', { source: 'x = 1', and_run: true });
    expect(ran.kernel_notice).toMatch(/JupyterHub server 'work' of user 'alice' .* had stopped and was started again/);
  });

  it('a token given for a user’s default server is used for the user’s named servers (and kept for a restarted child)', async () => {
    const { calls } = await start({ serverName: 'work', env: {} });
    const first = await harness.callJson('connect_notebook', {
      url: `${hub}user/alice/lab/tree/x.ipynb?token=alice-token`,
    });
    expect(first).toMatchObject({ connected: true });
    const named = await harness.callJson('connect_notebook', { url: `${hub}user/alice/work/lab/tree/x.ipynb` });
    expect(named).toMatchObject({ connected: true, path: `${hub}user/alice/work/lab/tree/x.ipynb` });
    const kept = harness.container.get(KeptCredentials).list();
    expect(kept.map((credential) => credential.scope).sort()).toEqual([`${hub}user/alice/`, `${hub}user/alice/work/`]);
    expect(calls).toEqual([]);
  });

  it('a named server the Hub will not start (400) is an error with the Hub’s words at once, not a wait', async () => {
    const { server } = await start({
      serverName: 'extra',
      refuseStart: 'alice already has the maximum of 1 named servers.',
    });
    server.stop();
    const refused = await toolError(
      harness.call('connect_notebook', { url: `${hub}user/alice/extra/lab/tree/x.ipynb` }),
    );
    expect(refused).toContain(
      "did not start the server 'extra' of user 'alice': alice already has the maximum of 1 named servers.",
    );
    expect((await harness.callJson('session_status')).hosted).toMatchObject({ hub_server_starts: [] });
  });

  it('another user’s token on a named server is refused naming that server and the scopes', async () => {
    await start({ serverName: 'work' });
    const refused = await toolError(
      harness.call('connect_notebook', { url: `${hub}user/alice/work/lab/tree/x.ipynb?token=bob-token` }),
    );
    expect(refused).toContain("The JupyterHub refused this API token for the server 'work' of user 'alice'");
    expect(refused).toContain('access:servers!user=alice (or access:servers!server=alice/work for that server alone)');
  });
  it('NTERACT_MCP_HUB_START_TIMEOUT_SECS and NTERACT_MCP_HUB_SERVER_OPTIONS: the wait said in session_status, the spawner options sent with the start', async () => {
    let release: () => void = () => undefined;
    const { server, calls, bodies } = await start({
      holdStart: new Promise<void>((resolve) => (release = resolve)),
      env: {
        JUPYTERHUB_API_TOKEN: 'alice-token',
        NTERACT_MCP_HUB_START_TIMEOUT_SECS: '300',
        NTERACT_MCP_HUB_SERVER_OPTIONS: '{"profile": "gpu"}',
      },
    });
    server.stop();
    const connecting = harness.callJson('connect_notebook', { url: `${hub}user/alice/lab/tree/x.ipynb` });
    await expect.poll(() => calls).toContain('POST users/alice/server');
    expect(bodies).toEqual(['{"profile":"gpu"}']);
    expect(JSON.stringify((await harness.callJson('session_status')).hosted)).toContain('(at most 300 s)');
    release();
    expect(await connecting).toMatchObject({ connected: true });
  });
});
