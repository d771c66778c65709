import { CoreError, type SecretToken } from '@nteract-mcp/core';

/** The `code` of the `CoreError` for a Hub user server that is not running (the Hub answered 424, or 503 through its proxy). */
export const hubServerNotRunningCode = 'hub_server_not_running';

/** The `code` of the `CoreError` for a Hub API call refused for the token (HTTP 401/403, or 404 for a user the token may not see). */
export const hubForbiddenCode = 'hub_forbidden';

/** A single-user server of a JupyterHub, as its URL names it: a user's default server, or one of its named servers. */
export interface HubUserServer {
  /** `http(s)://host[:port][/prefix]/hub/api/` */
  readonly hubApiUrl: string;
  /** The Hub's page of the user's server, for people (`…/hub/home`). */
  readonly hubHomeUrl: string;
  readonly user: string;
  /** The named server's name; `''` for the user's default server. */
  readonly serverName: string;
}

/**
 * Where a hosted URL's server is on a JupyterHub: a user's server, or the `user-redirect` of the
 * token's own user (to its default server, or to its server `serverName`).
 */
export type HubLocation =
  | { readonly kind: 'user-server'; readonly server: HubUserServer }
  | {
      readonly kind: 'user-redirect';
      readonly hubApiUrl: string;
      readonly prefix: string;
      readonly serverName: string;
    };

/**
 * What a Jupyter Server base URL says of a JupyterHub: `…/user/<name>/` is the default server of
 * user `<name>`, `…/user/<name>/<server>/` its named server `<server>` (the Hub's API at
 * `…/hub/api/`); `…/hub/user-redirect/` (or `…/hub/user-redirect/<server>/`) is the server of
 * whoever the token belongs to; anything else is not a Hub URL (`undefined`).
 */
export function hubLocationOf(serverUrl: string): HubLocation | undefined {
  const url = new URL(serverUrl);
  const redirect = /^(.*?\/)hub\/user-redirect\/(?:([^/]+)\/)?$/.exec(url.pathname);
  if (redirect) {
    const serverName = decodedSegment(redirect[2] ?? '');
    if (serverName === undefined) return undefined;
    const prefix = `${url.origin}${redirect[1]}`;
    return { kind: 'user-redirect', hubApiUrl: `${prefix}hub/api/`, prefix, serverName };
  }
  const user = /^(.*?\/)user\/([^/]+)\/(?:([^/]+)\/)?$/.exec(url.pathname);
  if (!user) return undefined;
  const prefix = `${url.origin}${user[1]}`;
  const name = decodedSegment(user[2] as string);
  const serverName = decodedSegment(user[3] ?? '');
  if (name === undefined || serverName === undefined) return undefined;
  return {
    kind: 'user-server',
    server: { hubApiUrl: `${prefix}hub/api/`, hubHomeUrl: `${prefix}hub/home`, user: name, serverName },
  };
}

function decodedSegment(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}

/** The base URL of `user`'s default server (or of its server `serverName`) on the Hub whose URLs start with `prefix`. */
export function hubUserServerUrl(prefix: string, user: string, serverName = ''): string {
  return `${prefix}user/${encodeURIComponent(user)}/${serverName === '' ? '' : `${encodeURIComponent(serverName)}/`}`;
}

/** How a Hub user server is named in a sentence: `the server of user 'alice'`, `the server 'work' of user 'alice'`. */
export function hubServerLabel(server: Pick<HubUserServer, 'user' | 'serverName'>): string {
  return server.serverName === ''
    ? `the server of user '${server.user}'`
    : `the server '${server.serverName}' of user '${server.user}'`;
}

/** The state of a user's server as the Hub says it. */
export interface HubServerState {
  /** Running and answering. */
  readonly ready: boolean;
  /** `spawn` or `stop` while one is in progress. */
  readonly pending: string | null;
}

/** The part of `fetch` the Hub client uses (replaced in tests). */
export type HubFetch = (
  url: string,
  init: { method: string; headers: Record<string, string>; body?: string },
) => Promise<{
  readonly status: number;
  text(): Promise<string>;
}>;

/**
 * A client of a JupyterHub's REST API (`…/hub/api/`) with one API token (in the `Authorization`
 * header only, never in a URL or a message). Errors are `CoreError`s that name the Hub and the
 * user, never the token: `daemonUnavailable` when the Hub does not answer or answers 5xx
 * (transient), `invalidRequest` when it refuses (`code`: {@link hubForbiddenCode} for 401/403, and for
 * a 404 on a user: the Hub answers so for a user the token may not see, as for one that does not exist).
 */
export class JupyterHubApi {
  public constructor(
    private readonly hubApiUrl: string,
    private readonly token: SecretToken | undefined,
    private readonly fetch: HubFetch = globalThis.fetch as unknown as HubFetch,
  ) {}

