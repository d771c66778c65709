import { inject, injectable, named } from 'inversify';
import { NotebookTargetResolver } from '../contributions/notebook-target-resolver.js';
import {
  RecoveryContribution,
  type RecoveryControl,
  type RecoveryRound,
} from '../contributions/recovery-contribution.js';
import { ContributionProvider } from '../di/contribution-provider.js';
import { CoreError } from '../errors/core-error.js';
import { type ChildHandoff, childExitCodes, rejoinTargetWithoutCredentials } from '../handoff/handoff-contract.js';
import { describeNotebookTarget, type NotebookTarget } from '../notebook-target/notebook-target.js';
import { Clock } from '../ports/clock.js';
import { Logger } from '../ports/logger.js';
import type { NotebookHandle, Subscription } from '../ports/notebook-handle.js';
import { isSessionFor, type NotebookSession } from '../session/notebook-session.js';
import { RejoinCoordinator, type RejoinResult } from '../session/rejoin-coordinator.js';
import { notRejoinedMessage } from '../session/session-drop-info.js';
import { SessionRecoveryState } from '../session/session-recovery-state.js';
import { SessionSlot, type SlotChange } from '../session/session-slot.js';
import { BoundedRetryRecovery } from './bounded-retry-recovery.js';

/** The notebook the proxy handed to this child (`handoffEnvironment.rejoinNotebook`), resolved. */
export interface RecoveryHandoff {
  /** The value as received (reported back, without credentials, in the session report's `rejoin.requested`). */
  readonly requested: string;
  /** What it resolved to; absent when it is not a usable target (see `problem`). */
  readonly target?: NotebookTarget;
  /** Why it could not be resolved, when `target` is absent. */
  readonly problem?: string;
}

export interface RecoveryLoopOptions {
  /** The proxy's handoff, tried first; its outcome is reported through {@link SessionRecoveryState}. */
  readonly handoff?: RecoveryHandoff;
  /** The peer label for rejoined sessions. */
  readonly peerLabel: () => string;
  /** The child must stop with `code` (the upgrade handoff exit code when the daemon's version changed). */
  readonly exit: (code: number, why: string) => void;
}

/** What the child runtime gives the recovery loop when it starts it. */
export interface ChildLifecycleContext {
  /** What the proxy handed over in the environment (`handoffFromEnvironment`). */
  readonly handoff: ChildHandoff;
  /** The child's working directory; a relative handoff path resolves against it. */
  readonly cwd: string;
  /** The label for connections the child makes on its own: the client's once it initialized, else the proxy's. */
  peerLabel(): string;
  /** Stops the child with `code` (the first request wins; later ones are ignored). */
  requestExit(code: number, why: string): void;
}

/** A target to bring back, valid only under the intent epoch it was recorded in. */
interface PendingRecovery {
  readonly target: NotebookTarget;
  readonly epoch: number;
}

/**
 * The child's recovery loop, the part every backend shares: the handoff first (the target the
 * proxy handed over at start), then the preserved target of a removed active session, each
 * brought back through the {@link RejoinCoordinator} by the first {@link RecoveryContribution}
 * that handles it (core's own bounded retry when none does but a backend of its kind is loaded); the exit with {@link childExitCodes}.upgradeHandoff when a contribution sees
 * the daemon's version change. What wakes an attempt, and the checks only a backend can make,
 * are the contributions' (daemon events and incarnation reconciliation for the local daemon, a
 * bounded retry timer for hosted servers).
 *
 * Guarantees: an explicit disconnect (a new intent epoch) cancels every waiting recovery at
 * once, and a session a tool installs supersedes them; the handoff's reported outcome moves from
 * `pending` exactly once (`rejoined` when the handed notebook is the one installed, else `failed`
 * with the text the agent would get); a handoff no contribution handles fails at start.
 * Started by the `ChildRuntime` ({@link RecoveryLoop.onStart}), so with a handoff the child
 * serves once the first attempt is over.
 */
@injectable()
export class RecoveryLoop {
  #options: RecoveryLoopOptions | undefined;
  #handoff: PendingRecovery | undefined;
  #preserved: PendingRecovery | undefined;
  #slotSubscription: Subscription | undefined;
  #started: readonly RecoveryContribution[] = [];
  readonly #attempting = new Set<RecoveryContribution>();
  #exitRequested = false;

  public constructor(
    @inject(ContributionProvider)
    @named(RecoveryContribution)
    private readonly contributions: ContributionProvider<RecoveryContribution>,
    @inject(SessionSlot) private readonly slot: SessionSlot,
    @inject(RejoinCoordinator) private readonly coordinator: RejoinCoordinator,
    @inject(SessionRecoveryState) private readonly recovery: SessionRecoveryState,
    @inject(NotebookTargetResolver) private readonly resolver: NotebookTargetResolver,
    @inject(Logger) private readonly logger: Logger,
    @inject(Clock) private readonly clock: Clock,
  ) {}

