import {
  type NotebookTarget,
  NotebookTargetResolver,
  type RejoinContext,
  type RejoinOutcome,
  type RejoinStrategy,
  rejoinByOpening,
} from '@nteract-mcp/core';
import { inject, injectable } from 'inversify';
import { isArchiveTarget } from './archive-target.js';

/**
 * How an archived notebook comes back after a loss: reopen its working copy through its backend
 * and wait for readiness (core's `rejoinByOpening` closes the handle and classifies a failure: a
 * lost working copy is `evicted`, a daemon that is not up yet `retry-later`). It only returns an
 * outcome; core decides whether to publish the session.
 */
@injectable()
export class ArchiveRejoinStrategy implements RejoinStrategy {
  public readonly id = 'acme.archive-rejoin';
  public readonly specificationVersion = 'v1';

  public constructor(@inject(NotebookTargetResolver) private readonly backends: NotebookTargetResolver) {}

  public supports(target: NotebookTarget): boolean {
    return isArchiveTarget(target);
  }

  public async rejoin(target: NotebookTarget, context: RejoinContext): Promise<RejoinOutcome> {
    if (!isArchiveTarget(target)) return { kind: 'evicted', reason: `${this.id} handles archive targets only` };
    return rejoinByOpening(() => this.backends.reopen(target, context), context.signal);
  }
}
