import { ChildToolContribution, ClientExtension, definePlugin, type McpPlugin } from '@nteract-mcp/core';
import { ContainerModule } from 'inversify';
import { OutlineExtension } from './outline-extension.js';
import { OutlineTools } from './outline-tools.js';

/**
 * The plugin that adds our tool (one binding to core's `ChildToolContribution` point) and, for the
 * clients that declare it, our extension (core's `ClientExtension` point).
 */
export function createOutlinePlugin(): McpPlugin {
  return definePlugin({
    id: 'example.outline',
    module: new ContainerModule(({ bind }) => {
      bind(ChildToolContribution).to(OutlineTools).inSingletonScope();
      bind(ClientExtension).toConstantValue(new OutlineExtension());
    }),
  });
}
