import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { killQuietly, waitGone } from './create-user-environment.js';
import { processesWithHome } from './process-tree.js';
import { requestWithToken, type TokenApiAnswer } from './request-with-token.js';
import { freePort, jupyterPython } from './start-jupyter-server.js';
import { waitFor } from './wait-for.js';

/** `configurable-http-proxy` from npm, a devDependency of test/: its `node_modules/.bin` link (test/'s, or the workspace root's where npm hoisted it). */
export const configurableHttpProxy = ((): string => {
  const here = dirname(fileURLToPath(import.meta.url));
  const candidates = [join(here, '..', 'node_modules', '.bin'), join(here, '..', '..', 'node_modules', '.bin')].map(
    (dir) => join(dir, 'configurable-http-proxy'),
  );
  return candidates.find((path) => existsSync(path)) ?? (candidates[0] as string);
})();

export interface HubUserOptions {
  readonly name: string;
  /** Kernels idle this long (connected or not) are culled by the user's server (`MappingKernelManager.cull_idle_timeout`). */
  readonly cullIdleSecs?: number;
}

export interface JupyterHubOptions {
  readonly users: readonly HubUserOptions[];
  /**
   * The Hub's `c.JupyterHub.base_url` (e.g. `/jhub/`: users' servers at `/jhub/user/<name>/`, the
   * Hub API at `/jhub/hub/api/`); default `/`.
   */
  readonly basePath?: string;
}

/** An answer of the Hub's or a user server's REST API. */
export type HubAnswer = TokenApiAnswer;

/** A JupyterHub with its proxy and user servers, on loopback ports, in a temp dir, started by a test. */
export interface JupyterHubUnderTest {
  /** `http://127.0.0.1:<port>/` and the base path (the proxy: what users open). */
  readonly baseUrl: string;
  /** `baseUrl` + `user/<name>/[<server>/]lab/tree/<path>` (`server`: a named server; default: the user's default server). */
  notebookUrl(user: string, path: string, server?: string): string;
  /** A new API token of `user`, with the user's own permissions (made through the Hub API). */
  tokenFor(user: string): Promise<string>;
  /** A call to the Hub API (`hub/api/<path>`) with the test's admin service token. */
  hubApi(method: string, path: string, body?: unknown): Promise<HubAnswer>;
  /** A call to the Hub API (`hub/api/<path>`) with `token`. */
  hubApiAs(token: string, method: string, path: string, body?: unknown): Promise<HubAnswer>;
  /** A call to `user`'s server (`user/<name>/[<server>/]<path>`) with `token`, through the proxy. */
  userApi(
    user: string,
    token: string,
    method: string,
    path: string,
    body?: unknown,
    server?: string,
  ): Promise<HubAnswer>;
  /** Starts `user`'s server (or named `server`) through the Hub API and resolves once the Hub says it is ready. */
  startServer(user: string, server?: string): Promise<void>;
  /** Stops `user`'s server (or named `server`) through the Hub API and resolves once the Hub says it stopped. */
  stopServer(user: string, server?: string): Promise<void>;
  /** The state of `user`'s server (or named `server`) as the Hub says it, `undefined` when it is not running. */
  serverState(user: string, server?: string): Promise<{ ready?: boolean; pending?: string | null } | undefined>;
  /** The ids of the kernels `user`'s server (or named `server`) runs (`GET api/kernels`). */
  kernelIds(user: string, token: string, server?: string): Promise<string[]>;
  /** The kernel processes of `user`'s server (found by the user's HOME). */
  kernelProcesses(user: string): number[];
  /** The Hub's and the proxy's output so far. */
  output(): string;
  /** Stops the Hub, its proxy, the user servers and their kernels, and removes the temp dir. */
  dispose(): Promise<void>;
}

/**
 * Starts Debian's JupyterHub (`/usr/bin/python3 -m jupyterhub`) with `configurable-http-proxy`
 * from npm, on free loopback ports, in a fresh temp dir: the dummy authenticator, the simple local
 * spawner (user servers run here, as this user, `--allow-root`, each with its HOME under the temp
 * dir, so everything they start is found by HOME when stopped), an admin service token for the
 * test, and idle culling per user. Resolves once the Hub API answers.
 */
