import { injectable } from 'inversify';
import type { ChildServerDependencies } from '../child-server-dependencies.js';
import type { ChildToolContribution } from './child-tool-contribution.js';
import type { RegisteredChildTool } from './child-tool-registry.js';
import { createChangeTools } from './create-change-tools.js';
import { createCommentTools } from './create-comment-tools.js';
import { createEditTools } from './create-edit-tools.js';
import { createInspectionTools } from './create-inspection-tools.js';
import { createKernelTools } from './create-kernel-tools.js';
import { createNotebookTools } from './create-notebook-tools.js';
import { createPackageTools } from './create-package-tools.js';
import { createRestoreTools } from './create-restore-tools.js';
import { createSearchTools } from './create-search-tools.js';
import { createSessionTools } from './create-session-tools.js';

/**
 * Core's own tools (session, kernel, notebook, edit, change, comment, restore, inspection, package and
 * search tools), contributed to the child server through `ChildToolContribution` like a plugin's, in the
 * order `tools/list` shows them.
 */
@injectable()
export class CoreChildTools implements ChildToolContribution {
  public readonly id = 'core.child-tools';
  public readonly specificationVersion = 'v1';

  public tools(services: ChildServerDependencies): readonly RegisteredChildTool[] {
    return [
      ...createSessionTools(services),
      ...createKernelTools(services),
      ...createNotebookTools(services),
      ...createEditTools(services),
      ...createChangeTools(services),
      ...createCommentTools(services),
      ...createRestoreTools(services),
      ...createInspectionTools(services),
      ...createPackageTools(services),
      ...createSearchTools(services),
    ];
  }
}
