export type { DistributionOptions } from './create-distribution-container.js';
export { createDistributionContainer, distributionPlugins } from './create-distribution-container.js';
export { nteractMcpUsage, runNteractMcp } from './run-nteract-mcp.js';
export type { ProxyCommandOptions } from './run-nteract-proxy.js';
export { bundledChildEntry, runNteractProxy } from './run-nteract-proxy.js';
export { daemonUpgradeExitCode, runRuntMcp, runtimedEntry, runtMcpUsage } from './run-runt-mcp.js';
