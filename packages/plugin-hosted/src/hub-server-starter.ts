import { type Clock, CoreError, type Logger, type SecretToken } from '@nteract-mcp/core';
import { type HubFetch, type HubUserServer, hubServerLabel, JupyterHubApi } from './jupyterhub-api.js';

/** How long a Hub user server may take to start before the attempt gives up (the rejoin retry may try again). */
export const defaultHubStartTimeoutMs = 120_000;

/** How often the Hub is asked whether a starting server is ready. */
const hubPollMs = 500;

/** A start this process is waiting for, as `session_status` shows it. */
export interface HubServerStartWait {
  readonly user: string;
  /** The named server's name; `''` for the user's default server. */
  readonly serverName: string;
  readonly hub: string;
  readonly since: number;
}

/**
 * Brings a JupyterHub user's server (its default one, or a named one) up when it is stopped: asks
 * the Hub to start it (`POST /hub/api/users/<name>/server`, or `…/servers/<server>` for a named
 * server, when the token's scopes allow) and waits, bounded ({@link defaultHubStartTimeoutMs}
 * unless configured), polling `GET /hub/api/users/<name>` until the Hub says that server is ready.
 * While it waits, {@link HubServerStarter.waits} says so (for `session_status`). One start per
 * server at a time: a second caller waits for the first. A start the Hub refuses with 400 (e.g. the
 * user has as many named servers as it allows) is an error with the Hub's words, at once.
 */
export class HubServerStarter {
  readonly #waits = new Map<string, { readonly wait: HubServerStartWait; readonly done: Promise<boolean> }>();

  public constructor(
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly timeoutMs: number = defaultHubStartTimeoutMs,
    private readonly fetch?: HubFetch,
    /** The spawner's user options sent with each start (e.g. `{ "profile": "gpu" }`); none when `undefined`. */
    private readonly serverOptions?: Readonly<Record<string, unknown>>,
  ) {}

  /** The starts being waited for now. */
  public waits(): readonly HubServerStartWait[] {
    return [...this.#waits.values()].map((entry) => entry.wait);
  }

  /**
   * Resolves `true` once the user's server is ready after this call started it (or waited for a
   * start in progress), `false` when it was running already. Rejects with the Hub's refusal (a
   * token that may not start it), or `daemonUnavailable` when it is not ready in time.
   */
  public ensureRunning(server: HubUserServer, token: SecretToken | undefined, signal: AbortSignal): Promise<boolean> {
    const key = `${server.hubApiUrl} ${server.user} ${server.serverName}`;
    const running = this.#waits.get(key);
    if (running) return running.done;
    const wait: HubServerStartWait = {
      user: server.user,
      serverName: server.serverName,
      hub: server.hubApiUrl,
      since: this.clock.now(),
    };
    const done = this.start(server, token, signal);
    this.#waits.set(key, { wait, done });
    const forget = () => this.#waits.delete(key);
    done.then(forget, forget);
    return done;
  }

  private async start(server: HubUserServer, token: SecretToken | undefined, signal: AbortSignal): Promise<boolean> {
    const api = new JupyterHubApi(server.hubApiUrl, token, this.fetch);
    const { user, serverName } = server;
    const where = { hub: server.hubApiUrl, user, ...(serverName === '' ? {} : { server: serverName }) };
    let state = await api.serverState(user, serverName);
    if (state.ready) return false;
    const deadline = this.clock.now() + this.timeoutMs;
    // A stop in progress ends first; then the start is asked for.
    while (state.pending === 'stop' && this.clock.now() < deadline) {
      await this.sleep(signal);
      state = await api.serverState(user, serverName);
    }
    if (state.pending !== 'spawn' && !state.ready) {
      this.logger.info('asking the JupyterHub to start the user server', where);
      const asked = await api.startServer(user, serverName, this.serverOptions);
      if (!asked.accepted) {
        // 400: already running or starting (read below), or refused for the reason the Hub gives.
        state = await api.serverState(user, serverName);
        if (!state.ready && state.pending === null) {
          throw new CoreError(
            'invalidRequest',
            `The JupyterHub at ${server.hubApiUrl} did not start ${hubServerLabel(server)}${asked.message === undefined ? '' : `: ${asked.message}`} (see ${server.hubHomeUrl}).`,
            { code: 'hub_start_refused' },
          );
        }
      }
    }
    while (!state.ready) {
      if (this.clock.now() >= deadline) {
        throw new CoreError(
          'daemonUnavailable',
          `The JupyterHub at ${server.hubApiUrl} did not have ${hubServerLabel(server)} ready within ${Math.round(this.timeoutMs / 1000)} s (see ${server.hubHomeUrl}).`,
          { code: 'hub_start_timeout' },
        );
      }
      await this.sleep(signal);
      state = await api.serverState(user, serverName);
    }
    this.logger.info('the JupyterHub user server is ready', where);
    return true;
  }

  private sleep(signal: AbortSignal): Promise<void> {
    signal.throwIfAborted();
    return new Promise<void>((resolve, reject) => {
      const onAbort = () => {
        timer.cancel();
        reject(signal.reason);
      };
      const timer = this.clock.setTimer(hubPollMs, () => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      });
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }
}
