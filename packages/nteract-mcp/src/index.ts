export type { DistributionOptions } from './create-distribution-container.js';

export { createDistributionContainer, distributionPlugins } from './create-distribution-container.js';
export { nteractMcpUsage, runNteractMcp } from './run-nteract-mcp.js';
