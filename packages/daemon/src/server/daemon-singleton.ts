import { randomUUID } from 'node:crypto';
import { chmod, link, lstat, mkdir, open, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from '@nteract-mcp/foundation';
import { DaemonError } from '../daemon-error.js';
import { currentBootId, identifyProcess, probeProcess } from '../process/probe-process.js';
import { terminateVerifiedProcess } from '../process/terminate-verified-process.js';
import type { DaemonLayout } from '../resolve-daemon-layout.js';
import { type DaemonLockRecord, formatDaemonLockRecord, parseDaemonLockRecord } from './daemon-lock-record.js';
import { judgeLockHolder, type LockHolderVerdict } from './judge-lock-holder.js';
import { type DaemonPing, pingDaemon } from './ping-daemon.js';

/** The locks a running daemon holds. */
export interface DaemonSingleton {
  /** What our lock files say about us. */
  readonly record: DaemonLockRecord;
  /** Marks the locks `serving` (the socket is bound): a silent holder that is serving gets a short grace only. */
  markServing(): Promise<void>;
  /** Removes our lock files (a lock that is no longer ours is left alone). */
  release(): Promise<void>;
}

/** How long to give a lock holder that does not answer, and how to stop it; defaults suit real use. */
export interface SingletonTimings {
  /** A ping's time to answer. */
  readonly pingTimeoutMs: number;
  /** Grace for a silent holder whose lock says it is serving (its socket may be briefly busy). */
  readonly servingGraceMs: number;
  /**
   * Grace for a silent holder that is still starting (it has not bound its socket yet), or whose
   * socket accepts connections but does not answer (its event loop may be busy).
   */
  readonly startingGraceMs: number;
  /** After SIGTERM (the holder saves and stops in order), before SIGKILL. */
  readonly termGraceMs: number;
  readonly killGraceMs: number;
}

export const defaultSingletonTimings: SingletonTimings = Object.freeze({
  pingTimeoutMs: 2000,
  servingGraceMs: 3000,
  startingGraceMs: 15_000,
  termGraceMs: 10_000,
  killGraceMs: 3000,
});

/** One lock file's holder as judged now (for `runtimed status` and `runtimed stop`). */
export interface LockHolderReport {
  readonly lockPath: string;
  readonly record: DaemonLockRecord;
  /** The socket the holder said it listens on (or the one beside an older version's lock). */
  readonly socket: string;
  readonly verdict: LockHolderVerdict;
}

/**
 * Makes this process the one daemon for its socket and its data dir: a private socket directory
 * (0700, ours), a lock file beside the socket and one in the data dir, and no daemon answering on
 * the socket (a socket file nobody answers on is removed).
 *
 * A lock file says who holds it (pid, start time, boot id, a nonce, its socket; JSON). Its holder
 * is judged by what cannot lie ({@link judgeLockHolder}): a holder that answers a protocol ping
 * keeps the lock (`alreadyRunning`); a dead one (exited, a zombie nobody reaps, a pid now used by
 * another process, another boot) loses it at once, and nothing is signalled; a live holder that
 * does not answer gets a bounded grace (it may be starting), then is stopped by its verified pid
 * (SIGTERM, so it saves; SIGKILL after a bound) and the lock is taken over. A holder whose
 * identity cannot be verified (an older version's pid-only lock) is never signalled: after the
 * grace its lock is taken over with a warning.
 */
export async function acquireDaemonSingleton(
  layout: DaemonLayout,
  logger: Logger,
  timings: SingletonTimings = defaultSingletonTimings,
): Promise<DaemonSingleton> {
  await preparePrivateDir(layout.socketDir);
  await mkdir(layout.dataDir, { recursive: true, mode: 0o700 });
  const identity = await identifyProcess(process.pid);
  const bootId = await currentBootId();
  let record: DaemonLockRecord = {
    pid: process.pid,
    ...(identity?.startTime === undefined ? {} : { startTime: identity.startTime }),
    ...(bootId === undefined ? {} : { bootId }),
    nonce: randomUUID(),
    socket: layout.socketPath,
    startedAt: new Date().toISOString(),
    state: 'starting',
  };
  const dataLock = dataLockPath(layout);
  const paths = dataLock === layout.lockPath ? [layout.lockPath] : [layout.lockPath, dataLock];
  const context: LockContext = { own: record, defaultSocket: layout.socketPath, logger, timings };
  const taken: string[] = [];
  try {
    for (const path of paths) {
      await takeLock(
        path,
        path === layout.lockPath ? `socket ${layout.socketPath}` : `data dir ${layout.dataDir}`,
        context,
      );
      taken.push(path);
    }
    await removeStaleSocket(layout.socketPath, logger, timings);
  } catch (error) {
    await Promise.all(taken.map((path) => releaseLock(path, record)));
    throw error;
  }
  return {
    get record() {
      return record;
    },
    markServing: async () => {
      record = { ...record, state: 'serving' };
      await Promise.all(paths.map((path) => rewriteLock(path, record)));
    },
    release: async () => {
      await Promise.all(paths.map((path) => releaseLock(path, record)));
    },
  };
}

/** The data dir's lock file. */
export function dataLockPath(layout: DaemonLayout): string {
  return join(layout.dataDir, 'daemon.lock');
}

/** Judges the holders of this layout's lock files (missing or unreadable locks are left out). */
export async function inspectLockHolders(
  layout: DaemonLayout,
  timings: SingletonTimings = defaultSingletonTimings,
): Promise<LockHolderReport[]> {
  const reports: LockHolderReport[] = [];
  for (const lockPath of new Set([layout.lockPath, dataLockPath(layout)])) {
    const text = await readFile(lockPath, 'utf8').catch(() => undefined);
    const record = text === undefined ? undefined : parseDaemonLockRecord(text);
    if (record === undefined) continue;
    const socket = record.socket ?? layout.socketPath;
    const { ping: _ping, ...verdict } = await observe(record, socket, timings.pingTimeoutMs);
    reports.push({ lockPath, record, socket, verdict });
  }
  return reports;
}

interface LockContext {
  readonly own: DaemonLockRecord;
  readonly defaultSocket: string;
  readonly logger: Logger;
  readonly timings: SingletonTimings;
}

const lockAttempts = 5;

async function observe(
  record: DaemonLockRecord,
  socket: string,
  pingTimeoutMs: number,
): Promise<LockHolderVerdict & { readonly ping: DaemonPing['kind'] }> {
  const [processProbe, bootId, ping] = await Promise.all([
    probeProcess(record.pid),
    currentBootId(),
    pingDaemon(socket, pingTimeoutMs),
  ]);
  const answeringPid = ping.kind === 'answered' ? ping.pid : undefined;
  return {
    ...judgeLockHolder(record, { process: processProbe, bootId, answeringPid, ownPid: process.pid }),
    ping: ping.kind,
  };
}

async function takeLock(path: string, what: string, context: LockContext): Promise<void> {
  const { own, logger } = context;
  const text = formatDaemonLockRecord(own);
  for (let attempt = 0; attempt < lockAttempts; attempt++) {
    if (await createExclusive(path, text)) return;
    const found = await readFile(path, 'utf8').catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return undefined;
      throw error;
    });
    if (found === undefined) continue;
    const holder = parseDaemonLockRecord(found);
    if (holder === undefined) {
      logger.warn('removing an unreadable lock file', { lock: path });
    } else if (holder.nonce !== undefined && holder.nonce === own.nonce) {
      return;
    } else {
      await settleHolder(holder, path, what, context);
    }
    await removeIfUnchanged(path, found);
  }
  throw new DaemonError(
    'alreadyRunning',
    `Could not take the lock ${path}: another daemon is starting for the ${what}.`,
  );
}

