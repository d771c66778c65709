import {
  isLocalPathTarget,
  type NotebookTarget,
  NotebookTargetResolver,
  type RejoinContext,
  type RejoinOutcome,
  type RejoinStrategy,
  rejoinByOpening,
  SourceFileProbe,
} from '@nteract-mcp/core';
import { inject, injectable } from 'inversify';

/**
 * Rejoin by saved file: the preferred way back after a daemon restart. The source file must still
 * exist (missing ⇒ `evicted`; a file we cannot inspect ⇒ retry later), unless the target was made
 * for a file that did not exist yet (`existed: false`, e.g. `--notebook new.ipynb`): that one is
 * opened as connect_notebook opens it, a new empty notebook there. Then its canonical path is
 * reopened through its notebook backend. The session is back once the room is open (its document
 * is whole in the daemon's greeting): its kernel, which a fresh daemon starts only now, comes up in
 * the background, and the tools that need it wait for it. Transient daemon failures keep the target.
 */
@injectable()
export class SavedPathRejoinStrategy implements RejoinStrategy {
  public readonly id = 'local-daemon.saved-path';
  public readonly specificationVersion = 'v1';

  public constructor(
    @inject(NotebookTargetResolver) private readonly backends: NotebookTargetResolver,
    @inject(SourceFileProbe) private readonly files: SourceFileProbe,
  ) {}

  public supports(target: NotebookTarget): boolean {
    return isLocalPathTarget(target);
  }

  public async rejoin(target: NotebookTarget, context: RejoinContext): Promise<RejoinOutcome> {
    if (!isLocalPathTarget(target)) return { kind: 'evicted', reason: `${this.id} handles local paths only` };
    const source = await this.files.probe(target.path);
    if (source.kind === 'missing' && !target.existed) {
      // A path given before its file existed (`nteract-mcp --notebook new.ipynb`): opened as
      // connect_notebook opens it, a new empty notebook in its (existing) directory.
      return rejoinByOpening(() => this.backends.reopen(target, context), context.signal, { until: 'document' });
    }
    if (source.kind === 'missing')
      return { kind: 'evicted', reason: `The saved notebook ${target.path} no longer exists` };
    if (source.kind === 'unknown')
      return { kind: 'retry-later', reason: `Cannot inspect ${target.path}: ${source.reason}` };
    const canonical: NotebookTarget = { kind: 'local-path', path: source.canonicalPath, existed: true };
    return rejoinByOpening(() => this.backends.reopen(canonical, context), context.signal, { until: 'document' });
  }
}
