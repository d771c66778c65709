import { type NotebookTarget, parseNotebookIdTarget, type TargetKind } from '@nteract-mcp/core';

/** Daemon notebook ids: UUIDs, normalised to lowercase. */
export class NotebookIdTargetKind implements TargetKind {
  public readonly id = 'local-daemon.notebook-id';
  public readonly specificationVersion = 'v1';
  public readonly kind = 'notebook-id';

  public parse(raw: string): NotebookTarget {
    return parseNotebookIdTarget(raw);
  }
}