  /** The name of the user the token belongs to (`GET /hub/api/user`). */
  public async whoAmI(): Promise<string> {
    const { status, body } = await this.call('GET', 'user', 'find the user of the token');
    const name = (body as { name?: unknown } | undefined)?.name;
    if (status !== 200 || typeof name !== 'string') {
      throw this.refusal(status, 'find the user of the token', body);
    }
    return name;
  }

  /** The state of `user`'s default server, or of its server `serverName` (`GET /hub/api/users/<user>`). */
  public async serverState(user: string, serverName = ''): Promise<HubServerState> {
    const what = `read the state of ${hubServerLabel({ user, serverName })}`;
    const { status, body } = await this.call('GET', `users/${encodeURIComponent(user)}`, what);
    // JupyterHub answers 404 for a user the token may not see, as for one that does not exist.
    if (status === 404) throw this.refusal(403, what, body, 404);
    if (status !== 200) throw this.refusal(status, what, body);
    const model = body as { servers?: Record<string, { ready?: unknown; pending?: unknown }> } | undefined;
    const server = model?.servers?.[serverName];
    return {
      ready: server?.ready === true,
      pending: typeof server?.pending === 'string' ? server.pending : null,
    };
  }

  /**
   * Asks the Hub to start `user`'s default server (`POST /hub/api/users/<user>/server`) or its
   * named server (`POST /hub/api/users/<user>/servers/<serverName>`, which also creates it);
   * resolves when the Hub accepted (201 started, 202 starting) with `true`, or said 400 (`false`:
   * already running or pending, or refused for a reason it gives: the caller reads the state
   * again), with the Hub's message. `options` (the spawner's user options, e.g. `{ "profile": "gpu" }`)
   * go as the request's JSON body when given.
   */
  public async startServer(
    user: string,
    serverName = '',
    options?: Readonly<Record<string, unknown>>,
  ): Promise<{ accepted: boolean; message?: string }> {
    const what = `start ${hubServerLabel({ user, serverName })}`;
    const route =
      serverName === ''
        ? `users/${encodeURIComponent(user)}/server`
        : `users/${encodeURIComponent(user)}/servers/${encodeURIComponent(serverName)}`;
    const { status, body } = await this.call('POST', route, what, options);
    if (status === 201 || status === 202) return { accepted: true };
    if (status === 400) {
      const said = (body as { message?: unknown } | undefined)?.message;
      return { accepted: false, ...(typeof said === 'string' && said.trim() !== '' ? { message: said.trim() } : {}) };
    }
    throw this.refusal(status, what, body);
  }

  private async call(
    method: string,
    path: string,
    what: string,
    json?: unknown,
  ): Promise<{ status: number; body: unknown }> {
    let response: Awaited<ReturnType<HubFetch>>;
    try {
      response = await this.fetch(`${this.hubApiUrl}${path}`, {
        method,
        headers: {
          Accept: 'application/json',
          ...(json === undefined ? {} : { 'Content-Type': 'application/json' }),
          ...(this.token ? { Authorization: `token ${this.token.reveal()}` } : {}),
        },
        ...(json === undefined ? {} : { body: JSON.stringify(json) }),
      });
    } catch {
      throw new CoreError(
        'daemonUnavailable',
        `Could not ${what}: the JupyterHub at ${this.hubApiUrl} does not answer.`,
        {
          code: 'server_unreachable',
        },
      );
    }
    const text = await response.text().catch(() => '');
    let body: unknown;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      body = undefined;
    }
    return { status: response.status, body };
  }

  /** The Hub's refusal as a `CoreError`; `answered` is the HTTP status the Hub gave, when `status` is how it is read. */
  private refusal(status: number, what: string, body: unknown, answered = status): CoreError {
    const said = (body as { message?: unknown } | undefined)?.message;
    const reason = typeof said === 'string' && said.trim() !== '' ? `: ${said.trim()}` : '';
    if (status === 401 || status === 403) {
      return new CoreError(
        'invalidRequest',
        `Could not ${what}: the JupyterHub at ${this.hubApiUrl} refused this API token (HTTP ${answered}${reason}). Its scopes do not allow it; use a token of that user (JUPYTERHUB_API_TOKEN or ?token=…) or one with the scope the Hub names.`,
        { code: hubForbiddenCode },
      );
    }
    return new CoreError(
      status >= 500 ? 'daemonUnavailable' : 'invalidRequest',
      `Could not ${what}: the JupyterHub at ${this.hubApiUrl} answered HTTP ${status}${reason}.`,
      { code: `hub_http_${status}` },
    );
  }
}
