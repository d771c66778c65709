import {
  CoreError,
  definePlugin,
  Logger,
  type McpPlugin,
  NotebookBackend,
  RecoveryContribution,
  type RetrySchedule,
  SecretToken,
} from '@nteract-mcp/core';
import { ContainerModule } from 'inversify';
import { HostedOptions } from './hosted-options.js';
import { HostedRejoinRetry, hostedRetrySchedule } from './hosted-rejoin-retry.js';
import { HostedUrlNotebookBackend } from './hosted-url-notebook-backend.js';
import { defaultHubStartTimeoutMs } from './hub-server-starter.js';
import { JupyterServerConnector } from './jupyter-server-port.js';
import type { HubFetch } from './jupyterhub-api.js';
import { JupyterlabServicesConnector } from './jupyterlab-services-connector.js';

/** The environment variable that sets the hosted retry schedule: `initial_ms,max_ms,attempts` (e.g. `1000,30000,10`). */
export const hostedRetryEnvironmentVariable = 'NTERACT_MCP_HOSTED_RETRY';

/** The environment variable that sets how long a stopped JupyterHub user server may take to start, in seconds. */
export const hubStartTimeoutEnvironmentVariable = 'NTERACT_MCP_HUB_START_TIMEOUT_SECS';

/** The environment variable with the spawner's user options (a JSON object) sent when a JupyterHub user server is started. */
export const hubServerOptionsEnvironmentVariable = 'NTERACT_MCP_HUB_SERVER_OPTIONS';

export interface CreateHostedPluginOptions {
  /** Default Jupyter token; falls back to `env.JUPYTER_TOKEN`. Never logged. */
  readonly token?: string;
  /** JupyterHub API token for Hub URLs without `?token=`; falls back to `env.JUPYTERHUB_API_TOKEN`. Never logged. */
  readonly hubToken?: string;
  /** How long a stopped JupyterHub user server may take to start (default `NTERACT_MCP_HUB_START_TIMEOUT_SECS`, else {@link defaultHubStartTimeoutMs}). */
  readonly hubStartTimeoutMs?: number;
  /** The spawner's user options sent when a JupyterHub user server is started (default `NTERACT_MCP_HUB_SERVER_OPTIONS`, else none). */
  readonly hubServerOptions?: Readonly<Record<string, unknown>>;
  /** How the JupyterHub REST API is reached; default `fetch`. */
  readonly hubFetch?: HubFetch;
  /** Environment to read `JUPYTER_TOKEN`, `JUPYTERHUB_API_TOKEN` and `NTERACT_MCP_HOSTED_RETRY` from; defaults to `process.env`. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** When a lost hosted notebook is tried again; default {@link hostedRetrySchedule}, or `NTERACT_MCP_HOSTED_RETRY`. */
  readonly retry?: RetrySchedule;
  /** How Jupyter Servers are reached; default {@link JupyterlabServicesConnector} (`@jupyterlab/services`). */
  readonly connector?: JupyterServerConnector;
}

/**
 * Notebooks on a Jupyter Server, addressed by URL: the `hosted-url` notebook backend (contents,
 * sessions and kernels through `@jupyterlab/services`; a lost session comes back through its
 * `reopen`) and its bounded rejoin retry.
 */
export function createHostedPlugin(options: CreateHostedPluginOptions = {}): McpPlugin {
  const env = options.env ?? process.env;
  const token = options.token ?? env.JUPYTER_TOKEN;
  const hubToken = options.hubToken ?? env.JUPYTERHUB_API_TOKEN;
  const hosted: HostedOptions = Object.freeze({
    defaultToken: token ? new SecretToken(token) : undefined,
    hubToken: hubToken ? new SecretToken(hubToken) : undefined,
    hubStartTimeoutMs:
      options.hubStartTimeoutMs ??
      parseHubStartTimeout(env[hubStartTimeoutEnvironmentVariable]) ??
      defaultHubStartTimeoutMs,
    ...(options.hubFetch === undefined ? {} : { hubFetch: options.hubFetch }),
    ...withServerOptions(options.hubServerOptions ?? parseHubServerOptions(env[hubServerOptionsEnvironmentVariable])),
    retrySchedule: options.retry ?? parseRetrySchedule(env[hostedRetryEnvironmentVariable]) ?? hostedRetrySchedule,
  });
  return definePlugin({
    id: 'hosted',
    module: new ContainerModule(({ bind }) => {
      bind(HostedOptions).toConstantValue(hosted);
      const { connector } = options;
      if (connector) bind(JupyterServerConnector).toConstantValue(connector);
      else {
        bind(JupyterServerConnector)
          .toDynamicValue((context) => new JupyterlabServicesConnector(context.get(Logger)))
          .inSingletonScope();
      }
      bind(NotebookBackend).to(HostedUrlNotebookBackend).inSingletonScope();
      bind(RecoveryContribution).to(HostedRejoinRetry).inSingletonScope();
    }),
  });
}

/** `initial_ms,max_ms,attempts` as a schedule; `undefined` when unset. Throws `invalidPluginOptions` when malformed. */
export function parseRetrySchedule(value: string | undefined): RetrySchedule | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  const parts = value.split(',').map((part) => Number(part.trim()));
  const [initialMs, maxMs, maxAttempts] = parts;
  if (
    parts.length !== 3 ||
    !parts.every((part) => Number.isInteger(part) && part > 0) ||
    (initialMs as number) > (maxMs as number)
  ) {
    throw new CoreError(
      'invalidPluginOptions',
      `${hostedRetryEnvironmentVariable} must be 'initial_ms,max_ms,attempts' with positive whole numbers and initial_ms <= max_ms (e.g. '1000,30000,10').`,
    );
  }
  return Object.freeze({ initialMs: initialMs as number, maxMs: maxMs as number, maxAttempts: maxAttempts as number });
}

/** Whole seconds (> 0) as milliseconds; `undefined` when unset. Throws `invalidPluginOptions` when malformed. */
export function parseHubStartTimeout(value: string | undefined): number | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  const seconds = Number(value.trim());
  if (!Number.isInteger(seconds) || seconds <= 0) {
    throw new CoreError(
      'invalidPluginOptions',
      `${hubStartTimeoutEnvironmentVariable} must be a whole number of seconds above 0 (e.g. '300').`,
    );
  }
  return seconds * 1000;
}

/** A JSON object; `undefined` when unset. Throws `invalidPluginOptions` when it is not one (its text is not repeated). */
export function parseHubServerOptions(value: string | undefined): Readonly<Record<string, unknown>> | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    parsed = undefined;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new CoreError(
      'invalidPluginOptions',
      `${hubServerOptionsEnvironmentVariable} must be a JSON object of the Hub spawner's options (e.g. '{"profile": "gpu"}').`,
    );
  }
  return Object.freeze(parsed as Record<string, unknown>);
}

function withServerOptions(options: Readonly<Record<string, unknown>> | undefined): {
  hubServerOptions?: Readonly<Record<string, unknown>>;
} {
  return options === undefined ? {} : { hubServerOptions: options };
}
