import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { isAlive, processesWithHome, processInfo } from './process-tree.js';
import { waitFor } from './wait-for.js';

/** The temporary directories of a session; all under `root`, removed by `stop()`. */
export interface UserSessionDirs {
  readonly root: string;
  readonly home: string;
  /** The client's (and so the servers') working directory. */
  readonly project: string;
  readonly config: string;
  readonly cache: string;
  readonly data: string;
  readonly state: string;
  readonly runtime: string;
  /** Where the fault hooks read their control files (`$HOME/.nteract-test-faults`). */
  readonly faults: string;
}

export interface UserEnvironmentOptions {
  /** Load `hooksModule` into every Node process of the session (through NODE_OPTIONS). */
  readonly hooksModule?: string;
  /** Extra environment for the proxy (and so the child and the daemon). */
  readonly env?: Readonly<Record<string, string>>;
}

/** A user's fresh machine: temp HOME with XDG dirs, a project dir, and the environment to start the proxy in. */
export interface UserEnvironment {
  readonly dirs: UserSessionDirs;
  readonly env: Readonly<Record<string, string>>;
  /** Where socket discovery finds the daemon for this environment (not passed to anything). */
  readonly socketPath: string;
  /** Runs the shipped `runtimed` bin with this environment. */
  runtimed(
    args: readonly string[],
    extraEnv?: Readonly<Record<string, string>>,
  ): Promise<{ code: number; stdout: string; stderr: string }>;
  /** The running daemon: the pid in its lock file beside the socket, when that process runs. */
  daemonPid(): number | undefined;
  /**
   * For a session driven by another client: `runtimed stop`, waits for every daemon seen to exit,
   * ends whatever still runs with this HOME (SIGTERM, then SIGKILL), removes the temp dirs. Stop
   * the client (and so the proxy) first. Idempotent.
   */
  cleanup(): Promise<void>;
}

const faultControlDir = '.nteract-test-faults';

/**
 * Creates the environment `startUserSession` starts the proxy in, without starting anything: for a
 * test that drives the shipped proxy with a client of its own.
 */
export function createUserEnvironment(runtimedBin: string, options: UserEnvironmentOptions = {}): UserEnvironment {
  // realpath: /tmp may be a symlink; processes report canonical paths.
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'nmcp-user-')));
  const dirs: UserSessionDirs = {
    root,
    home: join(root, 'home'),
    project: join(root, 'project'),
    config: join(root, 'home', '.config'),
    cache: join(root, 'home', '.cache'),
    data: join(root, 'home', '.local', 'share'),
    state: join(root, 'home', '.local', 'state'),
    runtime: join(root, 'run'),
    faults: join(root, 'home', faultControlDir),
  };
  for (const dir of Object.values(dirs)) mkdirSync(dir, { recursive: true, mode: 0o700 });
  const env: Record<string, string> = {
    ...inheritedEnvironment(),
    HOME: dirs.home,
    XDG_CONFIG_HOME: dirs.config,
    XDG_CACHE_HOME: dirs.cache,
    XDG_DATA_HOME: dirs.data,
    XDG_STATE_HOME: dirs.state,
    XDG_RUNTIME_DIR: dirs.runtime,
    ...(options.hooksModule ? { NODE_OPTIONS: `--import=${pathToFileURL(options.hooksModule).href}` } : {}),
    ...options.env,
  };
  const socketPath = join(dirs.runtime, 'runt', 'runtimed.sock');
  const lockPath = join(dirs.runtime, 'runt', 'daemon.lock');
  const seenDaemons = new Set<number>();

  const runtimed = (args: readonly string[], extraEnv: Readonly<Record<string, string>> = {}) =>
    new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      execFile(
        process.execPath,
        [runtimedBin, ...args],
        { env: { ...env, ...extraEnv }, cwd: dirs.project, timeout: 60_000 },
        (error, stdout, errors) => {
          const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
          resolve({ code, stdout, stderr: errors });
        },
      );
    });

  const daemonPid = (): number | undefined => {
    let pid: number;
    try {
      // The lock names its holder: `{"pid":…,"start_time":…,…}` (a bare pid in older daemons).
      const text = readFileSync(lockPath, 'utf8').trim();
      pid = text.startsWith('{') ? Number((JSON.parse(text) as { pid?: unknown }).pid) : Number.parseInt(text, 10);
    } catch {
      return undefined;
    }
    const info = Number.isInteger(pid) && pid > 0 ? processInfo(pid) : undefined;
    if (!info?.cmdline.includes('runtimed')) return undefined;
    seenDaemons.add(pid);
    return pid;
  };

  let cleaned: Promise<void> | undefined;
  const cleanup = (): Promise<void> => {
    cleaned ??= (async () => {
      daemonPid();
      await runtimed(['stop']).catch(() => undefined);
      for (const pid of seenDaemons) if (!(await waitGone(pid, 15_000))) killQuietly(pid);
      // Whatever still runs with this HOME was started by the session (kernels of a killed daemon, ...).
      for (const info of processesWithHome(dirs.home)) killQuietly(info.pid, 'SIGTERM');
      for (const info of processesWithHome(dirs.home)) if (!(await waitGone(info.pid, 5000))) killQuietly(info.pid);
      rmSync(root, { recursive: true, force: true });
    })();
    return cleaned;
  };

  return { dirs, env, socketPath, runtimed, daemonPid, cleanup };
}

/** Waits up to `timeoutMs` for `pid` to exit; false when it still runs. */
export async function waitGone(pid: number, timeoutMs: number): Promise<boolean> {
  try {
    await waitFor(`process ${pid} to exit`, () => !isAlive(pid), { timeoutMs });
    return true;
  } catch {
    return false;
  }
}

/** Sends `signal` (SIGKILL by default) to `pid`, ignoring a process already gone. */
export function killQuietly(pid: number, signal: NodeJS.Signals = 'SIGKILL'): void {
  try {
    process.kill(pid, signal);
  } catch {
    // already gone
  }
}

/** What a user's shell passes on: everything but this project's own switches and the XDG dirs. */
function inheritedEnvironment(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value === undefined) continue;
    if (/^(NTERACT_|RUNTIMED_|XDG_|JUPYTER_|JPY_|VITEST|NODE_OPTIONS$)/.test(key)) continue;
    env[key] = value;
  }
  return env;
}