export async function startJupyterHub(options: JupyterHubOptions): Promise<JupyterHubUnderTest> {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'nmcp-hub-')));
  const hubHome = join(root, 'hub');
  const homes = Object.fromEntries(options.users.map((user) => [user.name, join(root, 'homes', user.name)]));
  for (const dir of [hubHome, ...Object.values(homes)]) mkdirSync(dir, { recursive: true, mode: 0o700 });
  const [port, hubPort, proxyApiPort] = [await freePort(), await freePort(), await freePort()];
  const basePath = `/${(options.basePath ?? '/').replace(/^\/+|\/+$/g, '')}/`.replace(/^\/\/$/, '/');
  const baseUrl = `http://127.0.0.1:${port}${basePath}`;
  const serviceToken = `svc-${process.pid}-${Date.now().toString(36)}`;
  const culled = Object.fromEntries(
    options.users.filter((user) => user.cullIdleSecs !== undefined).map((user) => [user.name, user.cullIdleSecs]),
  );
  const config = join(root, 'jupyterhub_config.py');
  writeFileSync(
    config,
    `c = get_config()  # noqa
root = ${JSON.stringify(root)}
c.JupyterHub.ip = '127.0.0.1'
c.JupyterHub.port = ${port}
c.JupyterHub.base_url = ${JSON.stringify(basePath)}
c.JupyterHub.hub_ip = '127.0.0.1'
c.JupyterHub.hub_port = ${hubPort}
c.ConfigurableHTTPProxy.api_url = 'http://127.0.0.1:${proxyApiPort}'
c.ConfigurableHTTPProxy.command = [${JSON.stringify(configurableHttpProxy)}]
c.ConfigurableHTTPProxy.pid_file = root + '/hub/proxy.pid'
c.JupyterHub.pid_file = root + '/hub/hub.pid'
c.JupyterHub.db_url = 'sqlite:///' + root + '/hub/hub.sqlite'
c.JupyterHub.cookie_secret_file = root + '/hub/cookie_secret'
c.JupyterHub.cleanup_servers = True
c.JupyterHub.allow_named_servers = True
c.JupyterHub.authenticator_class = 'jupyterhub.auth.DummyAuthenticator'
c.Authenticator.allowed_users = set(${JSON.stringify(options.users.map((user) => user.name))})
c.JupyterHub.spawner_class = 'jupyterhub.spawner.SimpleLocalProcessSpawner'
c.SimpleLocalProcessSpawner.home_dir_template = root + '/homes/{username}'
c.Spawner.cmd = ['/usr/bin/jupyterhub-singleuser']
c.Spawner.environment = {'PATH': '/usr/bin:/bin'}
c.Spawner.http_timeout = 60
c.Spawner.start_timeout = 60
c.Spawner.default_url = '/lab'
c.JupyterHub.services = [{'name': 'nmcp-test', 'api_token': ${JSON.stringify(serviceToken)}}]
c.JupyterHub.load_roles = [{'name': 'nmcp-test', 'scopes': ['admin:users', 'admin:servers', 'tokens', 'list:users', 'read:users'], 'services': ['nmcp-test']}]
culled = ${JSON.stringify(culled)}
def pre_spawn_hook(spawner):
    args = ['--allow-root', '--no-browser']
    idle = culled.get(spawner.user.name)
    if idle is not None:
        args += ['--MappingKernelManager.cull_idle_timeout=%d' % idle, '--MappingKernelManager.cull_interval=1', '--MappingKernelManager.cull_connected=True']
    spawner.args = args
c.Spawner.pre_spawn_hook = pre_spawn_hook
`,
  );

  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value === undefined || /^(JUPYTER|JPY|PYTHON|NTERACT|NODE_OPTIONS|XDG_|CONFIGPROXY)/.test(key)) continue;
    env[key] = value;
  }
  Object.assign(env, { HOME: hubHome, PYTHONUNBUFFERED: '1' });
  let output = '';
  const hub: ChildProcess = spawn(jupyterPython, ['-m', 'jupyterhub', '-f', config], {
    cwd: hubHome,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  hub.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  hub.stderr?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });

  const hubApi = (method: string, path: string, body?: unknown) =>
    requestWithToken(`${baseUrl}hub/api/${path}`, serviceToken, method, body);
  const serverOf = async (user: string, server = '') =>
    (
      (await hubApi('GET', `users/${user}`)).json as {
        servers?: Record<string, { ready?: boolean; pending?: string | null }>;
      }
    ).servers?.[server];
  /** `user/<name>/` or `user/<name>/<server>/`. */
  const userPath = (user: string, server = '') =>
    `user/${encodeURIComponent(user)}/${server === '' ? '' : `${encodeURIComponent(server)}/`}`;
  /** The Hub API's route of a user's default server or of a named one. */
  const serverRoute = (user: string, server = '') =>
    server === '' ? `users/${user}/server` : `users/${user}/servers/${encodeURIComponent(server)}`;

  const dispose = async (): Promise<void> => {
    if (hub.pid !== undefined && hub.exitCode === null && hub.signalCode === null) {
      killQuietly(hub.pid, 'SIGTERM');
      if (!(await waitGone(hub.pid, 30_000))) killQuietly(hub.pid);
    }
    // The proxy (HOME of the Hub), the user servers and their kernels (their users' HOMEs).
    for (const home of [hubHome, ...Object.values(homes)]) {
      for (const info of processesWithHome(home)) killQuietly(info.pid, 'SIGTERM');
      for (const info of processesWithHome(home)) if (!(await waitGone(info.pid, 5_000))) killQuietly(info.pid);
    }
    rmSync(root, { recursive: true, force: true });
  };

  try {
    await waitFor(
      `the JupyterHub on port ${port}`,
      async () => {
        if (hub.exitCode !== null) throw new Error(`it exited with ${hub.exitCode}:\n${output}`);
        return (await hubApi('GET', '').catch(() => ({ status: 0 }))).status === 200;
      },
      { timeoutMs: 90_000, intervalMs: 200 },
    );
  } catch (error) {
    await dispose();
    throw error;
  }

  return {
    baseUrl,
    notebookUrl: (user, path, server) =>
      `${baseUrl}${userPath(user, server)}lab/tree/${path.split('/').map(encodeURIComponent).join('/')}`,
    tokenFor: async (user) => {
      const answer = await hubApi('POST', `users/${user}/tokens`, { note: 'nteract-mcp test' });
      const token = (answer.json as { token?: string }).token;
      if (answer.status !== 201 || token === undefined) throw new Error(`no token for ${user}: ${answer.status}`);
      return token;
    },
    hubApi,
    hubApiAs: (token, method, path, body) => requestWithToken(`${baseUrl}hub/api/${path}`, token, method, body),
    userApi: (user, token, method, path, body, server) =>
      requestWithToken(`${baseUrl}${userPath(user, server)}${path}`, token, method, body),
    startServer: async (user, server) => {
      const answer = await hubApi('POST', serverRoute(user, server));
      if (answer.status >= 300 && answer.status !== 400)
        throw new Error(`could not start ${user}'s server '${server ?? ''}': ${answer.status}`);
      await waitFor(
        `the server '${server ?? ''}' of ${user}`,
        async () => (await serverOf(user, server))?.ready === true,
        {
          timeoutMs: 90_000,
        },
      );
    },
    stopServer: async (user, server) => {
      const answer = await hubApi('DELETE', serverRoute(user, server));
      if (answer.status >= 300) throw new Error(`could not stop ${user}'s server '${server ?? ''}': ${answer.status}`);
      await waitFor(
        `the server '${server ?? ''}' of ${user} to stop`,
        async () => (await serverOf(user, server)) === undefined,
        { timeoutMs: 60_000 },
      );
    },
    serverState: (user, server) => serverOf(user, server),
    kernelIds: async (user, token, server) => {
      const answer = await requestWithToken(`${baseUrl}${userPath(user, server)}api/kernels`, token, 'GET');
      return answer.status === 200 ? (answer.json as { id: string }[]).map((kernel) => kernel.id) : [];
    },
    kernelProcesses: (user) =>
      processesWithHome(homes[user] as string)
        .filter((info) => info.cmdline.includes('ipykernel'))
        .map((info) => info.pid),
    output: () => output,
    dispose,
  };
}
