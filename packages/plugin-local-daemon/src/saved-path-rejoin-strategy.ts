import {
  DaemonPort,
  type NotebookTarget,
  type RejoinContext,
  type RejoinOutcome,
  type RejoinStrategy,
  SourceFileProbe,
} from '@nteract-mcp/core';
import { inject, injectable } from 'inversify';
import { rejoinByOpening } from './rejoin-by-opening.js';

/**
 * Rejoin by saved file: the preferred way back after a daemon restart. The source file must still
 * exist (missing ⇒ `evicted`; a file we cannot inspect ⇒ retry later); then the file is opened
 * through the daemon and readiness awaited. Transient daemon failures keep the target.
 */
@injectable()
export class SavedPathRejoinStrategy implements RejoinStrategy {
  public readonly id = 'local-daemon.saved-path';
  public readonly specificationVersion = 'v1';

  public constructor(
    @inject(DaemonPort) private readonly daemon: DaemonPort,
    @inject(SourceFileProbe) private readonly files: SourceFileProbe,
  ) {}

  public supports(target: NotebookTarget): boolean {
    return target.kind === 'local-path';
  }

  public async rejoin(target: NotebookTarget, context: RejoinContext): Promise<RejoinOutcome> {
    if (target.kind !== 'local-path') return { kind: 'evicted', reason: `${this.id} handles local paths only` };
    const source = await this.files.probe(target.path);
    if (source.kind === 'missing')
      return { kind: 'evicted', reason: `The saved notebook ${target.path} no longer exists` };
    if (source.kind === 'unknown')
      return { kind: 'retry-later', reason: `Cannot inspect ${target.path}: ${source.reason}` };
    return rejoinByOpening(
      () => this.daemon.openNotebook(source.canonicalPath, { peerLabel: context.peerLabel }),
      context.signal,
    );
  }
}
