import {
  type BackendConnectContext,
  Clock,
  CoreError,
  type CreatedNotebook,
  type CreateNotebookRequest,
  firstPartyIdentities,
  type HostedUrlTarget,
  type ListedNotebook,
  Logger,
  type NotebookBackend,
  type NotebookHandle,
  type NotebookTarget,
  type SecretToken,
  SessionCredentials,
} from '@nteract-mcp/core';
import { inject, injectable } from 'inversify';
import { HostedIdempotencyLedger } from './hosted-idempotency-ledger.js';
import { HostedNotebookHandle } from './hosted-notebook-handle.js';
import { HostedOptions } from './hosted-options.js';
import { HostedTokenPrompt } from './hosted-token-prompt.js';
import { HubServerStarter } from './hub-server-starter.js';
import {
  JupyterServerConnector,
  type JupyterServerPort,
  type NotebookJson,
  unauthorizedErrorCode,
} from './jupyter-server-port.js';
import {
  type HubUserServer,
  hubForbiddenCode,
  hubLocationOf,
  hubServerLabel,
  hubServerNotRunningCode,
  hubUserServerUrl,
  JupyterHubApi,
} from './jupyterhub-api.js';
import { type HostedCreateLocation, parseHostedCreateLocation } from './parse-hosted-create-location.js';
import { parseHostedUrlTarget } from './parse-hosted-url-target.js';

const identity = firstPartyIdentities['hosted-url'];

/**
 * Notebooks on a Jupyter Server by URL (`url`): parsed and canonicalised (the `lab/tree` route,
 * no credentials in the identity; the token from `?token=`, else the one kept in the
 * `SessionCredentials` for that server, else the plugin's default, stays in a `SecretToken`),
 * reached through the {@link JupyterServerConnector}. A token that opened a notebook is kept in
 * the `SessionCredentials`, so a restarted child (whose handoff URL has no token) finds it.
 *
 * - `connect`: loads the notebook through the contents API, finds the server-side session for
 *   its path or starts one (kernel name from the notebook's kernelspec, else `python3`), opens its
 *   kernel websocket. A rejoin therefore reattaches the same kernel, with its state, while the
 *   server keeps the session.
 * - `reopen` (rejoin): the same; when the session had to be started anew the handle carries a
 *   kernel notice (the notebook came back, the kernel state did not). So does a connect that finds
 *   another kernel than the one this process saw for the URL.
 * - `create`: `url` of a directory (a new untitled notebook there) or of a `.ipynb` path that does
 *   not exist yet.
 * - `list`: the hosted notebooks this process has open, by URL identity.
 * - A `connect` or `create` the server refuses for its token (or the lack of one) is tried once
 *   more with a token the person gives, when the call's client can send them to a page
 *   ({@link HostedTokenPrompt}); otherwise the refusal says how to give one.
 * A notebook the server does not have is `notebookUnavailable` (a rejoin gives up); a server
 * that does not answer is `daemonUnavailable` (a rejoin retries).
 */
@injectable()
export class HostedUrlNotebookBackend implements NotebookBackend {
  public readonly id = 'hosted.url';
  public readonly specificationVersion = 'v1';
  public readonly kind = 'hosted-url';
  public readonly argument = 'url';
  readonly #open = new Set<HostedNotebookHandle>();
  /** The kernel id last seen per URL identity, to tell a kernel that changed under us. */
  readonly #kernels = new Map<string, string>();
  /** What keyed calls did, per notebook, for every handle this backend opens (one after a loss too). */
  readonly #ledger = new HostedIdempotencyLedger();
  readonly #logger: Logger;
  readonly #handleLogger: Logger;
  private readonly hubStarter: HubServerStarter;
  /** A refused (or missing) token, asked of the person on a local page when the call's client can be asked. */
  private readonly tokenPrompt: HostedTokenPrompt;

  public constructor(
    @inject(HostedOptions) private readonly options: HostedOptions,
    @inject(JupyterServerConnector) private readonly connector: JupyterServerConnector,
    @inject(Clock) private readonly clock: Clock,
    @inject(SessionCredentials) private readonly credentials: SessionCredentials,
    @inject(Logger) logger: Logger,
  ) {
    this.#logger = logger.child('plugin-hosted:HostedUrlNotebookBackend');
    this.#handleLogger = logger.child('plugin-hosted:HostedNotebookHandle');
    this.hubStarter = new HubServerStarter(
      clock,
      logger.child('plugin-hosted:HubServerStarter'),
      options.hubStartTimeoutMs,
      options.hubFetch,
      options.hubServerOptions,
    );
    this.tokenPrompt = new HostedTokenPrompt({ clock, logger: logger.child('plugin-hosted:HostedTokenPrompt') });
  }

  public recognizes(raw: string): boolean {
    return /^https?:\/\//i.test(raw.trim());
  }

