export type { ChildPluginOptions } from './distribution-plugins.js';
export { childPlugins, proxyPlugins } from './distribution-plugins.js';
export { nteractMcpUsage, runNteractMcp } from './run-nteract-mcp.js';
export type { ProxyCommandOptions } from './run-nteract-proxy.js';
export { bundledChildEntry, runNteractProxy } from './run-nteract-proxy.js';
export { runRuntMcp, runtimedEntry, runtMcpUsage } from './run-runt-mcp.js';
