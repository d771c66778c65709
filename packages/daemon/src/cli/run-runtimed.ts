import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, lstatSync, openSync, readdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { type Logger, mallocArenaEnvironment, StderrLogger, SystemClock } from '@nteract-mcp/foundation';
import { RuntimedConnection, RuntimedProtocolError } from '@nteract-mcp/runtimed-protocol';
import { DaemonError } from '../daemon-error.js';
import { KernelRecords } from '../kernel/kernel-records.js';
import { PythonProbeCache } from '../kernel/python-probe-cache.js';
import { identifyProcess } from '../process/probe-process.js';
import { terminateVerifiedProcess, waitForExit } from '../process/terminate-verified-process.js';
import { type DaemonLayout, resolveDaemonLayout } from '../resolve-daemon-layout.js';
import { JupyterKernelLauncher } from '../room/jupyter-kernel-launcher.js';
import { defaultSingletonTimings, inspectLockHolders, type LockHolderReport } from '../server/daemon-singleton.js';
import { RuntimedServer } from '../server/runtimed-server.js';
import { detachedDaemonArguments } from './detached-daemon-arguments.js';
import { formatRuntimedStatus } from './format-runtimed-status.js';
import { parseRuntimedOptions, type RuntimedOptions, runtimedUsage } from './runtimed-options.js';

export interface RuntimedIo {
  readonly stdout: { write(text: string): unknown };
  readonly stderr: { write(text: string): unknown };
  readonly env: Readonly<Record<string, string | undefined>>;
  /** The script to re-run for a detached `start` (the bin itself). */
  readonly entry: string;
}

/** Runs one `runtimed` command line and resolves with its exit code (`start --foreground` resolves when the daemon stops). */
export async function runRuntimed(argv: readonly string[], io: RuntimedIo, version: string): Promise<number> {
  let options: RuntimedOptions;
  try {
    options = parseRuntimedOptions(argv);
  } catch (error) {
    io.stderr.write(`runtimed: ${(error as Error).message}\n`);
    return 2;
  }
  try {
    switch (options.command) {
      case 'help':
        io.stdout.write(runtimedUsage);
        return 0;
      case 'version':
        io.stdout.write(`runtimed ${version}\n`);
        return 0;
      case 'status':
        return await status(options, io);
      case 'stop':
        return await stop(options, io);
      case 'open':
        return await openPage(options, io);
      case 'page':
        return await rotatePageToken(options, io);
      case 'start':
        return options.foreground
          ? await startForeground(options, io, version)
          : await startDetached(argv, options, io);
    }
  } catch (error) {
    io.stderr.write(`runtimed: ${(error as Error).message}\n`);
    return 1;
  }
}

function layoutOf(options: RuntimedOptions, io: RuntimedIo) {
  return resolveDaemonLayout({ socketPath: options.socketPath, dataDir: options.dataDir, env: io.env });
}

