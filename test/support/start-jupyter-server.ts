import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { killQuietly, waitGone } from './create-user-environment.js';
import { processesWithHome } from './process-tree.js';
import { requestWithToken } from './request-with-token.js';
import { waitFor } from './wait-for.js';

/** The Python that has Debian's `python3-jupyter-server` (pyenv's `python3` on PATH does not). */
export const jupyterPython = '/usr/bin/python3';

export interface JupyterServerOptions {
  /** The server's token (required: tests prove it never leaks). */
  readonly token: string;
}

/** A Jupyter Server on a loopback port with a token, in a temp root dir, started by a test. */
export interface JupyterServerUnderTest {
  readonly token: string;
  readonly port: number;
  /** `http://127.0.0.1:<port>/` (no credentials). */
  readonly baseUrl: string;
  /** The directory the server serves (notebook paths are relative to it). */
  readonly rootDir: string;
  /** The server's own HOME (its runtime files, and the marker of every process it started). */
  readonly home: string;
  /** The running server's pid, if it runs. */
  pid(): number | undefined;
  /** The kernels the server runs now (processes with the server's HOME running ipykernel). */
  kernels(): number[];
  /** `baseUrl` + `lab/tree/<path>`. */
  notebookUrl(path: string): string;
  /** A REST call with the token in the Authorization header; resolves with the status and parsed JSON. */
  api(method: string, path: string, body?: unknown): Promise<{ status: number; json: unknown }>;
  /** Writes an empty Python notebook at `path` through the contents API; rejects unless the server took it. */
  putEmptyNotebook(path: string): Promise<void>;
  /** Stops the server (SIGTERM, then SIGKILL) and everything it started, kernels included. Idempotent. */
  stop(): Promise<void>;
  /** Starts it again on the same port, root dir and token; resolves once it answers. */
  start(): Promise<void>;
  /** Stops it and removes its temp dirs. */
  dispose(): Promise<void>;
}

/** A TCP port free on 127.0.0.1 now. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}

/**
 * Starts Debian's Jupyter Server 1.23 (`/usr/bin/python3 -m jupyter_server`) on a free loopback
 * port with `token`, serving a fresh temp root dir, with its own temp HOME (so whatever it starts
 * is found by HOME when it is stopped), `--allow-root` (tests may run as root), no browser, no
 * port retries. Resolves once `GET /api/status` answers 200 with the token.
 */
export async function startJupyterServer(options: JupyterServerOptions): Promise<JupyterServerUnderTest> {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'nmcp-jupyter-')));
  const rootDir = join(root, 'notebooks');
  const home = join(root, 'home');
  for (const dir of [rootDir, home]) mkdirSync(dir, { recursive: true, mode: 0o700 });
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}/`;
  const { token } = options;
  let child: ChildProcess | undefined;
  let output = '';

  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value === undefined || /^(JUPYTER|JPY|PYTHON|NTERACT|NODE_OPTIONS|XDG_)/.test(key)) continue;
    env[key] = value;
  }
  Object.assign(env, {
    HOME: home,
    JUPYTER_RUNTIME_DIR: join(home, 'runtime'),
    JUPYTER_CONFIG_DIR: join(home, 'config'),
    JUPYTER_DATA_DIR: join(home, 'data'),
    PYTHONUNBUFFERED: '1',
  });

  const api = (method: string, path: string, body?: unknown) =>
    requestWithToken(new URL(path, baseUrl), token, method, body);

  const pid = (): number | undefined =>
    child && child.exitCode === null && child.signalCode === null ? child.pid : undefined;

  const start = async (): Promise<void> => {
    if (pid() !== undefined) return;
    output = '';
    const started = spawn(
      jupyterPython,
      [
        '-m',
        'jupyter_server',
        '--no-browser',
        '--allow-root',
        `--port=${port}`,
        '--port-retries=0',
        '--ServerApp.ip=127.0.0.1',
        `--ServerApp.token=${token}`,
        `--ServerApp.root_dir=${rootDir}`,
      ],
      { cwd: rootDir, env, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    child = started;
    started.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    started.stderr?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    try {
      await waitFor(
        `the Jupyter Server on port ${port}`,
        async () => {
          if (started.exitCode !== null) throw new Error(`it exited with ${started.exitCode}:\n${output}`);
          return (await api('GET', 'api/status').catch(() => ({ status: 0 }))).status === 200;
        },
        { timeoutMs: 60_000, intervalMs: 100 },
      );
    } catch (error) {
      await stop();
      throw error;
    }
  };

  const stop = async (): Promise<void> => {
    const running = child;
    if (running?.pid !== undefined && running.exitCode === null && running.signalCode === null) {
      killQuietly(running.pid, 'SIGTERM');
      if (!(await waitGone(running.pid, 15_000))) killQuietly(running.pid);
      await waitGone(running.pid, 10_000);
    }
    // Kernels it started (and anything else with its HOME) go too.
    for (const info of processesWithHome(home)) killQuietly(info.pid, 'SIGTERM');
    for (const info of processesWithHome(home)) if (!(await waitGone(info.pid, 5_000))) killQuietly(info.pid);
  };

  await start();
  return {
    token,
    port,
    baseUrl,
    rootDir,
    home,
    pid,
    kernels: () =>
      processesWithHome(home)
        .filter((info) => info.cmdline.includes('ipykernel'))
        .map((info) => info.pid),
    notebookUrl: (path) => `${baseUrl}lab/tree/${path.split('/').map(encodeURIComponent).join('/')}`,
    api,
    putEmptyNotebook: async (path) => {
      const content = {
        cells: [],
        metadata: { kernelspec: { name: 'python3', display_name: 'Python 3' } },
        nbformat: 4,
        nbformat_minor: 5,
      };
      const put = await api('PUT', `api/contents/${path}`, { type: 'notebook', format: 'json', content });
      if (put.status >= 300) throw new Error(`the Jupyter Server refused ${path}: HTTP ${put.status}`);
    },
    stop,
    start,
    dispose: async () => {
      await stop();
      rmSync(root, { recursive: true, force: true });
    },
  };
}
