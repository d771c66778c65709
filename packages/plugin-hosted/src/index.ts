export type { CreateHostedPluginOptions } from './create-hosted-plugin.js';

export { createHostedPlugin } from './create-hosted-plugin.js';
export { HostedOptions } from './hosted-options.js';
export { HostedRejoinRetry, hostedRetrySchedule } from './hosted-rejoin-retry.js';
export { HostedUrlTargetKind } from './hosted-url-target-kind.js';
