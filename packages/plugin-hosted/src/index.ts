export type { CreateHostedPluginOptions } from './create-hosted-plugin.js';
export { createHostedPlugin, hostedRetryEnvironmentVariable, parseRetrySchedule } from './create-hosted-plugin.js';
export type { HostedNotebookHandleOptions } from './hosted-notebook-handle.js';
export { HostedNotebookHandle } from './hosted-notebook-handle.js';
export { hostedNotebookId } from './hosted-notebook-id.js';
export { HostedOptions } from './hosted-options.js';
export { HostedRejoinRetry, hostedRetrySchedule } from './hosted-rejoin-retry.js';
export { HostedUrlNotebookBackend } from './hosted-url-notebook-backend.js';
export type {
  JupyterServerAddress,
  JupyterServerPort,
  KernelExecuteOptions,
  KernelExecutionReply,
  KernelMessage,
  NotebookJson,
  ServerKernelConnection,
  ServerNotebookFile,
  ServerSession,
} from './jupyter-server-port.js';
export { JupyterServerConnector } from './jupyter-server-port.js';
export { JupyterlabServicesConnector } from './jupyterlab-services-connector.js';
export type { HostedCreateLocation } from './parse-hosted-create-location.js';
export { parseHostedCreateLocation } from './parse-hosted-create-location.js';
export type { HostedUrlParseContext } from './parse-hosted-url-target.js';
export { parseHostedUrlTarget } from './parse-hosted-url-target.js';