/**
 * Returns once `holder` has no claim to its lock any more (dead, stopped, or unverifiable after the
 * grace); throws `alreadyRunning` while it answers.
 */
async function settleHolder(holder: DaemonLockRecord, path: string, what: string, context: LockContext): Promise<void> {
  const { logger, timings } = context;
  const socket = holder.socket ?? context.defaultSocket;
  const running = (): DaemonError =>
    new DaemonError(
      'alreadyRunning',
      `a daemon is already running (pid ${holder.pid}) for the ${what}. Use 'runtimed status' or 'runtimed stop'.`,
    );
  const since = Date.now();
  let verdict = await observe(holder, socket, timings.pingTimeoutMs);
  // A holder still starting, or whose socket accepts but does not answer (a busy event loop), gets
  // the long grace; one whose socket is gone or refuses gets the short one.
  const graceMs = (): number =>
    holder.state === 'starting' || verdict.ping === 'silent' ? timings.startingGraceMs : timings.servingGraceMs;
  while ((verdict.kind === 'unreachable' || verdict.kind === 'unverifiable') && Date.now() < since + graceMs()) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    verdict = await observe(holder, socket, timings.pingTimeoutMs);
  }
  switch (verdict.kind) {
    case 'answering':
      throw running();
    case 'dead':
      logger.info('taking over the lock of a dead daemon', { lock: path, pid: holder.pid, why: verdict.why });
      return;
    case 'unverifiable':
      logger.warn(
        'the lock holder does not answer and its identity cannot be verified; taking the lock over without signalling it',
        { lock: path, pid: holder.pid, socket },
      );
      return;
    case 'unreachable': {
      logger.warn('the daemon holding the lock does not answer on its socket; stopping it', {
        lock: path,
        pid: holder.pid,
        socket,
      });
      const outcome = await terminateVerifiedProcess(holder, {
        termGraceMs: timings.termGraceMs,
        killGraceMs: timings.killGraceMs,
      });
      logger.info('the unreachable daemon is gone', { pid: holder.pid, outcome });
      if (outcome === 'survived') {
        throw new DaemonError(
          'alreadyRunning',
          `The daemon pid ${holder.pid} holds the lock for the ${what} and does not answer on ${socket}, and it survived SIGKILL.`,
        );
      }
      return;
    }
  }
}

