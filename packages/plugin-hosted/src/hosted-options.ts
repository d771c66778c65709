import { defineToken, type RetrySchedule, type SecretToken } from '@nteract-mcp/core';

/** Settings of the hosted-notebook plugin, as bound in the container. */
export interface HostedOptions {
  /** Token for URLs without `?token=`; from `createHostedPlugin({ token })` or `JUPYTER_TOKEN`. */
  readonly defaultToken: SecretToken | undefined;
  /** When a lost hosted notebook is tried again (after the attempt at once). */
  readonly retrySchedule: RetrySchedule;
}

export const HostedOptions = defineToken<HostedOptions>('plugin-hosted', 'HostedOptions');
