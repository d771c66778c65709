import { type FSWatcher, watch } from 'node:fs';
import { basename, dirname } from 'node:path';
import type { Clock, DaemonEvent, DaemonInfo, Logger, Timer } from '@nteract-mcp/core';
import { RuntimedConnection, wireControlHelloSchema } from '@nteract-mcp/runtimed-protocol';
import { requestWithin } from './request-within.js';
import { readFromDaemon, toDaemonInfo } from './runtimed-wire-readers.js';
import { rethrowAsCoreError } from './to-core-error.js';

/** First delay before reconnecting after a loss or a failed attempt; doubles up to {@link maxBackoffMs}. */
export const initialBackoffMs = 100;
/**
 * The longest wait between attempts. The socket is local: a failed attempt is one refused
 * `connect`, so trying twice a second costs nothing and a daemon that comes back (restarted by
 * hand, by a service manager, or upgraded) is seen within half a second of answering.
 */
export const maxBackoffMs = 500;

export interface RuntimedEventPumpOptions {
  readonly socketPath: string;
  readonly heartbeatMs: number;
  readonly connectTimeoutMs: number;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Receives every event; must not throw. */
  readonly emit: (event: DaemonEvent) => void;
}

/** One control connection of the pump, from open to loss. */
interface Link {
  readonly connection: RuntimedConnection;
  /** Set once `connected` was emitted for this link. */
  info: DaemonInfo | undefined;
  lost: boolean;
  heartbeat: Timer | undefined;
}

/**
 * The daemon event source behind `RuntimedDaemonPort.subscribe`: one control connection with a
 * `subscribe` request. Emits `connected` when a connection is up (identity from the `hello`
 * greeting), `heartbeat` every `heartbeatMs` (a `get_daemon_info` on that connection), and one
 * `disconnected` when it goes (closed, failed heartbeat, or the daemon announcing its shutdown,
 * which sets `announced`);
 * then reconnects with a backoff of 100 ms doubling to {@link maxBackoffMs}, reset by a successful
 * connection. While it is not connected it also watches the socket's directory: a socket created
 * there (a daemon that starts listening) is tried at once, so a daemon that comes back is seen as
 * soon as it answers, not at the next back-off step. Failed attempts emit nothing. All timing goes
 * through the injected clock.
 *
 * Does not guarantee that every daemon life is seen (a restart between two attempts shows as
 * `disconnected` then `connected` with another incarnation), nor delivery of the daemon's room
 * events (they are not forwarded).
 */
export class RuntimedEventPump {
  readonly #options: RuntimedEventPumpOptions;
  #stopped = false;
  #started = false;
  #link: Link | undefined;
  #retry: Timer | undefined;
  #backoffMs = initialBackoffMs;
  #connecting = false;
  /** Watches the socket's directory while not connected; `undefined` while connected or when it cannot be watched. */
  #socketWatch: FSWatcher | undefined;

  public constructor(options: RuntimedEventPumpOptions) {
    this.#options = options;
  }

  /** The identity of the daemon while connected, else `undefined`. */
  public get connectedInfo(): DaemonInfo | undefined {
    return this.#link?.lost === false ? this.#link.info : undefined;
  }

