import { fileURLToPath } from 'node:url';

/** The shipped bins, as a user's MCP client runs them. */
export const shippedBins = Object.freeze({
  proxy: fileURLToPath(new URL('../../packages/nteract-mcp/dist/nteract-mcp.js', import.meta.url)),
  child: fileURLToPath(new URL('../../packages/nteract-mcp/dist/runt-mcp.js', import.meta.url)),
  runtimed: fileURLToPath(new URL('../../packages/nteract-mcp/dist/runtimed.js', import.meta.url)),
});