  public parse(raw: string): HostedUrlTarget {
    return this.withKnownToken(parseHostedUrlTarget(raw, {}));
  }

  public describe(target: NotebookTarget): string {
    return identity.describe(target);
  }

  public connect(target: NotebookTarget, context: BackendConnectContext): Promise<NotebookHandle> {
    return this.tokenPrompt.attempt(target as HostedUrlTarget, context, (asked) => this.open(asked, context, false));
  }

  public async reopen(target: NotebookTarget, context: BackendConnectContext): Promise<NotebookHandle> {
    try {
      return await this.open(target as HostedUrlTarget, context, true);
    } catch (error) {
      // Refused credentials do not get better by waiting: the rejoin gives up, with the server's reason.
      if (CoreError.is(error) && error.code === unauthorizedErrorCode) {
        throw new CoreError('notebookUnavailable', error.message, { cause: error });
      }
      throw error;
    }
  }

  public async create(request: CreateNotebookRequest, context: BackendConnectContext): Promise<CreatedNotebook> {
    if (request.location === undefined) {
      throw new CoreError(
        'unsupportedOperation',
        'Creating a notebook on a Jupyter Server needs its url: create_notebook(url="http(s)://host[:port]/lab/tree/<directory>") or …/<new>.ipynb.',
      );
    }
    const where = this.withKnownToken(parseHostedCreateLocation(request.location, {}));
    return this.tokenPrompt.attempt(where, context, (at) => this.createAt(at, request, context));
  }

  private async createAt(
    where: HostedCreateLocation,
    request: CreateNotebookRequest,
    context: BackendConnectContext,
  ): Promise<CreatedNotebook> {
    // The kernelspec asked for, else the usual one of the language (the server's kernels are its own).
    const language = request.runtime?.trim().toLowerCase() || 'python';
    const kernelName = request.kernel ?? (language === 'python' ? 'python3' : language === 'r' ? 'ir' : language);
    const server = this.connector.open({ serverUrl: where.serverUrl, token: where.token });
    let path: string;
    try {
      if (where.notebookPath !== undefined) {
        if ((await server.lastModified(where.notebookPath)) !== undefined) {
          throw new CoreError(
            'invalidRequest',
            `${where.serverUrl}lab/tree/${encodePath(where.notebookPath)} already exists on the Jupyter Server: open it with connect_notebook(url=…), or give a new name.`,
          );
        }
        path = where.notebookPath;
      } else {
        path = await server.createUntitledNotebook(where.directory);
      }
      await server.saveNotebook(path, emptyNotebook(kernelName));
    } finally {
      server.dispose();
    }
    const target: HostedUrlTarget = Object.freeze({
      kind: 'hosted-url',
      url: `${where.serverUrl}lab/tree/${encodePath(path)}`,
      serverUrl: where.serverUrl,
      notebookPath: path,
      token: where.token,
    });
    return { handle: await this.open(target, context, false), target };
  }

  /** The hosted notebooks open in this process, by URL identity (never a credential). */
  public readonly statusSection = 'hosted';

  /** `session_status`'s `hosted` section: the JupyterHub user servers this process is waiting for. */
  public async serviceStatus(): Promise<Readonly<Record<string, unknown>>> {
    const now = this.clock.now();
    return {
      hub_server_starts: this.hubStarter.waits().map((wait) => ({
        user: wait.user,
        ...(wait.serverName === '' ? {} : { server: wait.serverName }),
        hub: wait.hub,
        waited_secs: Math.round((now - wait.since) / 1000),
        message:
          wait.serverName === ''
            ? `The server of JupyterHub user '${wait.user}' was stopped; the Hub was asked to start it and it is awaited (at most ${Math.round(this.options.hubStartTimeoutMs / 1000)} s); the notebook comes back by itself then.`
            : `The server '${wait.serverName}' of JupyterHub user '${wait.user}' was stopped; the Hub was asked to start it and it is awaited (at most ${Math.round(this.options.hubStartTimeoutMs / 1000)} s); the notebook comes back by itself then.`,
      })),
    };
  }

