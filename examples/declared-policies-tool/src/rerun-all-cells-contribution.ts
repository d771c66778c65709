import type { ChildServerDependencies, ChildToolContribution, RegisteredChildTool } from '@nteract-mcp/core';
import { injectable } from 'inversify';
import { createRerunAllCellsTool } from './create-rerun-all-cells-tool.js';

/** Contributes `rerun_all_cells` to the child server, made with the server's own services. */
@injectable()
export class RerunAllCellsContribution implements ChildToolContribution {
  public readonly id = 'example.declared-policies.rerun-all-cells';
  public readonly specificationVersion = 'v1';

  public tools(services: ChildServerDependencies): readonly RegisteredChildTool[] {
    return [createRerunAllCellsTool(services)];
  }
}
