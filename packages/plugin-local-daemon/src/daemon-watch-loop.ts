import {
  Clock,
  CoreError,
  type DaemonEvent,
  type DaemonIncarnation,
  type DaemonObservation,
  DaemonPort,
  describeNotebookTarget,
  isSameNotebookTarget,
  Logger,
  type NotebookSession,
  type NotebookTarget,
  type RecoveryContribution,
  type RecoveryControl,
  type RetrySchedule,
  retryDelay,
  SessionRecoveryState,
  SessionSlot,
  type SlotChange,
  type Subscription,
  sessionRecoveryTarget,
  type Timer,
} from '@nteract-mcp/core';
import { inject, injectable } from 'inversify';
import { DaemonStarter } from './daemon-starter.js';

/** Delay before the second attempt to restart a lost daemon; doubles per failed attempt up to {@link restartBackoffMaxMs}. */
export const restartBackoffInitialMs = 100;
export const restartBackoffMaxMs = 5_000;
const restartBackoff: RetrySchedule = { initialMs: restartBackoffInitialMs, maxMs: restartBackoffMaxMs };
/**
 * After a daemon announced its own shutdown (`runtimed stop`, a service manager's restart, an
 * upgrade), how long to wait for another daemon to come up before starting one ourselves.
 */
export const announcedShutdownGraceMs = 3_000;

/**
 * What wakes a round: a daemon event, the start, a scheduled retry, or the active session's
 * connection closing as a lost daemon's does (noticed even when the event stream was not connected).
 */
type Trigger =
  | DaemonEvent
  | { readonly kind: 'start' }
  | { readonly kind: 'retry' }
  | { readonly kind: 'connection-lost'; readonly reason: string };

/**
 * The local daemon's part of the child's recovery loop (a {@link RecoveryContribution} for saved
 * paths and notebook ids). Reconciles the child's sessions with the live daemon incarnation,
 * after the lifecycle note's five steps: (1) an event wakes it (lagged delivery too) and it asks
 * the daemon directly; (2) a failed identity query is not loss: without a `disconnected` event it
 * keeps the handles; (3) a version different from the startup baseline (the first live version
 * when the daemon was absent at start) asks the loop for the upgrade exit; (4) local sessions
 * (active and parked) bound to another or no live incarnation, or whose connection closed, are
 * removed — sessions whose handle is not bound to the daemon (hosted, a third party's remote
 * backend) are left alone — and the removed active session's best recovery target
 * (saved path first) is preserved; (5) with a live daemon it lets the loop rejoin the waiting
 * targets (the handoff first), checking that the incarnation is the same before and after the
 * connect (the `verify` of the attempt). A same-incarnation heartbeat changes nothing; removing
 * parked sessions does not schedule their recovery.
 *
 * Loss is noticed from a `disconnected` event, or from the active session's connection closing
 * as a lost daemon's does (then after a 100 ms grace, for a shutdown notice to arrive). While
 * something waits for recovery and the daemon is confirmed absent, it starts the daemon through
 * {@link DaemonStarter} (at once, then after 100 ms doubling to 5 s per failed attempt; a daemon
 * that answers unclearly meanwhile is asked again on the same back-off), unless starting is not
 * configured. After a shutdown the daemon announced (a deliberate stop: `runtimed stop`, a restart
 * by a service manager, an upgrade) it first waits {@link announcedShutdownGraceMs} for another
 * daemon to come up, then starts one (an upgraded install starts the new version, which the
 * version check then hands to a new child). Once a daemon answers again it re-establishes
 * the event subscription if the stream was lost, and rejoins without a tool call. Cancelling on
 * an explicit disconnect, superseding by an installed session and the handoff's reported outcome
 * are the core loop's.
 */
