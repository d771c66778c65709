import {
  DaemonPort,
  type NotebookTarget,
  type RejoinContext,
  type RejoinOutcome,
  type RejoinStrategy,
} from '@nteract-mcp/core';
import { inject, injectable } from 'inversify';
import { rejoinByOpening } from './rejoin-by-opening.js';

/**
 * Rejoin by notebook UUID, trusting the daemon's attach-only admission: `notebookUnavailable` is
 * definitive (`evicted`, never retried); there is no list-rooms precheck, since an unlisted room
 * may still be recoverable. Other failures are transient.
 */
@injectable()
export class NotebookIdRejoinStrategy implements RejoinStrategy {
  public readonly id = 'local-daemon.notebook-id';
  public readonly specificationVersion = 'v1';

  public constructor(@inject(DaemonPort) private readonly daemon: DaemonPort) {}

  public supports(target: NotebookTarget): boolean {
    return target.kind === 'notebook-id';
  }

  public async rejoin(target: NotebookTarget, context: RejoinContext): Promise<RejoinOutcome> {
    if (target.kind !== 'notebook-id') return { kind: 'evicted', reason: `${this.id} handles notebook ids only` };
    return rejoinByOpening(
      () => this.daemon.attachNotebook(target.notebookId, { peerLabel: context.peerLabel }),
      context.signal,
    );
  }
}
