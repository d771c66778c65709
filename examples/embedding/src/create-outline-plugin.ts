import { ChildToolContribution, definePlugin, type McpPlugin } from '@nteract-mcp/core';
import { ContainerModule } from 'inversify';
import { OutlineTools } from './outline-tools.js';

/** The plugin that adds our tool: one binding to core's `ChildToolContribution` point. */
export function createOutlinePlugin(): McpPlugin {
  return definePlugin({
    id: 'example.outline',
    module: new ContainerModule(({ bind }) => {
      bind(ChildToolContribution).to(OutlineTools).inSingletonScope();
    }),
  });
}
