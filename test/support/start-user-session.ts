import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { CallToolResultSchema, type ClientCapabilities } from '@modelcontextprotocol/sdk/types.js';
import { readSessionReport, type SessionReport } from '@nteract-mcp/core';
import {
  createUserEnvironment,
  killQuietly,
  type UserEnvironment,
  type UserSessionDirs,
  waitGone,
} from './create-user-environment.js';
import { childrenOf, descendantsOf } from './process-tree.js';
import { shippedBins } from './shipped-bins.js';
import { spawnShippedProxy } from './spawn-shipped-proxy.js';
import { TappedTransport } from './tapped-transport.js';
import { waitFor } from './wait-for.js';

/** The test-only hook module (see fault-hooks.mjs); loaded only with `faultHooks: true`. */
export const faultHooksModule = fileURLToPath(new URL('./fault-hooks.mjs', import.meta.url));

export interface UserSessionOptions {
  /**
   * Load the test-only fault hooks into the session's processes (through NODE_OPTIONS) so the
   * `faults` helpers that need them work. Off by default: the session is then exactly a user's.
   */
  readonly faultHooks?: boolean;
  /** Extra environment for the proxy (and so the child and the daemon), e.g. `NTERACT_MCP_LOG_LEVEL`. */
  readonly env?: Readonly<Record<string, string>>;
  /** Extra arguments for the proxy bin (default none: default options). */
  readonly proxyArgs?: readonly string[];
  /** The client's identity in `initialize` (default Claude Code's). */
  readonly clientInfo?: { readonly name: string; readonly version: string; readonly title?: string };
  /**
   * The capabilities the client declares in `initialize` (default none), e.g.
   * `{ elicitation: { url: {} } }`; set its request handlers on `session.client` before the calls.
   */
  readonly capabilities?: ClientCapabilities;
  /** Timeout of each tool call (default 180 s). */
  readonly requestTimeoutMs?: number;
  /**
   * Another agent of the same user: this session's proxy starts in `joining`'s HOME and project
   * dir (so it finds the same daemon), with a client of its own. Its `stop` ends only its own
   * client, proxy and child; `joining`'s stop ends the daemon and removes the dirs. `env` and
   * `faultHooks` are `joining`'s.
   */
  readonly joining?: UserSession;
}

/** The environment of each session started here, for the sessions that join it. */
const environments = new WeakMap<UserSession, UserEnvironment>();

export type { UserSessionDirs };

/** A tool call's answer, taken apart. */
export interface ToolOutcome {
  readonly raw: Record<string, unknown>;
  /** Every text item, in order (a restart banner is its own last item). */
  readonly texts: readonly string[];
  /** The text items joined by newlines. */
  readonly text: string;
  /** `structuredContent`, when given. */
  readonly structured: unknown;
  /** The first text item that parses as a JSON object. */
  readonly json: Record<string, unknown> | undefined;
  readonly isError: boolean;
  /** The child's session report (`_meta['nteract/session']`), when the result carries one. */
  readonly session: SessionReport | undefined;
}

/** A call that may fail at the protocol level: settles either way, never rejects. */
export type SettledCall =
  | { readonly ok: true; readonly outcome: ToolOutcome }
  | { readonly ok: false; readonly error: Error };

/** A line of `fired.log`: one firing of a fault hook. */
export interface FiredHook {
  readonly pid: number;
  readonly script: string;
  readonly hook: string;
  readonly [key: string]: unknown;
}

export interface SessionPids {
  /** The proxy (the process the client started). */
  readonly proxy: number;
  /** The running child MCP server, read from the process tree (no request). */
  child(): number | undefined;
  /** Waits for a running child other than `previous`. */
  waitForChild(previous?: number): Promise<number>;
  /** The child pid the proxy reports in `session_status` (`proxy.child_pid`); this sends a request. */
  childFromStatus(): Promise<number | undefined>;
  /** The running daemon: the pid in its lock file beside the socket, when that process runs. */
  daemon(): number | undefined;
  /** Waits for a running daemon other than `previous`. */
  waitForDaemon(previous?: number): Promise<number>;
  /** The running kernels of the current daemon (its ipykernel descendants). */
  kernels(): number[];
}

