export {
  createUserEnvironment,
  type UserEnvironment,
  type UserEnvironmentOptions,
} from './create-user-environment.js';
export { findSecretLeaks } from './find-secret-leaks.js';
export { brokenKernelArgv, installKernelspec } from './install-kernelspec.js';
export { type NativeEnvelope, nativeRawRequests } from './native-raw-requests.js';
export { readNotebookFile, type SavedCell } from './notebook-file.js';
export {
  allProcesses,
  childrenOf,
  descendantsOf,
  isAlive,
  type ProcessInfo,
  processesWithHome,
  processInfo,
} from './process-tree.js';
export { type ClaudeMcpAdd, type ReadmeCommands, readmeCommands } from './readme-commands.js';
export { requestWithToken, type TokenApiAnswer } from './request-with-token.js';
export { shippedBins } from './shipped-bins.js';
export {
  type ProxyCommand,
  type ProxyPlace,
  type StderrPipingTransport,
  spawnShippedProxy,
} from './spawn-shipped-proxy.js';
export {
  type JupyterServerOptions,
  type JupyterServerUnderTest,
  jupyterPython,
  startJupyterServer,
} from './start-jupyter-server.js';
export {
  configurableHttpProxy,
  type HubAnswer,
  type HubUserOptions,
  type JupyterHubOptions,
  type JupyterHubUnderTest,
  startJupyterHub,
} from './start-jupyterhub.js';
export { type RawLine, type RawProxy, startRawProxy } from './start-raw-proxy.js';
export {
  type FiredHook,
  faultHooksModule,
  type SessionFaults,
  type SessionPids,
  type SettledCall,
  startUserSession,
  type ToolOutcome,
  type UserSession,
  type UserSessionDirs,
  type UserSessionOptions,
} from './start-user-session.js';
export { type TappedRequest, TappedTransport } from './tapped-transport.js';
export { type WaitForOptions, waitFor } from './wait-for.js';
