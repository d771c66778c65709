import { BoundedRetryRecovery, Clock, describeNotebookTarget, Logger, type RetrySchedule } from '@nteract-mcp/core';
import { inject, injectable } from 'inversify';

/** Hosted recovery: at once, then 1 s doubling to 30 s, at most 10 attempts in all. */
export const hostedRetrySchedule: RetrySchedule = Object.freeze({ initialMs: 1_000, maxMs: 30_000, maxAttempts: 10 });

/**
 * The hosted plugin's part of the child's recovery loop: core's bounded retry for `hosted-url`
 * targets on {@link hostedRetrySchedule}, independent of local daemon events (hosted sessions are
 * never part of incarnation reconciliation). When the attempts are used up, the agent is told how
 * to reconnect by URL.
 */
@injectable()
export class HostedRejoinRetry extends BoundedRetryRecovery {
  public constructor(@inject(Clock) clock: Clock, @inject(Logger) logger: Logger) {
    super(clock, logger, {
      id: 'hosted.rejoin-retry',
      handles: (target) => target.kind === 'hosted-url',
      schedule: hostedRetrySchedule,
      giveUpReason: (target, attempts, last) => {
        const url = describeNotebookTarget(target);
        return (
          `Could not rejoin ${url} after ${attempts} attempts (last: ${last}). ` +
          `Reconnect with: connect_notebook(url="${url}") once the server answers.`
        );
      },
    });
  }
}