async function startForeground(options: RuntimedOptions, io: RuntimedIo, version: string): Promise<number> {
  const layout = layoutOf(options, io);
  const logger: Logger = new StderrLogger(process.stderr).child('runtimed');
  const probeCache = new PythonProbeCache({ file: layout.probeCachePath, logger: logger.child('kernelspec') });
  const launcher = new JupyterKernelLauncher({
    logger,
    records: new KernelRecords(layout.kernelsDir, logger.child('kernels'), layout.connectionsDir),
    connectionDir: layout.connectionsDir,
    disabledReason: options.noKernels ? 'kernels are disabled (runtimed start --no-kernels)' : undefined,
    kernelspec: {
      ...(options.python ? { pythonCandidates: [options.python] } : {}),
      ...(options.kernelspecDir ? { searchDirs: [options.kernelspecDir] } : {}),
    },
    probeCache,
  });
  const server = await RuntimedServer.start({
    layout,
    version: io.env.RUNTIMED_REPORTED_VERSION?.trim() || version,
    settings: {
      keepAliveMs: options.keepAliveMs,
      vanishedPeerKeepAliveMs: options.vanishedPeerKeepAliveMs,
      autosaveDebounceMs: options.autosaveDebounceMs,
      autosaveMaxDelayMs: options.autosaveMaxDelayMs,
      ledgerCapacity: 1024,
      executionHistory: 256,
      reaperIntervalMs: options.reaperIntervalMs,
      roomTtlMs: options.roomTtlMs,
      roomSoftCap: options.roomSoftCap,
    },
    journal: { fsync: options.journalFsync },
    socketCheckMs: options.socketCheckMs,
    stallRefusalMs: options.stallRefusalMs,
    page: options.noPage ? false : { port: options.pagePort },
    launcher,
    clock: new SystemClock(),
    logger,
    ...(options.maxMessageBytes === undefined ? {} : { maxMessageBytes: options.maxMessageBytes }),
  });
  // The first kernel (often the rejoin of a notebook right after this start) finds its spec resolved or under way.
  void launcher.prewarm();
  const stopped = new Promise<void>((resolve) => server.onStopped(resolve));
  const onSignal = (signal: NodeJS.Signals): void => {
    void server.stop(`received ${signal}`);
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  // Keep the event loop alive while serving (the clock's timers are unref'd).
  const keepAlive = setInterval(() => undefined, 1 << 30);
  await stopped;
  probeCache.close();
  clearInterval(keepAlive);
  process.off('SIGINT', onSignal);
  process.off('SIGTERM', onSignal);
  return 0;
}

async function startDetached(argv: readonly string[], options: RuntimedOptions, io: RuntimedIo): Promise<number> {
  const layout = layoutOf(options, io);
  const running = await queryInfo(layout.socketPath);
  if (running) {
    io.stderr.write(`runtimed: already running (pid ${running.pid}) on ${layout.socketPath}\n`);
    return 1;
  }
  const logFile = options.logFile ?? join(layout.socketDir, 'runtimed.log');
  const { mkdirSync } = await import('node:fs');
  mkdirSync(layout.socketDir, { recursive: true, mode: 0o700 });
  const log = openSync(logFile, 'a', 0o600);
  const child = spawn(process.execPath, detachedDaemonArguments(io.entry, argv, io.env), {
    detached: true,
    stdio: ['ignore', log, log],
    // A daemon lives for days: its malloc arenas are limited (foundation's mallocArenaEnvironment).
    env: mallocArenaEnvironment(io.env) as NodeJS.ProcessEnv,
  });
  closeSync(log);
  child.unref();
  let exited: number | null | undefined;
  child.once('exit', (code) => {
    exited = code;
  });
  // Generous: taking over from a live daemon that does not answer may take a grace and a SIGTERM.
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    const info = await queryInfo(layout.socketPath);
    if (info && info.pid === child.pid) {
      io.stdout.write(`runtimed started (pid ${info.pid}, socket ${layout.socketPath}, log ${logFile})\n`);
      return 0;
    }
    if (exited !== undefined) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  // Another daemon may have won a race to start: that one serves, and ours stepped aside.
  const winner = exited !== undefined ? await queryInfo(layout.socketPath) : undefined;
  if (winner) {
    io.stderr.write(`runtimed: already running (pid ${winner.pid}) on ${layout.socketPath}\n`);
    return 1;
  }
  const tail = readFileSync(logFile, 'utf8').trim().split('\n').slice(-5).join('\n');
  io.stderr.write(
    `runtimed: the daemon did not come up${exited !== undefined ? ` (exit ${exited})` : ''}. Last log lines (${logFile}):\n${tail}\n`,
  );
  return 1;
}

async function status(options: RuntimedOptions, io: RuntimedIo): Promise<number> {
  const layout = layoutOf(options, io);
  const { socketPath } = layout;
  const opened = await openControl(socketPath);
  if (!opened) {
    const silent = await silentHolder(layout);
    if (silent) {
      const { record, socket, lockPath, verdict } = silent;
      const verified = verdict.kind === 'unreachable';
      io.stdout.write(
        options.json
          ? `${JSON.stringify({ running: true, answering: false, verified, pid: record.pid, socket, lock: lockPath })}\n`
          : verified
            ? `runtimed is running (pid ${record.pid}) but not answering on ${socket}. 'runtimed stop' stops it; 'runtimed start' replaces it.\n`
            : `a process (pid ${record.pid}) holds the runtimed lock ${lockPath} but does not answer on ${socket}; it cannot be verified to be the daemon that took the lock.\n`,
      );
      return 1;
    }
    io.stdout.write(
      options.json
        ? `${JSON.stringify({ running: false, socket: socketPath })}\n`
        : `runtimed is not running (no daemon at ${socketPath})\n`,
    );
    return 3;
  }
  try {
    const { greeting, connection } = opened;
    const { rooms } = await connection.requestControl({ type: 'list_rooms' });
    // An older daemon has no page (and no get_page).
    const page = (await connection.requestControl({ type: 'get_page' }).catch(() => undefined))?.url ?? null;
    if (options.json) {
      const { type: _type, ...info } = greeting;
      io.stdout.write(`${JSON.stringify({ running: true, ...info, socket: socketPath, page, rooms }, null, 2)}\n`);
    } else {
      io.stdout.write(formatRuntimedStatus(greeting, socketPath, rooms, page));
    }
    return 0;
  } finally {
    opened.connection.close();
  }
}

/**
 * `runtimed open [PATH|ID]`: prints an address that opens the page (the index, or the page of the
 * notebook a path or id names among the open ones) once, within an hour: its launch code is in the
 * fragment. When a desktop session runs it also opens the page with `xdg-open`, through another
 * such address written to a redirect file beside the socket (see {@link writeLaunchRedirect}): no
 * launch address is ever in a process's arguments, which other local users can read. Exits 3 when
 * no daemon runs, 1 when it serves no page (or is too old to give launch addresses) or the
 * notebook is not open.
 */
function openPage(options: RuntimedOptions, io: RuntimedIo): Promise<number> {
  return withDaemon(options, io, async (connection, socketPath) => {
    let notebookId: string | undefined;
    if (options.target !== undefined) {
      const { rooms } = await connection.requestControl({ type: 'list_rooms' });
      const wanted = options.target;
      const absolute = resolve(wanted);
      const room = rooms.find(
        (candidate) => candidate.notebook_id === wanted.toLowerCase() || candidate.notebook_path === absolute,
      );
      if (!room) {
        io.stderr.write(`runtimed: ${wanted} is not open in the daemon ('runtimed status' lists what is)\n`);
        return 1;
      }
      notebookId = room.notebook_id;
    }
    // Each answer carries a new launch address, good for one opening.
    const launchAddress = async (): Promise<string | null | undefined> => {
      const page = await connection.requestControl({
        type: 'get_page',
        ...(notebookId === undefined ? {} : { notebook_id: notebookId }),
      });
      return page.url === null ? null : page.launch_url;
    };
    const printed = await launchAddress();
    if (printed === null) {
      io.stderr.write('runtimed: this daemon serves no web page (it was started with --no-page)\n');
      return 1;
    }
    if (printed === undefined) {
      io.stderr.write(
        "runtimed: this daemon is older than one-time page addresses and can give no safe address to its page; restart it ('runtimed stop', then 'runtimed start'; its kernels stop)\n",
      );
      return 1;
    }
    io.stdout.write(`${printed}\n`);
    io.stderr.write("runtimed: the address opens the page once, within an hour ('runtimed open' gives another)\n");
    if (io.env.DISPLAY || io.env.WAYLAND_DISPLAY) {
      const opening = await launchAddress();
      if (opening) {
        const file = writeLaunchRedirect(dirname(socketPath), opening);
        spawn('xdg-open', [file], { detached: true, stdio: 'ignore', env: io.env as NodeJS.ProcessEnv })
          .on('error', () => undefined)
          .unref();
      }
    }
    return 0;
  });
}

/**
 * Runs `use` on a control connection to the daemon of `options`' socket, closed after it; exits 3,
 * saying so, when no daemon runs there.
 */
async function withDaemon(
  options: RuntimedOptions,
  io: RuntimedIo,
  use: (connection: RuntimedConnection, socketPath: string) => Promise<number>,
): Promise<number> {
  const { socketPath } = layoutOf(options, io);
  const opened = await openControl(socketPath);
  if (!opened) {
    io.stderr.write(`runtimed: no daemon runs at ${socketPath} ('runtimed start' starts one)\n`);
    return 3;
  }
  try {
    return await use(opened.connection, socketPath);
  } finally {
    opened.connection.close();
  }
}

/** How long a redirect file of `runtimed open` is kept: as long as the launch address in it works. */
const launchRedirectLifetimeMs = 60 * 60 * 1000;

/** The redirect files `runtimed open` writes. */
const launchRedirectPattern = /^runtimed-open-[0-9a-f]+\.html$/;

/**
 * Writes `runtimed-open-<random>.html` (0600) in `dir` (the socket's directory, the daemon's
 * user's only): a page that sends the browser on to `launchUrl`, so the browser opens the file
 * and no process's arguments carry the address. Removes the ones older than an hour (their
 * addresses have expired) first. Returns the file's path.
 */
function writeLaunchRedirect(dir: string, launchUrl: string): string {
  const expired = Date.now() - launchRedirectLifetimeMs;
  for (const name of readdirSafe(dir)) {
    if (!launchRedirectPattern.test(name)) continue;
    try {
      const path = join(dir, name);
      const stats = lstatSync(path);
      if (stats.isFile() && stats.mtimeMs < expired) unlinkSync(path);
    } catch {
      // Gone already, or not ours to remove: leave it.
    }
  }
  const file = join(dir, `runtimed-open-${randomBytes(16).toString('hex')}.html`);
  const href = escapeHtml(launchUrl);
  writeFileSync(
    file,
    `<!doctype html>
<html>
<head>
<meta charset="utf-8">
<meta name="referrer" content="no-referrer">
<meta http-equiv="refresh" content="0;url=${href}">
<title>runtimed: opening the notebook page</title>
</head>
<body>
<p>Opening the notebook page&hellip; If nothing happens, <a href="${href}">open it here</a>.</p>
</body>
</html>
`,
    { mode: 0o600, flag: 'wx' },
  );
  return file;
}

function readdirSafe(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

/** `text` safe inside HTML text and a double- or single-quoted attribute. */
function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}

/**
 * `runtimed page --rotate`: the page gets a new token, so every page open so far and every launch
 * address given so far stops working. Exits 3 when no daemon runs, 1 when it serves no page.
 */
function rotatePageToken(options: RuntimedOptions, io: RuntimedIo): Promise<number> {
  return withDaemon(options, io, async (connection) => {
    const answer = await connection.requestControl({ type: 'rotate_page_token' }).catch((error: unknown) => {
      if (RuntimedProtocolError.is(error, 'daemonRefused') && error.code === 'unknown_request') return undefined;
      throw error;
    });
    if (answer === undefined) {
      io.stderr.write(
        "runtimed: this daemon is older than 'runtimed page --rotate'; restart it ('runtimed stop', then 'runtimed start'; its kernels stop) to rotate its page's token\n",
      );
      return 1;
    }
    if (!answer.rotated) {
      io.stderr.write(
        'runtimed: this daemon serves no web page (it was started with --no-page), so it has no page token to rotate\n',
      );
      return 1;
    }
    io.stdout.write("The page's token was rotated: every page open so far must be opened again (runtimed open).\n");
    return 0;
  });
}

/** How long `stop` waits for each step of a daemon's shutdown: its connection closing, its socket going silent, its exit. */
const stopWaitMs = 15_000;

async function stop(options: RuntimedOptions, io: RuntimedIo): Promise<number> {
  const layout = layoutOf(options, io);
  const { socketPath } = layout;
  const opened = await openControl(socketPath);
  if (!opened) {
    const silent = await silentHolder(layout);
    if (!silent) {
      io.stdout.write(`runtimed is not running (no daemon at ${socketPath})\n`);
      return 0;
    }
    const { record, socket, lockPath, verdict } = silent;
    if (verdict.kind !== 'unreachable') {
      io.stderr.write(
        `runtimed: a process (pid ${record.pid}) holds the lock ${lockPath} but does not answer on ${socket}, and it cannot be verified to be the daemon that took the lock; not signalling it. Check it yourself (e.g. ps -p ${record.pid}).\n`,
      );
      return 1;
    }
    const outcome = await terminateVerifiedProcess(record, {
      termGraceMs: defaultSingletonTimings.termGraceMs,
      killGraceMs: defaultSingletonTimings.killGraceMs,
    });
    if (outcome === 'survived') {
      io.stderr.write(`runtimed: the daemon (pid ${record.pid}) does not answer and survived SIGTERM and SIGKILL\n`);
      return 1;
    }
    io.stdout.write(`runtimed stopped (pid ${record.pid}; it was not answering on ${socket})\n`);
    return 0;
  }
  const { pid } = opened.greeting;
  // Who it is, before it is asked to go: its pid alone could be another process's by the time we look.
  const daemon = typeof pid === 'number' ? await identifyProcess(pid) : undefined;
  const closed = new Promise<void>((resolve) => opened.connection.onClose(() => resolve()));
  await opened.connection.request({ type: 'shutdown_daemon' });
  await Promise.race([closed, new Promise((resolve) => setTimeout(resolve, stopWaitMs))]);
  const deadline = Date.now() + stopWaitMs;
  while (Date.now() < deadline && (await queryInfo(socketPath)))
    await new Promise((resolve) => setTimeout(resolve, 100));
  // It stops answering before it is done (it still saves its rooms and releases its locks): stopped
  // means its process has exited.
  if (daemon !== undefined && !(await waitForExit(daemon, stopWaitMs))) {
    io.stderr.write(
      `runtimed: the daemon (pid ${String(pid)}) stopped answering but is still running after ${stopWaitMs / 1000} s\n`,
    );
    return 1;
  }
  io.stdout.write(`runtimed stopped (pid ${String(pid)})\n`);
  return 0;
}

/** The holder of one of the layout's locks that runs but does not answer, if any. */
async function silentHolder(layout: DaemonLayout): Promise<LockHolderReport | undefined> {
  const reports = await inspectLockHolders(layout);
  return (
    reports.find((report) => report.verdict.kind === 'unreachable') ??
    reports.find((report) => report.verdict.kind === 'unverifiable')
  );
}

async function openControl(socketPath: string) {
  try {
    return await RuntimedConnection.open({ socketPath, handshake: { channel: 'control' }, timeoutMs: 3000 });
  } catch (error) {
    if (RuntimedProtocolError.is(error, 'daemonUnavailable')) return undefined;
    throw error;
  }
}

async function queryInfo(socketPath: string): Promise<{ pid: number } | undefined> {
  const opened = await openControl(socketPath).catch((error: unknown) => {
    if (DaemonError.is(error) || RuntimedProtocolError.is(error)) return undefined;
    throw error;
  });
  if (!opened) return undefined;
  opened.connection.close();
  return { pid: Number(opened.greeting.pid) };
}