@injectable()
export class DaemonWatchLoop implements RecoveryContribution {
  public readonly id = 'local-daemon.watch-loop';
  public readonly specificationVersion = 'v1';
  #control: RecoveryControl | undefined;
  #subscription: Subscription | undefined;
  #slotSubscription: Subscription | undefined;
  /** Watches the active session's connection. */
  #activeClose: Subscription | undefined;
  #baseline: string | undefined;
  #running: Promise<void> | undefined;
  #queued: Trigger | undefined;
  /** Counts event subscriptions. */
  #generation = 0;
  /** The pending retry is the short grace after a connection loss, not a back-off after a failure. */
  #graceRetry = false;
  #exitRequested = false;
  /** A `disconnected` event came and no `connected` since: the event stream is down. */
  #streamDown = false;
  /** The last loss was announced by the daemon (a deliberate shutdown). */
  #shutdownAnnounced = false;
  /** The wait for another daemon after an announced shutdown is over. */
  #announcedGraceOver = false;
  #failedRestarts = 0;
  #restartTimer: Timer | undefined;
  /** A daemon start just succeeded: the attempt goes on into the next round's rejoin. */
  #rejoinDue = false;
  /** Targets of other kinds whose sessions were removed with a lost daemon (the latest few). */
  #removedTargets: NotebookTarget[] = [];

  public constructor(
    @inject(DaemonPort) private readonly daemon: DaemonPort,
    @inject(DaemonStarter) private readonly starter: DaemonStarter,
    @inject(SessionSlot) private readonly slot: SessionSlot,
    @inject(SessionRecoveryState) private readonly recovery: SessionRecoveryState,
    @inject(Clock) private readonly clock: Clock,
    @inject(Logger) private readonly logger: Logger,
  ) {}

  /** The version every later observation is compared with (`undefined` until a daemon answered). */
  public get baselineVersion(): string | undefined {
    return this.#baseline;
  }

  /**
   * Saved paths and notebook ids (the local daemon's targets), and the target of any session this
   * loop removed because it was bound to a lost daemon, whatever its kind (a third party's kind that
   * opens its notebooks through the daemon, e.g. a checked-out working copy): what the daemon's loss
   * took, the daemon's return brings back, at once rather than on a generic retry schedule.
   */
  public handles(target: NotebookTarget): boolean {
    if (target.kind === 'local-path' || target.kind === 'notebook-id') return true;
    return this.#removedTargets.some((removed) => isSameNotebookTarget(removed, target));
  }

  public start(control: RecoveryControl): void {
    this.#control = control;
    this.#slotSubscription = this.slot.onDidChange((change) => this.onSlotChange(change));
    this.watchActiveConnection();
    this.subscribe();
    this.wake({ kind: 'start' });
  }

  public stop(): void {
    this.#subscription?.dispose();
    this.#subscription = undefined;
    this.#slotSubscription?.dispose();
    this.#slotSubscription = undefined;
    this.#activeClose?.dispose();
    this.#activeClose = undefined;
    this.#restartTimer?.cancel();
    this.#restartTimer = undefined;
    this.#control = undefined;
  }

