import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { devNull } from 'node:os';
import {
  Clock,
  CoreError,
  type CreateNotebookOptions,
  type DaemonEvent,
  type DaemonObservation,
  type DaemonPort,
  type KernelInfo,
  type ListedNotebook,
  type LivePage,
  Logger,
  type NotebookHandle,
  type PeerOptions,
  type Subscription,
} from '@nteract-mcp/core';
import {
  RuntimedConnection,
  type RuntimedFrame,
  type RuntimedHandshake,
  type WireClientContext,
} from '@nteract-mcp/runtimed-protocol';
import { inject, injectable } from 'inversify';
import { clientContextOf } from './client-context-of.js';
import type { DaemonStarter } from './daemon-starter.js';
import { LocalDaemonOptions } from './local-daemon-options.js';
import { requestWithin } from './request-within.js';
import { RuntimedEventPump } from './runtimed-event-pump.js';
import { RuntimedNotebookHandle } from './runtimed-notebook-handle.js';
import { RuntimedSocketLocator } from './runtimed-socket-locator.js';
import { toDaemonInfo, toKernelInfo, toRoomInfo } from './runtimed-wire-readers.js';
import { rethrowAsCoreError } from './to-core-error.js';

const defaultHeartbeatMs = 10_000;
const defaultConnectTimeoutMs = 5_000;
/**
 * How long the daemon has to answer the opening of a notebook: it reads the file first (a notebook
 * with large outputs takes seconds, more on a loaded machine; 5 s failed such opens that would
 * have worked). Control requests and the heartbeat keep the shorter bound, which is what finds a
 * hung daemon.
 */
const notebookOpenTimeoutMs = 60_000;
/** How long `list_kernels` may take (the daemon runs each Python kernel's interpreter once). */
const listKernelsTimeoutMs = 60_000;
/** How long an auto-started daemon has to answer. */
const autoStartTimeoutMs = 15_000;
const autoStartPollMs = 100;

/** Socket errors that prove no daemon is listening (as opposed to one that answers badly or slowly). */
const absenceCodes: ReadonlySet<string> = new Set(['ENOENT', 'ECONNREFUSED', 'ENOTDIR']);

/** The reason, when `error` proves that no daemon runs at the socket; else `undefined`. */
function absenceReason(error: unknown): string | undefined {
  return CoreError.is(error, 'daemonUnavailable') && error.code !== undefined && absenceCodes.has(error.code)
    ? error.message
    : undefined;
}

function asCoreError(error: unknown, what: string): CoreError {
  if (CoreError.is(error)) return error;
  return new CoreError('daemonUnavailable', `${what}: ${(error as Error)?.message ?? String(error)}`, { cause: error });
}

/** A command line for messages, with arguments that need it quoted. */
function formatCommand(command: string, args: readonly string[]): string {
  return [command, ...args].map((part) => (/^[\w@%+=:,./-]+$/.test(part) ? part : JSON.stringify(part))).join(' ');
}

/**
 * The local daemon `runtimed` behind core's {@link DaemonPort}, over its Unix socket.
 *
 * Guarantees:
 * - `queryInfo` opens a fresh control connection and asks the daemon itself (`get_daemon_info`),
 *   never a cached heartbeat. No socket, a refused connection or a non-directory in the path
 *   answer `absent`; any other failure (timeout, protocol error, garbage) rejects with
 *   `daemonQueryFailed`, which is not proof of loss.
 * - `subscribe`: the first subscriber starts one event connection, the last `dispose()` stops it
 *   (see {@link RuntimedEventPump}). A subscriber that joins while connected also gets a
 *   `connected` event with the current identity. Listener exceptions are logged, not propagated.
 * - `attachNotebook` is attach-only: the daemon refuses an unknown id with `notebookUnavailable`
 *   (definitive) and creates nothing. Other refusals (`load_failed`, `bad_request`, …) reject
 *   `invalidRequest` with the daemon's `code`; an unreachable daemon rejects `daemonUnavailable`.
 * - With `autoStart` configured, open/attach/create that find no daemon start it once
 *   (concurrent callers share the attempt), wait up to 15 s for it to answer and go on; otherwise
 *   they reject `daemonUnavailable` saying the command could not start it.
 * - Every open, attach, create and list_kernels carries this client's context (`cwd`, and the
 *   environment its kernels get; see {@link clientContextOf}), which older daemons ignore.
 * - As a {@link DaemonStarter}, `start` runs the same auto-start (shared with the calls above)
 *   and rejects `daemonUnavailable` without `autoStart`. `listRooms` starts nothing: no daemon, no rooms.
 * - Only {@link CoreError}s are thrown.
 *
 * Does not guarantee: event delivery (events are hints; query after each), that a notebook stays
 * available after a successful attach, or that a daemon it started is stopped again (it outlives us).
 */
