import { defineToken, type RetrySchedule, type SecretToken } from '@nteract-mcp/core';
import type { HubFetch } from './jupyterhub-api.js';

/** Settings of the hosted-notebook plugin, as bound in the container. */
export interface HostedOptions {
  /** Token for URLs without `?token=`; from `createHostedPlugin({ token })` or `JUPYTER_TOKEN`. */
  readonly defaultToken: SecretToken | undefined;
  /** When a lost hosted notebook is tried again (after the attempt at once). */
  readonly retrySchedule: RetrySchedule;
  /** Token for JupyterHub URLs without `?token=` (`JUPYTERHUB_API_TOKEN`); preferred there to {@link HostedOptions.defaultToken}. */
  readonly hubToken: SecretToken | undefined;
  /** How long a stopped JupyterHub user server may take to start. */
  readonly hubStartTimeoutMs: number;
  /** The spawner's user options sent when a stopped JupyterHub user server is started (e.g. `{ "profile": "gpu" }`). */
  readonly hubServerOptions?: Readonly<Record<string, unknown>>;
  /** How the JupyterHub API is reached (tests replace it); default `fetch`. */
  readonly hubFetch?: HubFetch;
}

export const HostedOptions = defineToken<HostedOptions>('plugin-hosted', 'HostedOptions');
