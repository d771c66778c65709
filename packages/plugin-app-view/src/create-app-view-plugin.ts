import { ClientExtension, definePlugin, type McpPlugin } from '@nteract-mcp/core';
import { ContainerModule } from 'inversify';
import { AppViewExtension } from './app-view-extension.js';

/**
 * The MCP Apps view of the cells a tool touched, for clients that declare the
 * `io.modelcontextprotocol/ui` extension. Loaded by the child (resources, tool `_meta`, structured
 * results) and by the proxy (it announces the extension in its own handshake).
 */
export function createAppViewPlugin(): McpPlugin {
  return definePlugin({
    id: 'app-view',
    module: new ContainerModule(({ bind }) => {
      bind(ClientExtension).toConstantValue(new AppViewExtension());
    }),
  });
}
