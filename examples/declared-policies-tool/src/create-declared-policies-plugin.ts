import { ChildToolContribution, definePlugin, type McpPlugin } from '@nteract-mcp/core';
import { ContainerModule } from 'inversify';
import { RerunAllCellsContribution } from './rerun-all-cells-contribution.js';

/** The plugin: `rerun_all_cells` through core's `ChildToolContribution` point, on core only. */
export function createDeclaredPoliciesPlugin(): McpPlugin {
  return definePlugin({
    id: 'example-declared-policies',
    module: new ContainerModule(({ bind }) => {
      bind(ChildToolContribution).to(RerunAllCellsContribution).inSingletonScope();
    }),
  });
}
