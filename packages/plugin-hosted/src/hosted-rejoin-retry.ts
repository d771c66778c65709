import {
  BoundedRetryRecovery,
  Clock,
  describeNotebookTarget,
  Logger,
  type RetrySchedule,
  SessionSlot,
} from '@nteract-mcp/core';
import { inject, injectable } from 'inversify';
import { HostedOptions } from './hosted-options.js';

/** Hosted recovery by default: at once, then 1 s doubling to 30 s, at most 10 attempts in all. */
export const hostedRetrySchedule: RetrySchedule = Object.freeze({ initialMs: 1_000, maxMs: 30_000, maxAttempts: 10 });

/**
 * The hosted plugin's part of the child's recovery loop: core's bounded retry for `hosted-url`
 * targets on the plugin's schedule ({@link hostedRetrySchedule} unless configured), independent
 * of local daemon events (hosted sessions are never part of incarnation reconciliation).
 * A handoff is tried at once when the loop starts. When the active hosted session's connection
 * is lost (the server went away), core's loss watch removes that session (and any closed parked
 * hosted session) from the slot, keeps its URL and starts recovery at once, then on the schedule.
 * When the attempts are used up, the agent is told how to reconnect by URL.
 */
@injectable()
export class HostedRejoinRetry extends BoundedRetryRecovery {
  public constructor(
    @inject(Clock) clock: Clock,
    @inject(Logger) logger: Logger,
    @inject(HostedOptions) options: HostedOptions,
    @inject(SessionSlot) slot: SessionSlot,
  ) {
    super(clock, logger, {
      id: 'hosted.rejoin-retry',
      handles: (target) => target.kind === 'hosted-url',
      schedule: options.retrySchedule,
      giveUpReason: (target, attempts, last) => {
        const url = describeNotebookTarget(target);
        return (
          `Could not rejoin ${url} after ${attempts} attempts (last: ${last}). ` +
          `Reconnect with: connect_notebook(url="${url}") once the server answers.`
        );
      },
      lossWatch: { slot, reason: 'the connection to the Jupyter Server was lost' },
    });
  }
}
