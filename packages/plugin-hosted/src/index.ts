export type { CreateHostedPluginOptions } from './create-hosted-plugin.js';

export { createHostedPlugin } from './create-hosted-plugin.js';
export { HostedOptions } from './hosted-options.js';
export { HostedRejoinRetry, hostedRetrySchedule } from './hosted-rejoin-retry.js';
export { HostedUrlNotebookBackend } from './hosted-url-notebook-backend.js';
export type { HostedUrlParseContext } from './parse-hosted-url-target.js';
export { parseHostedUrlTarget } from './parse-hosted-url-target.js';