  public async list(): Promise<readonly ListedNotebook[]> {
    return [...this.#open].map((handle) => ({
      notebookId: handle.notebookId,
      activePeers: 1,
      hasKernel: true,
      kernelStatus: handle.readiness().runtime === 'ready' ? 'idle' : handle.readiness().runtime,
      ephemeral: false,
      notebookPath: handle.notebookPath,
    }));
  }

  /**
   * `target` on the server it names: a JupyterHub `…/hub/user-redirect/…` URL is resolved to the
   * server of the token's own user (`GET /hub/api/user`); any other target is returned as it is.
   */
  private async onHubUserServer(target: HostedUrlTarget): Promise<HostedUrlTarget> {
    const hub = hubLocationOf(target.serverUrl);
    if (hub?.kind !== 'user-redirect') return target;
    const user = await new JupyterHubApi(hub.hubApiUrl, target.token, this.options.hubFetch).whoAmI();
    const serverUrl = hubUserServerUrl(hub.prefix, user, hub.serverName);
    return Object.freeze({ ...target, serverUrl, url: `${serverUrl}lab/tree/${encodePath(target.notebookPath)}` });
  }

  /**
   * Whether the Hub says the user's server runs (`true`: a "not found" from it is the server's
   * own). `false` when it is stopped (the "not found" was the Hub's: it is started then). Rejects
   * with the refusal of a token the Hub does not let see the user's servers (a stopped server of
   * another user answers "not found" to it), and with `notFound` when the Hub does not answer
   * (whether the file exists is then not known).
   */
  private async hubServerRuns(server: HubUserServer, target: HostedUrlTarget, notFound: CoreError): Promise<boolean> {
    try {
      const state = await new JupyterHubApi(server.hubApiUrl, target.token, this.options.hubFetch).serverState(
        server.user,
        server.serverName,
      );
      return state.ready;
    } catch (error) {
      if (CoreError.is(error) && error.code === hubForbiddenCode) throw hubStartRefusal(server, target, error);
      throw notFound;
    }
  }

  /**
   * `where` with the token to use: its own (from `?token=`), else the one kept for its server (it
   * opened a notebook there before, maybe in an earlier child), else the plugin's default.
   */
  private withKnownToken<T extends { readonly serverUrl: string; readonly token: SecretToken | undefined }>(
    where: T,
  ): T {
    if (where.token) return where;
    const hub = hubLocationOf(where.serverUrl);
    const fallback = hub
      ? (this.options.hubToken ?? this.options.defaultToken)
      : (this.options.defaultToken ?? this.options.hubToken);
    // A token that opened one of a Hub user's servers is that user's (or may reach its servers): it is
    // tried for the user's other servers, named or default, before the plugin's default.
    const userScope = hub?.kind === 'user-server' ? hubUserScope(hub.server) : undefined;
    const token =
      this.credentials.find(where.serverUrl) ??
      (userScope === undefined ? undefined : this.credentials.find(userScope)) ??
      fallback;
    return token ? Object.freeze({ ...where, token }) : where;
  }

  private async open(asked: HostedUrlTarget, context: BackendConnectContext, rejoin: boolean): Promise<NotebookHandle> {
    const target = await step(context.signal, () => this.onHubUserServer(asked));
    const hub = hubLocationOf(target.serverUrl);
    const hubServer = hub?.kind === 'user-server' ? hub.server : undefined;
    const server = this.connector.open({ serverUrl: target.serverUrl, token: target.token });
    let hubStarted = false;
    try {
      const load = () => server.getNotebook(target.notebookPath);
      const file = await step(context.signal, () =>
        load().catch(async (error: unknown) => {
          if (!hubServer) throw error;
          if (CoreError.is(error) && error.code === unauthorizedErrorCode) throw hubRefusal(hubServer, target, error);
          if (CoreError.is(error, 'notebookUnavailable')) {
            // The server's own "no such file" (its root directory is there), or the Hub's answer
            // for a stopped server of a user this token may not see: the Hub says which.
            if (await rootAnswers(server)) throw error;
            if (await this.hubServerRuns(hubServer, target, error)) throw error;
          } else if (!CoreError.is(error) || (error.code !== hubServerNotRunningCode && error.code !== 'http_503')) {
            throw error;
          }
          // The user's server is stopped: the Hub starts it (when the token may), and it is waited for.
          hubStarted = await this.hubStarter
            .ensureRunning(hubServer, target.token, context.signal)
            .catch((refused: unknown) => {
              if (CoreError.is(refused) && refused.code === hubForbiddenCode)
                throw hubStartRefusal(hubServer, target, refused);
              throw refused;
            });
          return load();
        }),
      ).catch((error: unknown) => {
        if (CoreError.is(error, 'notebookUnavailable')) {
          throw new CoreError(
            'notebookUnavailable',
            `The Jupyter Server at ${target.serverUrl} has no notebook ${target.notebookPath} (${target.url}). Create it with create_notebook(url=…) or check the path.`,
            { cause: error },
          );
        }
        throw error;
      });
      const kernelName = kernelNameOf(file.content);
      const session = await step(context.signal, () => server.findOrStartSession(target.notebookPath, kernelName));
      const kernel = await server.connectKernel(session.kernelId);
      try {
        await step(context.signal, () => kernel.ready());
      } catch (error) {
        kernel.dispose();
        throw error;
      }
      const known = this.#kernels.get(target.url);
      const lost = hubStarted || (rejoin && session.started) || (known !== undefined && known !== session.kernelId);
      this.#kernels.set(target.url, session.kernelId);
      if (lost) {
        this.#logger.info('the hosted notebook came back on a new kernel', { notebook: target.url });
      }
      const handle = new HostedNotebookHandle({
        target,
        server,
        file,
        session,
        kernel,
        ...(lost
          ? {
              kernelNotice: hubStarted
                ? `The JupyterHub ${hubServerLabel(hubServer ?? { user: '', serverName: '' }).slice('the '.length)} (${target.serverUrl}) had stopped and was started again, with a new kernel for this notebook; the notebook was reloaded from the server`
                : `The Jupyter Server at ${target.serverUrl} no longer had this notebook's kernel (the server restarted, or the kernel was shut down, e.g. culled for idleness); the notebook was reloaded from the server`,
            }
          : {}),
        clock: this.clock,
        logger: this.#handleLogger,
        ledger: this.#ledger,
      });
      this.#open.add(handle);
      handle.onDidClose(() => this.#open.delete(handle));
      // A token that opened the notebook is kept for this server, for the next child too.
      if (target.token) {
        this.credentials.keep(target.serverUrl, target.token);
        if (asked.serverUrl !== target.serverUrl) this.credentials.keep(asked.serverUrl, target.token);
        // Kept for the user's other servers too, unless a token was kept for the user already.
        const userScope = hubServer ? hubUserScope(hubServer) : undefined;
        if (userScope !== undefined && this.credentials.find(userScope) === undefined) {
          this.credentials.keep(userScope, target.token);
        }
      }
      return handle;
    } catch (error) {
      disposeQuietly(server);
      throw error;
    }
  }
}

