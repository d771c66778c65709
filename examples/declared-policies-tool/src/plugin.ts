import type { McpPlugin } from '@nteract-mcp/core';
import { createDeclaredPoliciesPlugin } from './create-declared-policies-plugin.js';

/** The plugin module the distribution's child loads (`runt-mcp --plugin <this file>` or `NTERACT_MCP_PLUGINS`). */
export function createPlugin(): McpPlugin {
  return createDeclaredPoliciesPlugin();
}