export interface SessionFaults {
  /** SIGKILLs the running child (waits for one to run, never for the next) and returns its pid. */
  killChild(): Promise<number>;
  /** Arms the hook: the child SIGKILLs itself on reading the next `tools/call` of `tool`. */
  killChildOnRequest(tool: string, match?: string): void;
  /** Arms the hook: the child runs the next `tools/call` of `tool`, then SIGKILLs itself before replying. */
  killChildBeforeReply(tool: string, match?: string): void;
  /** Makes the running child exit with code 75 (hook: SIGUSR2); returns its pid. */
  childExit75(): Promise<number>;
  /** SIGKILLs the running daemon (socket and locks stay behind, like a crash); returns its pid. */
  killDaemon(): Promise<number>;
  /**
   * Stops the daemon's process (SIGSTOP) for `ms`, then lets it go on (SIGCONT) — a daemon that
   * hangs. Resolves at once with the pid; the returned `resume` ends the stall early (idempotent).
   */
  stallDaemon(ms: number): Promise<{ readonly pid: number; resume(): void }>;
  /** `runtimed stop` with the session's environment; resolves once the daemon process is gone. */
  stopDaemon(): Promise<number | undefined>;
  /** `runtimed start` by hand with the session's environment, reporting `version` when given. */
  startDaemon(version?: string): Promise<number>;
  /**
   * Stops the daemon and starts one reporting `version` (through the daemon's
   * RUNTIMED_REPORTED_VERSION): a daemon upgrade as the child sees it. Retries when the child
   * restarted the old version in between.
   */
  upgradeDaemon(version: string): Promise<number>;
  /** Hook: while active, the daemon drops its `event`/`broadcast` frames. Returns the healer. */
  dropDaemonEvents(frames?: readonly ('event' | 'broadcast')[]): () => void;
  /** Hook: while active, the daemon holds its `event`/`broadcast` frames `ms` before writing them. */
  delayDaemonEvents(ms: number, frames?: readonly ('event' | 'broadcast')[]): () => void;
  /** Hook: the next `count` `get_daemon_info` answers are errors on a connection that stays open. */
  failDaemonInfo(count?: number): void;
  /** SIGKILLs the kernels of the running daemon; returns their pids (waits for one to run). */
  killKernel(): Promise<number[]>;
  /**
   * Makes the daemon's writes of files under `dir` fail with `errno` (a full disk, a read-only file
   * system) until the returned function is called (hook: disk.json).
   */
  failDisk(errno: 'ENOSPC' | 'EROFS', dir: string): () => void;
  /** Every hook firing so far. */
  fired(): FiredHook[];
}

export interface UserSession {
  readonly client: Client;
  /** The client's transport, tapped: every request with its answer count. */
  readonly transport: TappedTransport;
  readonly dirs: UserSessionDirs;
  /** The environment the proxy was started with (on top of the SDK's default environment). */
  readonly env: Readonly<Record<string, string>>;
  /** Where socket discovery finds the daemon for this environment (not passed to anything). */
  readonly socketPath: string;
  readonly pids: SessionPids;
  readonly faults: SessionFaults;
  /** Calls a tool and resolves with its answer; rejects on a protocol-level error. */
  call(name: string, args?: Record<string, unknown>): Promise<ToolOutcome>;
  /** Sends a tool call now and settles with its answer or its protocol-level error. */
  send(name: string, args?: Record<string, unknown>): Promise<SettledCall>;
  /** Runs the shipped `runtimed` bin with the session's environment. */
  runtimed(
    args: readonly string[],
    extraEnv?: Readonly<Record<string, string>>,
  ): Promise<{ code: number; stdout: string; stderr: string }>;
  /** What the proxy (and the child under it) wrote to stderr so far. */
  stderr(): string;
  /** Closes the client, stops the proxy, the daemon and the kernels, removes the temp dirs. Idempotent. */
  stop(): Promise<void>;
}

/**
 * Starts nteract-mcp the way a user's MCP client does: the shipped proxy bin with default options,
 * through the SDK's Client and StdioClientTransport, in a fresh temp HOME (XDG dirs under it) and a
 * temp project dir as cwd. No daemon is started beforehand (the child auto-starts it) and no
 * test-only switch is set; socket discovery finds the daemon as it does for users.
 */