@injectable()
export class RuntimedDaemonPort implements DaemonPort, DaemonStarter {
  readonly #options: LocalDaemonOptions;
  readonly #locator: RuntimedSocketLocator;
  readonly #clock: Clock;
  readonly #logger: Logger;
  readonly #handleLogger: Logger;
  readonly #subscribers = new Set<{ readonly listener: (event: DaemonEvent) => void }>();
  #pump: RuntimedEventPump | undefined;
  #starting: Promise<void> | undefined;
  #client: WireClientContext | undefined;

  public constructor(
    @inject(LocalDaemonOptions) options: LocalDaemonOptions,
    @inject(RuntimedSocketLocator) locator: RuntimedSocketLocator,
    @inject(Clock) clock: Clock,
    @inject(Logger) logger: Logger,
  ) {
    this.#options = options;
    this.#locator = locator;
    this.#clock = clock;
    this.#logger = logger.child('plugin-local-daemon:RuntimedDaemonPort');
    this.#handleLogger = logger;
  }

  public async queryInfo(): Promise<DaemonObservation> {
    const socketPath = this.#locator.socketPath();
    let connection: RuntimedConnection;
    try {
      ({ connection } = await this.openControl(socketPath));
    } catch (error) {
      const absent = absenceReason(error);
      if (absent !== undefined) return { kind: 'absent', reason: absent };
      throw this.queryFailed(socketPath, error);
    }
    try {
      const answer = await requestWithin(connection, { type: 'get_daemon_info' }, this.#clock, this.connectTimeoutMs);
      return { kind: 'live', info: toDaemonInfo(answer) };
    } catch (error) {
      throw this.queryFailed(socketPath, error);
    } finally {
      connection.close();
    }
  }

  public subscribe(listener: (event: DaemonEvent) => void): Subscription {
    const entry = { listener };
    this.#subscribers.add(entry);
    if (!this.#pump) {
      this.#pump = new RuntimedEventPump({
        socketPath: this.#locator.socketPath(),
        heartbeatMs: this.#options.heartbeatMs ?? defaultHeartbeatMs,
        connectTimeoutMs: this.connectTimeoutMs,
        clock: this.#clock,
        logger: this.#logger,
        emit: (event) => {
          for (const subscriber of [...this.#subscribers]) this.deliver(subscriber.listener, event);
        },
      });
      this.#pump.start();
    } else {
      const info = this.#pump.connectedInfo;
      if (info) {
        queueMicrotask(() => {
          if (this.#subscribers.has(entry)) this.deliver(listener, { kind: 'connected', info });
        });
      }
    }
    return {
      dispose: () => {
        if (!this.#subscribers.delete(entry) || this.#subscribers.size > 0) return;
        this.#pump?.stop();
        this.#pump = undefined;
      },
    };
  }

  public get enabled(): boolean {
    return Boolean(this.#options.autoStart);
  }

  public async start(): Promise<void> {
    const autoStart = this.#options.autoStart;
    if (!autoStart) {
      throw new CoreError('daemonUnavailable', 'Starting the daemon is not configured (autoStart is off).');
    }
    await this.startDaemon(autoStart);
  }

  /**
   * The daemon's open rooms; none when no daemon runs (it is not started for this: an agent that
   * only works on hosted notebooks lists them without a local daemon coming up).
   */
  public async listRooms(): Promise<readonly ListedNotebook[]> {
    let opened: { connection: RuntimedConnection; greeting: RuntimedFrame };
    try {
      opened = await this.openControl(this.#locator.socketPath());
    } catch (error) {
      if (absenceReason(error) !== undefined) return [];
      throw asCoreError(error, 'The daemon request failed');
    }
    try {
      const answer = await requestWithin(opened.connection, { type: 'list_rooms' }, this.#clock, this.connectTimeoutMs);
      return answer.rooms.map(toRoomInfo);
    } catch (error) {
      throw asCoreError(error, 'The daemon request failed');
    } finally {
      opened.connection.close();
    }
  }

  /**
   * The daemon's web page (`get_page`, for `notebookId` when given): its base address and a new
   * launch address that opens the page once, within an hour, or `undefined` when the daemon serves
   * none (started with `--no-page`, or older than the page). A daemon older than launch addresses
   * answers a token instead, which is never read: its `launchUrl` is `undefined`. Starts no daemon.
   */
  public async page(notebookId?: string): Promise<LivePage | undefined> {
    const { connection } = await this.openControl(this.#locator.socketPath());
    try {
      const answer = await requestWithin(
        connection,
        { type: 'get_page', ...(notebookId === undefined ? {} : { notebook_id: notebookId }) },
        this.#clock,
        this.connectTimeoutMs,
      ).catch(() => undefined);
      return answer?.url ? { url: answer.url, launchUrl: answer.launch_url ?? undefined } : undefined;
    } finally {
      connection.close();
    }
  }

  public listKernels(): Promise<readonly KernelInfo[]> {
    return this.withAutoStart(async () => {
      const { connection } = await this.openControl(this.#locator.socketPath());
      try {
        // The daemon probes each Python kernel's interpreter: allow it more than a connect.
        const answer = await requestWithin(
          connection,
          { type: 'list_kernels', client: this.client },
          this.#clock,
          listKernelsTimeoutMs,
        );
        return answer.kernels.map(toKernelInfo);
      } finally {
        connection.close();
      }
    });
  }

  public openNotebook(path: string, options: PeerOptions): Promise<NotebookHandle> {
    return this.connectNotebook({
      channel: 'notebook',
      mode: 'open',
      blob_references: true,
      source_edits: true,
      comments: true,
      path,
      peer_label: options.peerLabel,
      client: this.client,
    });
  }

  public attachNotebook(notebookId: string, options: PeerOptions): Promise<NotebookHandle> {
    return this.connectNotebook({
      channel: 'notebook',
      mode: 'attach',
      blob_references: true,
      source_edits: true,
      comments: true,
      notebook_id: notebookId,
      peer_label: options.peerLabel,
      client: this.client,
    });
  }

  public createNotebook(options: CreateNotebookOptions): Promise<NotebookHandle> {
    return this.connectNotebook({
      channel: 'notebook',
      mode: 'create',
      blob_references: true,
      source_edits: true,
      comments: true,
      ...(options.runtime === undefined ? {} : { runtime: options.runtime }),
      ...(options.kernel === undefined ? {} : { kernel: options.kernel }),
      working_dir: options.workingDir,
      ephemeral: options.ephemeral,
      peer_label: options.peerLabel,
      client: this.client,
    });
  }

  /** This client's context, worked out once (the environment of a process does not change under it). */
  private get client(): WireClientContext {
    this.#client ??= clientContextOf(
      this.#options.kernelEnv ?? process.env,
      this.#options.cwd ?? process.cwd(),
      this.#logger,
    );
    return this.#client;
  }

  private get connectTimeoutMs(): number {
    return this.#options.connectTimeoutMs ?? defaultConnectTimeoutMs;
  }

  private openControl(socketPath: string): Promise<{ connection: RuntimedConnection; greeting: RuntimedFrame }> {
    return RuntimedConnection.open({
      socketPath,
      handshake: { channel: 'control' },
      timeoutMs: this.connectTimeoutMs,
    }).catch(rethrowAsCoreError);
  }

  private connectNotebook(handshake: RuntimedHandshake): Promise<NotebookHandle> {
    return this.withAutoStart(async () => {
      const { connection, greeting } = await RuntimedConnection.open({
        socketPath: this.#locator.socketPath(),
        handshake,
        timeoutMs: Math.max(this.connectTimeoutMs, notebookOpenTimeoutMs),
      }).catch(rethrowAsCoreError);
      try {
        return new RuntimedNotebookHandle(connection, greeting, { clock: this.#clock, logger: this.#handleLogger });
      } catch (error) {
        connection.close();
        throw error;
      }
    });
  }

  private deliver(listener: (event: DaemonEvent) => void, event: DaemonEvent): void {
    try {
      listener(event);
    } catch (error) {
      this.#logger.error('a daemon event listener threw', { event: event.kind, error });
    }
  }

  private queryFailed(socketPath: string, error: unknown): CoreError {
    const message = (error as Error)?.message ?? String(error);
    return new CoreError('daemonQueryFailed', `Could not ask the daemon at ${socketPath} who it is: ${message}`, {
      cause: error,
      ...(CoreError.is(error) && error.code !== undefined ? { code: error.code } : {}),
    });
  }

  /** Runs `operation`; when it finds no daemon and auto-start is configured, starts one and runs it again. */
  private async withAutoStart<T>(operation: () => Promise<T>): Promise<T> {
    try {
      return await operation();
    } catch (error) {
      const autoStart = this.#options.autoStart;
      if (!autoStart || absenceReason(error) === undefined) throw asCoreError(error, 'The daemon request failed');
      await this.startDaemon(autoStart);
    }
    try {
      return await operation();
    } catch (error) {
      throw asCoreError(error, 'The daemon request failed');
    }
  }

  /** One start attempt at a time; concurrent callers share it. */
  private startDaemon(autoStart: { readonly command: string; readonly args: readonly string[] }): Promise<void> {
    this.#starting ??= this.spawnAndWait(autoStart).finally(() => {
      this.#starting = undefined;
    });
    return this.#starting;
  }

  private async spawnAndWait(autoStart: { readonly command: string; readonly args: readonly string[] }): Promise<void> {
    const socketPath = this.#locator.socketPath();
    const commandLine = formatCommand(autoStart.command, autoStart.args);
    const failure = (why: string, cause?: unknown): CoreError =>
      new CoreError('daemonUnavailable', `Could not start the daemon with \`${commandLine}\`: ${why}`, {
        ...(cause === undefined ? {} : { cause }),
      });
    // Someone else may have started it while we were finding out it was not there.
    if ((await this.queryInfo().catch(() => undefined))?.kind === 'live') {
      this.#pump?.reconnectNow();
      return;
    }

    this.#logger.info('starting the daemon', { command: commandLine, socket: socketPath });
    let child: ChildProcess;
    // fd 3 of a child under the proxy is its credential channel, inherited by whatever it starts
    // (it is not close-on-exec there): the daemon, and its kernels, get /dev/null in its place.
    let nullFd: number | undefined;
    try {
      nullFd = openSync(devNull, 'r+');
      child = spawn(autoStart.command, [...autoStart.args], {
        detached: true,
        stdio: ['ignore', 'ignore', 'ignore', nullFd],
        env: { ...process.env, RUNTIMED_SOCKET_PATH: socketPath },
      });
    } catch (error) {
      throw failure((error as Error).message, error);
    } finally {
      if (nullFd !== undefined) closeSync(nullFd);
    }
    let spawnError: Error | undefined;
    let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
    child.once('error', (error) => {
      spawnError = error;
    });
    child.once('exit', (code, signal) => {
      exit = { code, signal };
    });
    child.unref();

    const deadline = this.#clock.now() + autoStartTimeoutMs;
    let lastAnswer = 'no answer yet';
    for (;;) {
      if (spawnError) throw failure(spawnError.message, spawnError);
      try {
        const observation = await this.queryInfo();
        if (observation.kind === 'live') {
          this.#logger.info('the daemon started', {
            pid: observation.info.incarnation.pid,
            version: observation.info.version,
          });
          // The event stream may be deep in its reconnect back-off: watch the new daemon now.
          this.#pump?.reconnectNow();
          return;
        }
        lastAnswer = observation.reason;
      } catch (error) {
        lastAnswer = (error as Error).message;
      }
      if (exit && exit.code !== 0) {
        const how = exit.code === null ? `signal ${exit.signal ?? 'unknown'}` : `code ${exit.code}`;
        throw failure(`the command exited with ${how} before the daemon answered on ${socketPath}.`);
      }
      if (this.#clock.now() >= deadline) {
        throw failure(
          `no daemon answered on ${socketPath} within ${autoStartTimeoutMs / 1000} s (last: ${lastAnswer}).`,
        );
      }
      await this.#clock.sleep(autoStartPollMs);
    }
  }
}
