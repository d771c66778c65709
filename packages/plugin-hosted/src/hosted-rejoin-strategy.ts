import {
  isHostedUrlTarget,
  type NotebookTarget,
  NotebookTargetResolver,
  type RejoinContext,
  type RejoinOutcome,
  type RejoinStrategy,
  rejoinByOpening,
} from '@nteract-mcp/core';
import { inject, injectable } from 'inversify';

/**
 * Rejoin by URL: the notebook is reopened through its backend (contents loaded, the server's
 * session for the path found or started, its kernel connected) and readiness awaited. A server
 * without the notebook ⇒ `evicted`; a server that does not answer ⇒ retry later.
 */
@injectable()
export class HostedRejoinStrategy implements RejoinStrategy {
  public readonly id = 'hosted.url';
  public readonly specificationVersion = 'v1';

  public constructor(@inject(NotebookTargetResolver) private readonly backends: NotebookTargetResolver) {}

  public supports(target: NotebookTarget): boolean {
    return isHostedUrlTarget(target);
  }

  public rejoin(target: NotebookTarget, context: RejoinContext): Promise<RejoinOutcome> {
    return rejoinByOpening(() => this.backends.reopen(target, context), context.signal);
  }
}