  /** Starts connecting. Once only; a stopped pump stays stopped. */
  public start(): void {
    if (this.#started || this.#stopped) return;
    this.#started = true;
    void this.connect();
  }

  /**
   * Connects now instead of at the end of the current back-off (and resets it), e.g. because a
   * daemon was just started. Does nothing while connected or connecting, or once stopped.
   */
  public reconnectNow(): void {
    if (!this.#started || this.#stopped || this.#connecting || this.#link?.lost === false) return;
    this.#retry?.cancel();
    this.#retry = undefined;
    this.#backoffMs = initialBackoffMs;
    void this.connect();
  }

  /** Closes the connection and cancels every timer; emits nothing more. Idempotent. */
  public stop(): void {
    if (this.#stopped) return;
    this.#stopped = true;
    this.#retry?.cancel();
    this.#retry = undefined;
    this.unwatchSocket();
    const link = this.#link;
    this.#link = undefined;
    if (link) this.drop(link);
  }

  private async connect(): Promise<void> {
    this.#retry = undefined;
    if (this.#stopped) return;
    this.#connecting = true;
    try {
      await this.connectOnce();
    } finally {
      this.#connecting = false;
    }
  }

  private async connectOnce(): Promise<void> {
    const { socketPath, connectTimeoutMs, clock, logger } = this.#options;
    let link: Link | undefined;
    try {
      const { connection, greeting } = await RuntimedConnection.open({
        socketPath,
        handshake: { channel: 'control' },
        timeoutMs: connectTimeoutMs,
      }).catch(rethrowAsCoreError);
      const current: Link = { connection, info: undefined, lost: false, heartbeat: undefined };
      link = current;
      if (this.#stopped) {
        this.drop(current);
        return;
      }
      this.#link = current;
      connection.onFrame((frame) => {
        if (frame.type === 'event' && frame.event === 'daemon_shutting_down') {
          this.lose(current, 'the daemon is shutting down', true);
        }
      });
      connection.onClose((reason) => this.lose(current, reason));
      const info = toDaemonInfo(readFromDaemon(wireControlHelloSchema, greeting, 'control greeting'));
      await requestWithin(connection, { type: 'subscribe' }, clock, connectTimeoutMs);
      if (this.#stopped) return;
      if (current.lost) {
        // Lost between the answer and here (e.g. a shutdown notice in the same read).
        this.scheduleRetry();
        return;
      }
      current.info = info;
      this.#backoffMs = initialBackoffMs;
      this.unwatchSocket();
      logger.debug('daemon event stream connected', { pid: info.incarnation.pid, version: info.version });
      this.#options.emit({ kind: 'connected', info });
      this.scheduleHeartbeat(current);
    } catch (error) {
      if (link) {
        this.drop(link);
        if (this.#link === link) this.#link = undefined;
      }
      if (this.#stopped) return;
      logger.debug('daemon event stream could not connect; retrying', {
        socket: socketPath,
        retryInMs: this.#backoffMs,
        error,
      });
      this.scheduleRetry();
    }
  }

  private scheduleHeartbeat(link: Link): void {
    link.heartbeat = this.#options.clock.setTimer(this.#options.heartbeatMs, () => void this.beat(link));
  }

  private async beat(link: Link): Promise<void> {
    link.heartbeat = undefined;
    if (link.lost || this.#stopped) return;
    const { clock, connectTimeoutMs } = this.#options;
    try {
      const info = toDaemonInfo(
        await requestWithin(link.connection, { type: 'get_daemon_info' }, clock, connectTimeoutMs),
      );
      if (link.lost || this.#stopped) return;
      link.info = info;
      this.#options.emit({ kind: 'heartbeat', info });
      this.scheduleHeartbeat(link);
    } catch (error) {
      this.lose(link, `heartbeat failed: ${(error as Error).message}`);
    }
  }

  /** The link is gone: one `disconnected` if it had emitted `connected`, then a reconnect. */
  private lose(link: Link, reason: string, announced = false): void {
    if (link.lost) return;
    this.drop(link);
    if (this.#link === link) this.#link = undefined;
    if (this.#stopped || link.info === undefined) return; // a link lost while connecting: `connect` retries
    this.#options.logger.info('daemon event stream disconnected', { reason });
    this.#options.emit(announced ? { kind: 'disconnected', reason, announced } : { kind: 'disconnected', reason });
    this.scheduleRetry();
  }

  private drop(link: Link): void {
    link.lost = true;
    link.heartbeat?.cancel();
    link.heartbeat = undefined;
    link.connection.close();
  }

  private scheduleRetry(): void {
    if (this.#stopped || this.#retry) return;
    this.watchSocket();
    const delay = this.#backoffMs;
    this.#backoffMs = Math.min(this.#backoffMs * 2, maxBackoffMs);
    this.#retry = this.#options.clock.setTimer(delay, () => void this.connect());
  }

  /**
   * Tries at once when the socket file appears or changes (inotify and the like: no polling).
   * Without a watchable directory (it does not exist yet, or the platform cannot) the back-off
   * alone finds the daemon.
   */
  private watchSocket(): void {
    if (this.#socketWatch || this.#stopped) return;
    const { socketPath } = this.#options;
    const name = basename(socketPath);
    try {
      const watcher = watch(dirname(socketPath), { persistent: false }, (_event, file) => {
        if (file === null || String(file) === name) this.reconnectNow();
      });
      watcher.on('error', () => {
        watcher.close();
        if (this.#socketWatch === watcher) this.#socketWatch = undefined;
      });
      this.#socketWatch = watcher;
    } catch {
      this.#socketWatch = undefined;
    }
  }

  private unwatchSocket(): void {
    this.#socketWatch?.close();
    this.#socketWatch = undefined;
  }
}
