import { chmod, lstat, mkdir, open, readFile, rm, stat } from 'node:fs/promises';
import { connect } from 'node:net';
import { join } from 'node:path';
import type { Logger } from '@nteract-mcp/core';
import { DaemonError } from '../daemon-error.js';
import type { DaemonLayout } from '../resolve-daemon-layout.js';

/** The locks a running daemon holds; `release` removes them. */
export interface DaemonSingleton {
  release(): Promise<void>;
}

/**
 * Makes this process the one daemon for its socket and its data dir: a private socket directory
 * (0700, ours), a lock file beside the socket and one in the data dir (each holding our pid; a lock
 * whose pid is dead is stale and taken over), and no live daemon answering on the socket (a stale
 * socket file is removed). Throws `alreadyRunning` or `unsafeSocketDir` with a clear message.
 */
export async function acquireDaemonSingleton(layout: DaemonLayout, logger: Logger): Promise<DaemonSingleton> {
  await preparePrivateDir(layout.socketDir);
  await mkdir(layout.dataDir, { recursive: true, mode: 0o700 });
  const dataLock = join(layout.dataDir, 'daemon.lock');
  await takeLock(layout.lockPath, `socket ${layout.socketPath}`);
  try {
    if (dataLock !== layout.lockPath) await takeLock(dataLock, `data dir ${layout.dataDir}`);
  } catch (error) {
    await rm(layout.lockPath, { force: true });
    throw error;
  }
  try {
    await removeStaleSocket(layout.socketPath, logger);
  } catch (error) {
    await Promise.all([rm(layout.lockPath, { force: true }), rm(dataLock, { force: true })]);
    throw error;
  }
  return {
    release: async () => {
      await Promise.all([releaseLock(layout.lockPath), releaseLock(dataLock)]);
    },
  };
}

async function preparePrivateDir(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const info = await stat(dir);
  const me = process.getuid?.();
  if (me !== undefined && info.uid !== me) {
    throw new DaemonError(
      'unsafeSocketDir',
      `The socket directory ${dir} belongs to uid ${info.uid}, not to this user (uid ${me}); choose another --socket.`,
    );
  }
  if ((info.mode & 0o077) !== 0) await chmod(dir, 0o700);
}

async function takeLock(path: string, what: string): Promise<void> {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const file = await open(path, 'wx', 0o600);
      await file.writeFile(`${process.pid}\n`);
      await file.close();
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const owner = Number.parseInt((await readFile(path, 'utf8').catch(() => '')).trim(), 10);
    if (Number.isInteger(owner) && owner > 0 && owner !== process.pid && isAlive(owner)) {
      throw new DaemonError(
        'alreadyRunning',
        `a daemon is already running (pid ${owner}) for the ${what}. Use 'runtimed status' or 'runtimed stop'.`,
      );
    }
    await rm(path, { force: true });
  }
  throw new DaemonError(
    'alreadyRunning',
    `Could not take the lock ${path}: another daemon is starting for the ${what}.`,
  );
}

async function releaseLock(path: string): Promise<void> {
  const owner = Number.parseInt((await readFile(path, 'utf8').catch(() => '')).trim(), 10);
  if (owner === process.pid) await rm(path, { force: true });
}

async function removeStaleSocket(socketPath: string, logger: Logger): Promise<void> {
  try {
    await lstat(socketPath);
  } catch {
    return;
  }
  const answered = await new Promise<boolean>((resolve) => {
    const probe = connect(socketPath);
    probe.once('connect', () => {
      probe.destroy();
      resolve(true);
    });
    probe.once('error', () => resolve(false));
  });
  if (answered) throw new DaemonError('alreadyRunning', `Another daemon is answering on ${socketPath}.`);
  logger.info('removing stale socket of a dead daemon', { socketPath });
  await rm(socketPath, { force: true });
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
