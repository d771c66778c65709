import {
  CoreError,
  isHostedUrlTarget,
  type NotebookTarget,
  NotebookTargetResolver,
  type RejoinContext,
  type RejoinOutcome,
  type RejoinStrategy,
  rejoinByOpening,
} from '@nteract-mcp/core';
import { inject, injectable } from 'inversify';
import { unauthorizedErrorCode } from './jupyter-server-port.js';

/**
 * Rejoin by URL: the notebook is reopened through its backend (contents loaded, the server's
 * session for the path found or started, its kernel connected) and readiness awaited. A server
 * without the notebook, or one that refuses the credentials (HTTP 401/403) ⇒ `evicted`; a server
 * that does not answer ⇒ retry later.
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
    return rejoinByOpening(async () => {
      try {
        return await this.backends.reopen(target, context);
      } catch (error) {
        // Refused credentials do not get better by waiting: a drop, with the server's reason.
        if (CoreError.is(error) && error.code === unauthorizedErrorCode) {
          throw new CoreError('notebookUnavailable', error.message, { cause: error });
        }
        throw error;
      }
    }, context.signal);
  }
}