/** Creates `path` with `text` only if it does not exist, atomically (nobody sees it half written). */
async function createExclusive(path: string, text: string): Promise<boolean> {
  const temp = `${path}.${randomUUID()}.tmp`;
  await writeFile(temp, text, { mode: 0o600 });
  try {
    await link(temp, path);
    return true;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return false;
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP') throw error;
  } finally {
    await rm(temp, { force: true });
  }
  // A file system without hard links: exclusive create, then write.
  try {
    const file = await open(path, 'wx', 0o600);
    await file.writeFile(text);
    await file.close();
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
}

async function removeIfUnchanged(path: string, expected: string): Promise<void> {
  const now = await readFile(path, 'utf8').catch(() => undefined);
  if (now === expected) await rm(path, { force: true });
}

async function isOurs(path: string, record: DaemonLockRecord): Promise<boolean> {
  const text = await readFile(path, 'utf8').catch(() => undefined);
  const found = text === undefined ? undefined : parseDaemonLockRecord(text);
  return found?.nonce === record.nonce;
}

async function rewriteLock(path: string, record: DaemonLockRecord): Promise<void> {
  if (!(await isOurs(path, record))) return;
  const temp = `${path}.${randomUUID()}.tmp`;
  await writeFile(temp, formatDaemonLockRecord(record), { mode: 0o600 });
  await rename(temp, path).catch(async (error: unknown) => {
    await rm(temp, { force: true });
    throw error;
  });
}

async function releaseLock(path: string, record: DaemonLockRecord): Promise<void> {
  if (await isOurs(path, record)) await rm(path, { force: true });
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

async function removeStaleSocket(socketPath: string, logger: Logger, timings: SingletonTimings): Promise<void> {
  try {
    await lstat(socketPath);
  } catch {
    return;
  }
  const ping = await pingDaemon(socketPath, timings.pingTimeoutMs);
  if (ping.kind === 'answered')
    throw new DaemonError('alreadyRunning', `Another daemon (pid ${ping.pid}) is answering on ${socketPath}.`);
  logger.info('removing the stale socket of a dead daemon', { socketPath });
  await rm(socketPath, { force: true });
}
