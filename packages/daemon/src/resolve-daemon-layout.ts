import { homedir } from 'node:os';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { type RuntimedSocketEnvironment, resolveRuntimedSocketPath } from '@nteract-mcp/runtimed-protocol';
import { DaemonError } from './daemon-error.js';

/** Where one daemon keeps its files. The socket directory also holds the lock and `daemon.json`. */
export interface DaemonLayout {
  readonly socketPath: string;
  readonly socketDir: string;
  readonly lockPath: string;
  readonly infoPath: string;
  /** The web page's address and token (`page.json`, 0600), while the daemon serves one. */
  readonly pagePath: string;
  /** Persistent state: the UUID/path registry and persisted untitled notebooks. */
  readonly dataDir: string;
  readonly registryPath: string;
  readonly untitledDir: string;
  /** One record per running kernel process, so a next daemon can reap a dead one's kernels. */
  readonly kernelsDir: string;
  /** Kernel connection files (a private 0700 directory each), in the runtime dir beside the socket. */
  readonly connectionsDir: string;
  /** What the Python interpreters answered to the kernel lookup, kept for the next daemon (see `PythonProbeCache`). */
  readonly probeCachePath: string;
}

export interface DaemonLayoutOptions {
  readonly socketPath?: string;
  readonly dataDir?: string;
  readonly env?: RuntimedSocketEnvironment & { readonly XDG_DATA_HOME?: string };
}

/**
 * The socket path follows the shared discovery rules (`RUNTIMED_SOCKET_PATH`, XDG runtime dir,
 * user cache dir); the data dir defaults to `$XDG_DATA_HOME/runt` (`~/.local/share/runt`).
 * Relative paths given as options are resolved against the cwd.
 */
export function resolveDaemonLayout(options: DaemonLayoutOptions = {}): DaemonLayout {
  const env = options.env ?? process.env;
  const socketPath = resolve(options.socketPath ?? resolveRuntimedSocketPath(env));
  if (Buffer.byteLength(socketPath) > 100) {
    throw new DaemonError(
      'invalidOption',
      `Socket path is too long for a Unix socket (${Buffer.byteLength(socketPath)} bytes, at most 100): ${socketPath}`,
    );
  }
  const dataHome = env.XDG_DATA_HOME?.trim();
  const defaultDataDir =
    dataHome && isAbsolute(dataHome)
      ? join(dataHome, 'runt')
      : join(env.HOME?.trim() || homedir(), '.local', 'share', 'runt');
  const dataDir = resolve(options.dataDir ?? defaultDataDir);
  const socketDir = dirname(socketPath);
  return Object.freeze({
    socketPath,
    socketDir,
    lockPath: join(socketDir, 'daemon.lock'),
    infoPath: join(socketDir, 'daemon.json'),
    pagePath: join(socketDir, 'page.json'),
    dataDir,
    registryPath: join(dataDir, 'registry.json'),
    untitledDir: join(dataDir, 'untitled'),
    kernelsDir: join(dataDir, 'kernels'),
    connectionsDir: join(socketDir, 'kernels'),
    probeCachePath: join(dataDir, 'cache', 'python-probes.json'),
  });
}
