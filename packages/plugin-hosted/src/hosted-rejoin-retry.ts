import {
  Clock,
  describeNotebookTarget,
  Logger,
  type NotebookTarget,
  type RecoveryContribution,
  type RecoveryControl,
  type RetrySchedule,
  RetryTimer,
} from '@nteract-mcp/core';
import { inject, injectable } from 'inversify';

/** Hosted recovery: at once, then 1 s doubling to 30 s, at most 10 attempts in all. */
export const hostedRetrySchedule: RetrySchedule = Object.freeze({ initialMs: 1_000, maxMs: 30_000, maxAttempts: 10 });

/**
 * The hosted plugin's part of the child's recovery loop: a waiting hosted target (the handoff
 * of a restarted child) is tried at once when the loop starts, then on {@link hostedRetrySchedule}
 * while the attempts fail transiently, independent of local daemon events (and hosted sessions
 * are never part of incarnation reconciliation). When the attempts are used up it gives up: the
 * handoff's outcome becomes `failed` with the text the agent needs, and nothing is scheduled.
 * An explicit disconnect or an installed session ends the retries (the loop drops the target).
 */
@injectable()
export class HostedRejoinRetry implements RecoveryContribution {
  public readonly id = 'hosted.rejoin-retry';
  public readonly specificationVersion = 'v1';
  #control: RecoveryControl | undefined;
  #running: Promise<void> | undefined;
  readonly #timer: RetryTimer;

  public constructor(
    @inject(Clock) clock: Clock,
    @inject(Logger) private readonly logger: Logger,
  ) {
    this.#timer = new RetryTimer(clock, hostedRetrySchedule);
  }

  public handles(target: NotebookTarget): boolean {
    return target.kind === 'hosted-url';
  }

  public start(control: RecoveryControl): void {
    this.#control = control;
    this.attempt();
  }

  public stop(): void {
    this.#timer.reset();
    this.#control = undefined;
  }

  public async idle(): Promise<void> {
    while (this.#running) await this.#running;
  }

  private attempt(): void {
    const control = this.#control;
    if (!control || this.#running || !control.pending()) return;
    this.#running = this.run(control)
      .catch((error: unknown) => this.logger.error('hosted rejoin attempt failed', { error }))
      .finally(() => {
        this.#running = undefined;
      });
  }

  private async run(control: RecoveryControl): Promise<void> {
    let round: Awaited<ReturnType<RecoveryControl['recover']>>;
    try {
      round = await control.recover();
    } finally {
      control.setAttempting(false);
    }
    const waiting = control.pending();
    if (round.kind !== 'retry-later' || !waiting || this.#control !== control) {
      this.#timer.reset();
      return;
    }
    const delay = this.#timer.fail(() => this.attempt());
    if (delay !== undefined) {
      this.logger.info('hosted rejoin failed; retrying', { retryInMs: delay, reason: round.reason });
      return;
    }
    const url = describeNotebookTarget(waiting);
    control.giveUp(
      `Could not rejoin ${url} after ${hostedRetrySchedule.maxAttempts} attempts (last: ${round.reason}). ` +
        `Reconnect with: connect_notebook(url="${url}") once the server answers.`,
    );
    this.#timer.reset();
  }
}
