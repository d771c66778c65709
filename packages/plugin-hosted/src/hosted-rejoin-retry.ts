import {
  BoundedRetryRecovery,
  Clock,
  describeNotebookTarget,
  isHostedUrlTarget,
  Logger,
  type NotebookHandle,
  type RecoveryControl,
  type RetrySchedule,
  SessionSlot,
  type Subscription,
  sessionRecoveryTarget,
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
 * is lost (the server went away), that session (and any closed parked hosted session) is removed
 * from the slot, its URL kept, and recovery starts at once, then on the schedule. When the
 * attempts are used up, the agent is told how to reconnect by URL.
 */
@injectable()
export class HostedRejoinRetry extends BoundedRetryRecovery {
  #control: RecoveryControl | undefined;
  #slotSubscription: Subscription | undefined;
  #activeClose: Subscription | undefined;

  public constructor(
    @inject(Clock) clock: Clock,
    @inject(Logger) logger: Logger,
    @inject(HostedOptions) options: HostedOptions,
    @inject(SessionSlot) private readonly slot: SessionSlot,
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
    });
  }

  public override start(control: RecoveryControl): void {
    this.#control = control;
    this.#slotSubscription = this.slot.onDidChange(() => this.watchActive());
    this.watchActive();
    super.start(control);
  }

  public override stop(): void {
    this.#slotSubscription?.dispose();
    this.#slotSubscription = undefined;
    this.#activeClose?.dispose();
    this.#activeClose = undefined;
    this.#control = undefined;
    super.stop();
  }

  private watchActive(): void {
    this.#activeClose?.dispose();
    this.#activeClose = undefined;
    const active = this.slot.active;
    if (!active || !isHostedUrlTarget(active.target)) return;
    const { handle } = active;
    this.#activeClose = handle.onDidClose((reason) => {
      if (reason === 'closed') return;
      // Deferred: the slot is not changed from inside the handle's close.
      queueMicrotask(() => this.onLost(handle));
    });
  }

  private onLost(handle: NotebookHandle): void {
    const control = this.#control;
    if (!control) return;
    const removed = this.slot.removeWhere(
      (session) => isHostedUrlTarget(session.target) && session.handle.isClosed,
      'the connection to the Jupyter Server was lost',
    );
    if (removed.active?.handle !== handle) return;
    const target = sessionRecoveryTarget(removed.active);
    control.preserve(target);
    this.logger.info('lost the hosted notebook; rejoining', { notebook: describeNotebookTarget(target) });
    this.attempt();
  }
}
