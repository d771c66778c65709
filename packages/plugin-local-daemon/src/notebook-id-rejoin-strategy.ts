import {
  isNotebookIdTarget,
  type NotebookTarget,
  NotebookTargetResolver,
  type RejoinContext,
  type RejoinOutcome,
  type RejoinStrategy,
  rejoinByOpening,
} from '@nteract-mcp/core';
import { inject, injectable } from 'inversify';

/**
 * Rejoin by notebook UUID, trusting the daemon's attach-only admission: `notebookUnavailable` is
 * definitive (`evicted`, never retried); there is no list-rooms precheck, since an unlisted room
 * may still be recoverable. Other failures are transient. As for a saved path, the session is back
 * once the room is open; its kernel comes up in the background.
 */
@injectable()
export class NotebookIdRejoinStrategy implements RejoinStrategy {
  public readonly id = 'local-daemon.notebook-id';
  public readonly specificationVersion = 'v1';

  public constructor(@inject(NotebookTargetResolver) private readonly backends: NotebookTargetResolver) {}

  public supports(target: NotebookTarget): boolean {
    return isNotebookIdTarget(target);
  }

  public async rejoin(target: NotebookTarget, context: RejoinContext): Promise<RejoinOutcome> {
    if (!isNotebookIdTarget(target)) return { kind: 'evicted', reason: `${this.id} handles notebook ids only` };
    return rejoinByOpening(() => this.backends.reopen(target, context), context.signal, { until: 'document' });
  }
}