/** A Hub user server that refused the token (HTTP 401/403): which user's server, and what would be let in. */
function hubRefusal(server: HubUserServer, target: HostedUrlTarget, cause: CoreError): CoreError {
  return new CoreError(
    'daemonUnavailable',
    `The JupyterHub refused this API token for ${hubServerLabel(server)} (${target.serverUrl}): the token does not give access to that user's server. Use a token of user '${server.user}' (JUPYTERHUB_API_TOKEN, or ?token=… in the URL), or one with the scope access:servers!user=${server.user}${namedScopeHint(server, 'access:servers')}.`,
    { code: unauthorizedErrorCode, cause },
  );
}

/**
 * A Hub user server the token may not reach while it is stopped: the Hub neither shows it to the
 * token nor starts it for it. Which user's server, and what would be let in.
 */
function hubStartRefusal(server: HubUserServer, target: HostedUrlTarget, cause: CoreError): CoreError {
  return new CoreError(
    'daemonUnavailable',
    `The JupyterHub refused this API token for ${hubServerLabel(server)} (${target.serverUrl}): the Hub does not let this token use that user's server, nor start it while it is stopped. Use a token of user '${server.user}' (JUPYTERHUB_API_TOKEN, or ?token=… in the URL), or one with the scopes access:servers!user=${server.user} and servers!user=${server.user} (to start it).`,
    { code: unauthorizedErrorCode, cause },
  );
}

/** `, or access:servers!server=alice/work` for a named server (the scope of that server alone). */
function namedScopeHint(server: HubUserServer, scope: string): string {
  return server.serverName === ''
    ? ''
    : ` (or ${scope}!server=${server.user}/${server.serverName} for that server alone)`;
}

/** The scope a Hub user's token is kept under for all of its servers: the URL of its default server. */
function hubUserScope(server: HubUserServer): string {
  return hubUserServerUrl(server.hubApiUrl.slice(0, -'hub/api/'.length), server.user);
}

/** Runs one step of a connect unless the attempt was abandoned (then rejects with the signal's reason). */
async function step<T>(signal: AbortSignal, run: () => Promise<T>): Promise<T> {
  signal.throwIfAborted();
  const result = await run();
  signal.throwIfAborted();
  return result;
}

/** Whether the server answers for its root directory (it runs, and lets the token in). */
async function rootAnswers(server: JupyterServerPort): Promise<boolean> {
  try {
    return (await server.lastModified('')) !== undefined;
  } catch {
    return false;
  }
}

function disposeQuietly(server: JupyterServerPort): void {
  try {
    server.dispose();
  } catch {
    // nothing more to release
  }
}

function kernelNameOf(notebook: NotebookJson): string {
  const metadata = notebook.metadata as { kernelspec?: { name?: unknown } } | undefined;
  const name = metadata?.kernelspec?.name;
  return typeof name === 'string' && name.trim() !== '' ? name : 'python3';
}

function emptyNotebook(kernelName: string): NotebookJson {
  return {
    cells: [],
    metadata: { kernelspec: { name: kernelName, display_name: kernelName } },
    nbformat: 4,
    nbformat_minor: 5,
  };
}

function encodePath(path: string): string {
  return path.split('/').map(encodeURIComponent).join('/');
}