export async function startUserSession(options: UserSessionOptions = {}): Promise<UserSession> {
  const joined = options.joining === undefined ? undefined : environments.get(options.joining);
  if (options.joining !== undefined && joined === undefined) throw new Error('joining: not a session started here');
  const environment =
    joined ??
    createUserEnvironment(shippedBins.runtimed, {
      ...(options.faultHooks ? { hooksModule: faultHooksModule } : {}),
      ...(options.env ? { env: options.env } : {}),
    });
  const { dirs, env, socketPath, runtimed } = environment;
  const daemonPid = environment.daemonPid;
  const { transport: inner, stderr } = spawnShippedProxy(
    StdioClientTransport,
    { env, cwd: dirs.project },
    options.proxyArgs,
  );
  const transport = new TappedTransport(inner);
  const client = new Client(
    options.clientInfo ?? { name: 'claude-code', title: 'Claude Code', version: '1.0.0' },
    options.capabilities === undefined ? undefined : { capabilities: options.capabilities },
  );
  let stopped: Promise<void> | undefined;

  const childPid = (): number | undefined => {
    const proxy = inner.pid;
    if (proxy === null) return undefined;
    return childrenOf(proxy).find((info) => info.cmdline.includes('runt-mcp'))?.pid;
  };
  const kernels = (): number[] => {
    const daemon = daemonPid();
    if (daemon === undefined) return [];
    return descendantsOf(daemon)
      .filter((info) => info.cmdline.includes('ipykernel'))
      .map((info) => info.pid);
  };
  const control = (name: string, value: unknown): void => {
    writeFileSync(join(dirs.faults, `${name}.tmp`), JSON.stringify(value));
    // rename: a hook never reads a half-written control file
    renameSync(join(dirs.faults, `${name}.tmp`), join(dirs.faults, name));
  };
  const clear = (name: string): void => rmSync(join(dirs.faults, name), { force: true });
  const needHooks = (what: string): void => {
    if (!options.faultHooks) throw new Error(`${what} needs startUserSession({ faultHooks: true })`);
  };
  const stopDaemon = async (): Promise<number | undefined> => {
    const pid = daemonPid();
    const result = await runtimed(['stop']);
    if (result.code !== 0) throw new Error(`runtimed stop failed (${result.code}): ${result.stderr}`);
    if (pid !== undefined && !(await waitGone(pid, 20_000))) throw new Error(`runtimed ${pid} did not exit after stop`);
    return pid;
  };
  const startDaemon = async (version?: string): Promise<number> => {
    const result = await runtimed(['start'], version ? { RUNTIMED_REPORTED_VERSION: version } : {});
    if (result.code !== 0) throw new Error(`runtimed start failed (${result.code}): ${result.stderr}`);
    return waitFor('the started daemon', () => daemonPid());
  };
  const daemonVersion = async (): Promise<string | undefined> => {
    const result = await runtimed(['status', '--json']);
    if (result.code !== 0) return undefined;
    return (JSON.parse(result.stdout) as { version?: string }).version;
  };

  const outcomeOf = (raw: Record<string, unknown>): ToolOutcome => {
    const content = Array.isArray(raw.content) ? (raw.content as { type?: string; text?: string }[]) : [];
    const texts = content.filter((item) => item.type === 'text').map((item) => String(item.text ?? ''));
    let json: Record<string, unknown> | undefined;
    for (const text of texts) {
      if (!text.trimStart().startsWith('{')) continue;
      try {
        json = JSON.parse(text) as Record<string, unknown>;
        break;
      } catch {
        // not JSON; try the next item
      }
    }
    return {
      raw,
      texts,
      text: texts.join('\n'),
      structured: raw.structuredContent,
      json,
      isError: raw.isError === true,
      session: readSessionReport(raw),
    };
  };
  const call = async (name: string, args: Record<string, unknown> = {}): Promise<ToolOutcome> => {
    const timeout = options.requestTimeoutMs ?? 180_000;
    const raw = await client.callTool({ name, arguments: args }, CallToolResultSchema, { timeout });
    return outcomeOf(raw as Record<string, unknown>);
  };
  const send = (name: string, args: Record<string, unknown> = {}): Promise<SettledCall> =>
    call(name, args).then(
      (outcome) => ({ ok: true as const, outcome }),
      (error: unknown) => ({ ok: false as const, error: error instanceof Error ? error : new Error(String(error)) }),
    );

  const pids: SessionPids = {
    get proxy() {
      return inner.pid ?? -1;
    },
    child: childPid,
    waitForChild: (previous) =>
      waitFor('a running child', () => {
        const pid = childPid();
        return pid !== undefined && pid !== previous ? pid : undefined;
      }),
    childFromStatus: async () => {
      const status = await call('session_status');
      const pid = (status.json?.proxy as { child_pid?: unknown } | undefined)?.child_pid;
      return typeof pid === 'number' ? pid : undefined;
    },
    daemon: daemonPid,
    waitForDaemon: (previous) =>
      waitFor('a running daemon', () => {
        const pid = daemonPid();
        return pid !== undefined && pid !== previous ? pid : undefined;
      }),
    kernels,
  };

  /** How to end each daemon stall still on (see `faults.stallDaemon`). */
  const stalls = new Set<() => void>();
  const faults: SessionFaults = {
    killChild: async () => {
      const pid = await pids.waitForChild();
      process.kill(pid, 'SIGKILL');
      return pid;
    },
    killChildOnRequest: (tool, match) => {
      needHooks('killChildOnRequest');
      control('child-kill.json', { point: 'on-request', tool, ...(match ? { match } : {}) });
    },
    killChildBeforeReply: (tool, match) => {
      needHooks('killChildBeforeReply');
      control('child-kill.json', { point: 'before-reply', tool, ...(match ? { match } : {}) });
    },
    childExit75: async () => {
      needHooks('childExit75');
      const pid = await pids.waitForChild();
      process.kill(pid, 'SIGUSR2');
      return pid;
    },
    killDaemon: async () => {
      const pid = await pids.waitForDaemon();
      process.kill(pid, 'SIGKILL');
      await waitGone(pid, 10_000);
      return pid;
    },
    stallDaemon: async (ms) => {
      const pid = await pids.waitForDaemon();
      process.kill(pid, 'SIGSTOP');
      let stalled = true;
      const resume = (): void => {
        if (!stalled) return;
        stalled = false;
        clearTimeout(timer);
        killQuietly(pid, 'SIGCONT');
      };
      const timer = setTimeout(resume, ms);
      stalls.add(resume);
      return { pid, resume };
    },
    stopDaemon,
    startDaemon,
    upgradeDaemon: async (version) => {
      for (let attempt = 0; attempt < 5; attempt++) {
        await stopDaemon();
        const result = await runtimed(['start'], { RUNTIMED_REPORTED_VERSION: version });
        if (result.code === 0 && (await daemonVersion()) === version) return waitFor('the upgraded daemon', daemonPid);
      }
      throw new Error(`could not start a daemon reporting version ${version}`);
    },
    dropDaemonEvents: (frames = ['event', 'broadcast']) => {
      needHooks('dropDaemonEvents');
      control('daemon-events.json', { mode: 'drop', frames });
      return () => clear('daemon-events.json');
    },
    delayDaemonEvents: (ms, frames = ['event', 'broadcast']) => {
      needHooks('delayDaemonEvents');
      control('daemon-events.json', { mode: 'delay', ms, frames });
      return () => clear('daemon-events.json');
    },
    failDaemonInfo: (count = 1) => {
      needHooks('failDaemonInfo');
      control('daemon-info.json', { count });
    },
    failDisk: (errno, dir) => {
      needHooks('failDisk');
      control('disk.json', { errno, under: dir });
      return () => clear('disk.json');
    },
    killKernel: async () => {
      const found = await waitFor('a running kernel', () => {
        const list = kernels();
        return list.length > 0 ? list : undefined;
      });
      for (const pid of found) process.kill(pid, 'SIGKILL');
      return found;
    },
    fired: () => {
      const path = join(dirs.faults, 'fired.log');
      if (!existsSync(path)) return [];
      return readFileSync(path, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as FiredHook);
    },
  };

  const stop = (): Promise<void> => {
    stopped ??= (async () => {
      // A stalled daemon stops only once it runs again.
      for (const resume of stalls) resume();
      const proxy = inner.pid;
      const child = childPid();
      daemonPid();
      await client.close().catch(() => undefined);
      for (const pid of [proxy, child]) {
        if (pid === null || pid === undefined) continue;
        if (!(await waitGone(pid, 10_000))) killQuietly(pid);
      }
      if (joined === undefined) await environment.cleanup();
    })();
    return stopped;
  };

  try {
    await client.connect(transport);
  } catch (error) {
    await stop();
    throw new Error(`the proxy did not complete initialize: ${(error as Error).message}\n${stderr()}`);
  }

  const session: UserSession = {
    client,
    transport,
    dirs,
    env,
    socketPath,
    pids,
    faults,
    call,
    send,
    runtimed,
    stderr,
    stop,
  };
  environments.set(session, environment);
  return session;
}