  /** Resolves once no reconciliation round is running or queued. */
  public async idle(): Promise<void> {
    while (this.#running) await this.#running;
  }

  private wake(trigger: Trigger): void {
    if (this.#running) {
      // One queued round is enough: it observes afresh. Keep a disconnect, it carries information.
      if (this.#queued?.kind !== 'disconnected') this.#queued = trigger;
      return;
    }
    this.#running = this.round(trigger)
      .finally(() => {
        // The attempt a waiting tool call waits for ends with the round, unless a start just
        // succeeded and the round that rejoins is next, or the wait for another daemon after an
        // announced shutdown is still on (it ends in a start or a rejoin).
        const awaitingDaemon = this.#shutdownAnnounced && !this.#announcedGraceOver && this.#restartTimer !== undefined;
        if (!this.#rejoinDue && !awaitingDaemon) this.#control?.setAttempting(false);
        this.#rejoinDue = false;
      })
      .catch((error: unknown) => this.logger.error('daemon watch round failed', { error }))
      .finally(() => {
        this.#running = undefined;
        const next = this.#queued;
        this.#queued = undefined;
        if (next && this.#control) this.wake(next);
      });
  }

  private async round(trigger: Trigger): Promise<void> {
    const control = this.#control;
    if (!control || this.#exitRequested) return;
    if (trigger.kind === 'disconnected') {
      this.#streamDown = true;
      this.#shutdownAnnounced = trigger.announced === true;
      this.#announcedGraceOver = false;
    } else if (trigger.kind === 'connected') {
      this.#streamDown = false;
      this.#shutdownAnnounced = false;
      this.#announcedGraceOver = false;
    }

    let observation: DaemonObservation;
    try {
      observation = await this.daemon.queryInfo();
    } catch (error) {
      if (!CoreError.is(error, 'daemonQueryFailed')) throw error;
      if (trigger.kind !== 'disconnected' && trigger.kind !== 'connection-lost') {
        this.logger.info('daemon identity query failed; keeping sessions until the loss is confirmed', {
          error: error.message,
        });
        // While a lost session waits, a daemon that does not answer clearly is asked again later.
        if (!this.slot.active && control.pending()) this.scheduleRetry();
        return;
      }
      observation = { kind: 'absent', reason: `disconnected, and the identity query failed: ${error.message}` };
    }
    const live = observation.kind === 'live' ? observation.info : undefined;
    if (live) {
      if (this.#baseline === undefined) {
        this.#baseline = live.version;
        this.recovery.setDaemonVersion(live.version);
      } else if (live.version !== this.#baseline) {
        this.#exitRequested = true;
        control.requestUpgradeExit(this.#baseline, live.version);
        return;
      }
    }
    this.reconcile(control, live?.incarnation);
    if (!live) {
      await this.restartDaemon(control, observation.kind === 'absent' ? observation.reason : 'absent', trigger);
      return;
    }
    this.#failedRestarts = 0;
    this.#restartTimer?.cancel();
    this.#restartTimer = undefined;
    if (this.#streamDown && trigger.kind !== 'connected') this.resubscribe();
    await control.recover((handle) => this.sameIncarnation(live.incarnation, handle.daemonIncarnation));
  }

  /** The attempt's check: the daemon is still the one the round observed, and the handle is bound to it. */
  private async sameIncarnation(observed: DaemonIncarnation, bound: DaemonIncarnation | undefined): Promise<boolean> {
    const after = await this.daemon.queryInfo();
    return after.kind === 'live' && after.info.incarnation.equals(observed) && observed.equals(bound);
  }

  private reconcile(control: RecoveryControl, liveIncarnation: DaemonIncarnation | undefined): void {
    const removed = this.slot.removeWhere(
      (session) =>
        isBoundToDaemon(session) &&
        (session.handle.isClosed || !liveIncarnation?.equals(session.handle.daemonIncarnation)),
      liveIncarnation ? 'bound to a daemon incarnation that is gone' : 'the daemon is gone',
    );
    if (removed.active) {
      const target = sessionRecoveryTarget(removed.active);
      if (!this.handles(target)) this.#removedTargets = [...this.#removedTargets.slice(-7), target];
      control.preserve(target);
      this.logger.info('removed the active session of a lost daemon incarnation', {
        notebookId: removed.active.handle.notebookId,
        recoverWith: describeNotebookTarget(target),
      });
    }
    if (removed.parked.length > 0) {
      this.logger.info('removed parked sessions of a lost daemon incarnation', { count: removed.parked.length });
    }
  }

  /**
   * The daemon is confirmed absent: start it when a local target waits for it and starting is
   * allowed. One attempt per call; a failure schedules the next round after the back-off, and
   * until then rounds do not attempt again.
   */
  private async restartDaemon(control: RecoveryControl, why: string, trigger: Trigger): Promise<void> {
    const waiting = control.pending();
    if (!waiting || !this.starter.enabled) return;
    if (this.#shutdownAnnounced && !this.#announcedGraceOver) {
      if (this.#restartTimer && this.#graceRetry) {
        // The daemon's own word arrived during the short grace after the connection loss.
        this.#restartTimer.cancel();
        this.#restartTimer = undefined;
      }
      if (!this.#restartTimer) {
        this.logger.info('the daemon announced its shutdown; starting one unless another comes up first', {
          recoverWith: describeNotebookTarget(waiting),
          inMs: announcedShutdownGraceMs,
        });
        this.#graceRetry = false;
        control.setAttempting(true);
        this.#restartTimer = this.clock.setTimer(announcedShutdownGraceMs, () => {
          this.#restartTimer = undefined;
          this.#announcedGraceOver = true;
          this.wake({ kind: 'retry' });
        });
      }
      return;
    }
    if (this.#restartTimer && this.#graceRetry && trigger.kind === 'disconnected') {
      this.#restartTimer.cancel();
      this.#restartTimer = undefined;
    }
    if (this.#restartTimer) return;
    if (trigger.kind === 'connection-lost') {
      // Only the notebook connection told us: give the daemon's own word (a shutdown notice on
      // the event stream, or the `disconnected` event) a moment to arrive before starting one.
      this.#graceRetry = true;
      this.#restartTimer = this.clock.setTimer(restartBackoffInitialMs, () => {
        this.#restartTimer = undefined;
        this.wake({ kind: 'retry' });
      });
      return;
    }
    this.logger.info('the daemon is gone; starting it to rejoin', {
      recoverWith: describeNotebookTarget(waiting),
      why,
      attempt: this.#failedRestarts + 1,
    });
    control.setAttempting(true);
    try {
      await this.starter.start();
    } catch (error) {
      const delay = this.scheduleRetry();
      this.logger.warn('starting the daemon failed; retrying', {
        retryInMs: delay,
        error: error instanceof Error ? error.message : String(error),
      });
      return;
    }
    this.#failedRestarts = 0;
    this.#rejoinDue = true;
    this.resubscribe();
    this.wake({ kind: 'retry' });
  }

  /** The next round after the back-off (100 ms doubling to 5 s per failure in a row); returns the delay. */
  private scheduleRetry(): number {
    this.#failedRestarts += 1;
    const delay = retryDelay(restartBackoff, this.#failedRestarts) ?? restartBackoffMaxMs;
    if (this.#restartTimer) return delay;
    this.#graceRetry = false;
    this.#restartTimer = this.clock.setTimer(delay, () => {
      this.#restartTimer = undefined;
      this.wake({ kind: 'retry' });
    });
    return delay;
  }

  /** A fresh event subscription (the old stream may be in a long reconnect back-off). */
  private resubscribe(): void {
    if (!this.#control) return;
    this.#subscription?.dispose();
    this.subscribe();
    this.#streamDown = false;
    // A loss the old stream reported and that waits in the queue is already handled.
    if (this.#queued?.kind === 'disconnected') this.#queued = { kind: 'retry' };
  }

  /** Subscribes to the daemon events; events of an older subscription are ignored. */
  private subscribe(): void {
    this.#generation += 1;
    const generation = this.#generation;
    this.#subscription = this.daemon.subscribe((event) => {
      if (generation === this.#generation) this.wake(event);
    });
  }

  /** A lost connection of the active session wakes a round, as a `disconnected` event would. */
  private watchActiveConnection(): void {
    this.#activeClose?.dispose();
    this.#activeClose = undefined;
    const active = this.slot.active;
    if (!active || !isBoundToDaemon(active)) return;
    const { handle } = active;
    this.#activeClose = handle.onDidClose((reason) => {
      if (reason !== 'disconnected' || this.slot.active?.handle !== handle) return;
      this.wake({ kind: 'connection-lost', reason: `the connection to notebook ${handle.notebookId} was lost` });
    });
  }

  private onSlotChange(change: SlotChange): void {
    if (this.#control && (change === 'installed' || change === 'removed')) this.watchActiveConnection();
  }
}

/**
 * Whether the session's handle was opened through the local daemon (it carries the daemon life it
 * is bound to): only those are reconciled with the daemon. A session of any other backend (hosted,
 * a third party's remote notebooks) never depends on this daemon, whatever its target's kind.
 */
function isBoundToDaemon(session: NotebookSession): boolean {
  return session.handle.daemonIncarnation !== undefined;
}
