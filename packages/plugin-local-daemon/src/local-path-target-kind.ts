import { type NotebookTarget, parseLocalPathTarget, type TargetKind, type TargetParseContext } from '@nteract-mcp/core';

/** Local notebook files: `~` expanded, resolved against the cwd, canonical when present. */
export class LocalPathTargetKind implements TargetKind {
  public readonly id = 'local-daemon.path';
  public readonly specificationVersion = 'v1';
  public readonly kind = 'local-path';

  public parse(raw: string, context: TargetParseContext): NotebookTarget {
    return parseLocalPathTarget(raw, context);
  }
}
