import type { RecoveryContribution, RecoveryControl, RecoveryRound } from '../contributions/recovery-contribution.js';
import { describeNotebookTarget, type NotebookTarget } from '../notebook-target/notebook-target.js';
import type { Clock } from '../ports/clock.js';
import type { Logger } from '../ports/logger.js';
import type { NotebookHandle, Subscription } from '../ports/notebook-handle.js';
import { sessionRecoveryTarget } from '../session/notebook-session.js';
import type { SessionSlot } from '../session/session-slot.js';
import { type RetrySchedule, RetryTimer } from './retry-timer.js';

/** At once, then 1 s doubling to 30 s, at most 10 attempts in all. */
export const defaultRecoveryRetrySchedule: RetrySchedule = Object.freeze({
  initialMs: 1_000,
  maxMs: 30_000,
  maxAttempts: 10,
});

export interface BoundedRetryRecoveryOptions {
  /** The contribution id (dotted). */
  readonly id: string;
  /** Which waiting targets this recovery brings back. */
  readonly handles: (target: NotebookTarget) => boolean;
  /** Default {@link defaultRecoveryRetrySchedule}. */
  readonly schedule?: RetrySchedule;
  /** What the agent is told when the attempts are used up (the rejoin's `failed` reason). */
  readonly giveUpReason: (target: NotebookTarget, attempts: number, lastReason: string) => string;
  /**
   * Notices a lost session of the targets it handles: when the active one's handle closes by
   * itself (any reason but `closed`, which is ours), the closed sessions of those targets leave
   * `slot` (saying `reason`), the active one's target is kept and tried at once, then on the
   * schedule. Absent: only a handoff or a target another part preserved is tried.
   */
  readonly lossWatch?: { readonly slot: SessionSlot; readonly reason: string };
}

/**
 * The recovery every backend can have without events of its own: a waiting target it handles
 * (the handoff of a restarted child, or a lost active session's, noticed by its
 * {@link BoundedRetryRecoveryOptions.lossWatch}) is tried at once when the loop starts or the
 * loss is noticed, then on the retry schedule while the attempts fail transiently. When the attempts are
 * used up it gives up: the handoff's outcome becomes `failed` with `giveUpReason`, and nothing is
 * scheduled any more. An explicit disconnect or an installed session ends the retries (the loop
 * drops the target).
 * Guarantees: one attempt at a time; every delay on the {@link Clock}.
 * Does not guarantee: that the target ever comes back (a bounded number of attempts).
 */
export class BoundedRetryRecovery implements RecoveryContribution {
  public readonly specificationVersion = 'v1';
  public readonly id: string;
  readonly #timer: RetryTimer;
  readonly #schedule: RetrySchedule;
  #control: RecoveryControl | undefined;
  #running: Promise<void> | undefined;
  #slotChanges: Subscription | undefined;
  #activeClose: Subscription | undefined;

  public constructor(
    clock: Clock,
    protected readonly logger: Logger,
    private readonly options: BoundedRetryRecoveryOptions,
  ) {
    this.id = options.id;
    this.#schedule = options.schedule ?? defaultRecoveryRetrySchedule;
    this.#timer = new RetryTimer(clock, this.#schedule);
  }

  public handles(target: NotebookTarget): boolean {
    return this.options.handles(target);
  }

  public start(control: RecoveryControl): void {
    this.#control = control;
    const watch = this.options.lossWatch;
    if (watch) {
      this.#slotChanges = watch.slot.onDidChange(() => this.watchActive(watch.slot));
      this.watchActive(watch.slot);
    }
    this.attempt();
  }

  public stop(): void {
    this.#slotChanges?.dispose();
    this.#slotChanges = undefined;
    this.#activeClose?.dispose();
    this.#activeClose = undefined;
    this.#timer.reset();
    this.#control = undefined;
  }

  public async idle(): Promise<void> {
    while (this.#running) await this.#running;
  }

  /** Tries the waiting targets now, unless an attempt is running or none waits (a subclass calls it when it notices a loss). */
  protected attempt(): void {
    const control = this.#control;
    if (!control || this.#running || !control.pending()) return;
    this.#running = this.run(control)
      .catch((error: unknown) => this.logger.error('rejoin attempt failed', { recovery: this.id, error }))
      .finally(() => {
        this.#running = undefined;
      });
  }

  /** Follows the close of the active session's handle when this recovery handles its target. */
  private watchActive(slot: SessionSlot): void {
    this.#activeClose?.dispose();
    this.#activeClose = undefined;
    const active = slot.active;
    if (!active || !this.handles(active.target)) return;
    const { handle } = active;
    this.#activeClose = handle.onDidClose((reason) => {
      if (reason === 'closed') return;
      // Deferred: the slot is not changed from inside the handle's close.
      queueMicrotask(() => this.onLost(slot, handle));
    });
  }

  private onLost(slot: SessionSlot, handle: NotebookHandle): void {
    const control = this.#control;
    const reason = this.options.lossWatch?.reason;
    if (!control || reason === undefined) return;
    const removed = slot.removeWhere((session) => this.handles(session.target) && session.handle.isClosed, reason);
    if (removed.active?.handle !== handle) return;
    const target = sessionRecoveryTarget(removed.active);
    control.preserve(target);
    this.logger.info('lost the notebook; rejoining', { recovery: this.id, notebook: describeNotebookTarget(target) });
    this.attempt();
  }

  private async run(control: RecoveryControl): Promise<void> {
    let round: RecoveryRound;
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
      this.logger.info('rejoin failed; retrying', { recovery: this.id, retryInMs: delay, reason: round.reason });
      return;
    }
    control.giveUp(this.options.giveUpReason(waiting, this.#schedule.maxAttempts ?? 0, round.reason));
    this.#timer.reset();
  }
}