  /** The target kept for recovery (the handoff, else the removed active session's), if any. */
  public get pendingRecovery(): NotebookTarget | undefined {
    this.dropCancelled();
    return (this.#handoff ?? this.#preserved)?.target;
  }

  /** Resolves the handoff from the context and starts; with a handoff, ready once its first attempt is over. */
  public onStart(context: ChildLifecycleContext): Promise<void> | undefined {
    const handoff = this.resolveHandoff(context.handoff.rejoinNotebook, context.cwd);
    this.start({ handoff, peerLabel: () => context.peerLabel(), exit: (code, why) => context.requestExit(code, why) });
    return handoff ? this.idle() : undefined;
  }

  public onStop(): void {
    this.stop();
  }

  public start(options: RecoveryLoopOptions): void {
    if (this.#options) return;
    this.#options = options;
    const contributed = this.contributions.getContributions();
    this.recovery.setWatched(contributed.length > 0);
    const contributions = this.withFallback(contributed);
    const handoff = options.handoff;
    if (handoff) {
      this.recovery.requestRejoin(rejoinTargetWithoutCredentials(handoff.requested));
      if (!handoff.target) {
        this.recovery.settleRejoin(
          'failed',
          `The notebook to rejoin is not a usable target (${handoff.problem ?? 'unrecognised'}). Call connect_notebook or create_notebook.`,
        );
      } else if (!contributions.some((contribution) => contribution.handles(handoff.target as NotebookTarget))) {
        this.recovery.settleRejoin(
          'failed',
          `No loaded plugin brings back ${handoff.target.kind} targets, so ${describeNotebookTarget(handoff.target)} was not rejoined. Call connect_notebook or create_notebook.`,
        );
      } else this.#handoff = { target: handoff.target, epoch: this.slot.intentEpoch };
    }
    this.publishRecovery();
    this.#slotSubscription = this.slot.onDidChange((change) => this.onSlotChange(change));
    this.#started = contributions;
    for (const contribution of contributions) contribution.start(this.controlFor(contribution));
  }

  public stop(): void {
    if (!this.#options) return;
    this.recovery.setWatched(false);
    for (const contribution of [...this.#started].reverse()) contribution.stop();
    this.#started = [];
    this.#slotSubscription?.dispose();
    this.#slotSubscription = undefined;
    this.#options = undefined;
  }

  /**
   * The contributions plus core's own bounded retry for every target that none of them handles
   * but core can rejoin (a third-party kind: its backend reopens it, and it has no recovery of its
   * own), which also notices such a session lost (its handle closed by itself) and brings it back.
   */
  private withFallback(contributed: readonly RecoveryContribution[]): readonly RecoveryContribution[] {
    const fallback = new BoundedRetryRecovery(this.clock, this.logger.child('core:BoundedRetryRecovery'), {
      id: 'core.bounded-retry',
      handles: (target) =>
        !contributed.some((contribution) => contribution.handles(target)) && this.coordinator.canRejoin(target),
      giveUpReason: (target, attempts, last) =>
        `Could not rejoin ${describeNotebookTarget(target)} after ${attempts} attempts (last: ${last}). Call connect_notebook to open it again.`,
      lossWatch: { slot: this.slot, reason: 'the connection to the notebook was lost' },
    });
    return [...contributed, fallback];
  }

  /** Resolves once no contribution has an attempt running or queued. */
  public async idle(): Promise<void> {
    await Promise.all(this.#started.map((contribution) => contribution.idle()));
  }

  private controlFor(contribution: RecoveryContribution): RecoveryControl {
    return {
      peerLabel: () => this.#options?.peerLabel() ?? '',
      pending: () => this.pendingFor(contribution)?.target,
      preserve: (target) => {
        this.#preserved = { target, epoch: this.slot.intentEpoch };
        this.publishRecovery();
      },
      recover: (verify) => this.recover(contribution, verify),
      giveUp: (reason) => this.giveUp(contribution, reason),
      setAttempting: (attempting) => {
        if (attempting) this.#attempting.add(contribution);
        else this.#attempting.delete(contribution);
        this.recovery.setAttempting(this.#attempting.size > 0);
      },
      requestUpgradeExit: (from, to) => {
        const options = this.#options;
        if (!options || this.#exitRequested) return;
        this.#exitRequested = true;
        this.logger.info('daemon version changed; handing off to a new child', { from, to });
        options.exit(childExitCodes.upgradeHandoff, `daemon version changed from ${from} to ${to}`);
      },
    };
  }

  /** The first waiting target `contribution` handles: the handoff, then the preserved one. */
  private pendingFor(contribution: RecoveryContribution): PendingRecovery | undefined {
    this.dropCancelled();
    return [this.#handoff, this.#preserved].find((pending) => pending && contribution.handles(pending.target));
  }

  private async recover(
    contribution: RecoveryContribution,
    verify: ((handle: NotebookHandle) => Promise<boolean>) | undefined,
  ): Promise<RecoveryRound> {
    const options = this.#options;
    if (!options) return { kind: 'idle' };
    this.dropCancelled();
    const active = this.slot.active;
    if (active) {
      this.supersede(active);
      return { kind: 'idle' };
    }
    let tried = false;
    for (const which of ['handoff', 'preserved'] as const) {
      const pending = which === 'handoff' ? this.#handoff : this.#preserved;
      if (!pending || !contribution.handles(pending.target)) continue;
      const { target } = pending;
      tried = true;
      this.#attempting.add(contribution);
      this.recovery.setAttempting(true);
      const result = await this.coordinator.rejoin(target, { peerLabel: options.peerLabel(), verify });
      this.logger.info('rejoin attempt', {
        contribution: contribution.id,
        target: describeNotebookTarget(target),
        result: result.kind,
      });
      if (result.kind === 'retry-later') {
        if (which === 'handoff') this.recovery.noteRejoinRetry(result.reason);
        return result;
      }
      if (which === 'handoff') {
        this.settleHandoff(target, result);
        if (this.#handoff === pending) this.#handoff = undefined;
      } else if (this.#preserved === pending) this.#preserved = undefined;
      if (result.kind === 'published' || result.kind === 'not-published') {
        this.#handoff = undefined;
        this.#preserved = undefined;
      }
      this.publishRecovery();
      if (result.kind !== 'evicted') return { kind: 'settled' };
    }
    return { kind: tried ? 'settled' : 'idle' };
  }

  private giveUp(contribution: RecoveryContribution, reason: string): void {
    let changed = false;
    if (this.#handoff && contribution.handles(this.#handoff.target)) {
      this.#handoff = undefined;
      this.recovery.settleRejoin('failed', reason);
      changed = true;
    }
    if (this.#preserved && contribution.handles(this.#preserved.target)) {
      this.#preserved = undefined;
      changed = true;
    }
    if (changed) {
      this.slot.noteDropDetail(reason);
      this.logger.warn('gave up an automatic rejoin', { contribution: contribution.id, reason });
      this.publishRecovery();
    }
  }

  private settleHandoff(target: NotebookTarget, result: RejoinResult): void {
    const active = this.slot.active;
    if (result.kind === 'published' || (active && isSessionFor(active, target))) {
      // A rejoin on a new kernel says so in the report (the kernel state did not come back).
      this.recovery.settleRejoin(
        'rejoined',
        (result.kind === 'published' ? result.session : active)?.handle.kernelNotice,
      );
      return;
    }
    this.recovery.settleRejoin('failed', notRejoinedMessage(target, this.slot.lastDrop, active?.handle.notebookId));
  }

  /** A session is installed: it decides the handoff's fate, and nothing is recovered over it. */
  private supersede(active: NotebookSession): void {
    const handoff = this.#handoff;
    if (handoff) {
      if (isSessionFor(active, handoff.target)) this.recovery.settleRejoin('rejoined', active.handle.kernelNotice);
      else {
        this.recovery.settleRejoin(
          'failed',
          notRejoinedMessage(handoff.target, this.slot.lastDrop, active.handle.notebookId),
        );
      }
    }
    this.#handoff = undefined;
    this.#preserved = undefined;
    this.publishRecovery();
  }

  private onSlotChange(change: SlotChange): void {
    if (!this.#options) return;
    const active = this.slot.active;
    if (change === 'installed' && active) this.supersede(active);
    else if (change === 'intent' || change === 'removed') this.dropCancelled();
  }

  /** Forgets recoveries an explicit disconnect cancelled (a newer intent epoch). */
  private dropCancelled(): void {
    const epoch = this.slot.intentEpoch;
    let changed = false;
    const handoff = this.#handoff;
    if (handoff && handoff.epoch !== epoch) {
      this.#handoff = undefined;
      changed = true;
      this.recovery.settleRejoin(
        'failed',
        notRejoinedMessage(handoff.target, this.slot.lastDrop, this.slot.active?.handle.notebookId),
      );
    }
    if (this.#preserved && this.#preserved.epoch !== epoch) {
      this.#preserved = undefined;
      changed = true;
    }
    if (changed) {
      this.logger.info('an explicit disconnect cancelled the automatic rejoin');
      this.publishRecovery();
    }
  }

  private publishRecovery(): void {
    const pending = this.#handoff ?? this.#preserved;
    this.recovery.setRecovering(pending?.target, pending?.epoch ?? this.slot.intentEpoch);
  }

  /** The handoff value as a target, or why it is not one. */
  private resolveHandoff(raw: string | undefined, cwd: string): RecoveryHandoff | undefined {
    if (!raw?.trim()) return undefined;
    try {
      return { requested: raw, target: this.resolver.resolve(raw, { cwd }) };
    } catch (error) {
      const problem = CoreError.is(error) ? error.message : String(error);
      this.logger.warn('ignoring an unusable rejoin target from the proxy', { error: problem });
      return { requested: raw, problem };
    }
  }
}
