import type { Container } from 'inversify';
import type { McpPlugin } from '../di/mcp-plugin.js';
import { type BindingOverride, composeContainer, type McpContainerOptions } from './create-plugin-container.js';
import { createSessionEngineModule } from './session-engine-module.js';

/**
 * Builds the root container of an MCP server child: core bindings, the session engine, then each
 * plugin's module, then validation of every contribution point. Fails with a `CoreError` for an
 * invalid or duplicate plugin id, an unknown `specificationVersion`, or a contribution that cannot
 * be created.
 */
export function createMcpContainer(options: McpContainerOptions): Container {
  return buildMcpContainer(options.plugins, []);
}

/** {@link createMcpContainer} with bindings replaced before validation. Not part of the public API. */
export function buildMcpContainer(plugins: readonly McpPlugin[], overrides: readonly BindingOverride[]): Container {
  return composeContainer([createSessionEngineModule()], plugins, overrides);
}
