import {
  CoreError,
  type DaemonEvent,
  type DaemonIncarnation,
  type DaemonObservation,
  DaemonPort,
  describeNotebookTarget,
  isLocalSession,
  Logger,
  type NotebookTarget,
  RejoinCoordinator,
  SessionSlot,
  type Subscription,
  sessionRecoveryTarget,
} from '@nteract-mcp/core';
import { inject, injectable } from 'inversify';

export interface WatchLoopOptions {
  /** The peer label for rejoined sessions. */
  readonly peerLabel: () => string;
  /** The proxy's handoff target (`NTERACT_MCP_REJOIN_NOTEBOOK`), tried first. */
  readonly handoffTarget?: NotebookTarget;
  /** The daemon's version differs from the startup baseline: the child must close its transport and exit 75. */
  readonly onVersionChange: (baseline: string, live: string) => void;
}

type Trigger = DaemonEvent | { readonly kind: 'start' };

/**
 * Reconciles the child's sessions with the live daemon incarnation, after the lifecycle note's
 * five steps: (1) an event wakes it (lagged delivery too) and it asks the daemon directly;
 * (2) a failed identity query is not loss: without a `disconnected` event it keeps the handles;
 * (3) a version different from the startup baseline (the first live version when the daemon was
 * absent at start) asks for exit 75; (4) local sessions (active and parked) bound to another or no
 * live incarnation, or whose connection closed, are removed — hosted ones are left alone — and the
 * removed active session's best recovery target (saved path first) is kept; (5) with a live
 * daemon and an empty slot it rejoins the handoff target, then the kept one, checking the
 * incarnation before and after. A same-incarnation heartbeat changes nothing; removing parked
 * sessions does not schedule their recovery.
 */
@injectable()
export class DaemonWatchLoop {
  #options: WatchLoopOptions | undefined;
  #subscription: Subscription | undefined;
  #baseline: string | undefined;
  #preserved: NotebookTarget | undefined;
  #handoff: NotebookTarget | undefined;
  #running: Promise<void> | undefined;
  #queued: Trigger | undefined;
  #exitRequested = false;

  public constructor(
    @inject(DaemonPort) private readonly daemon: DaemonPort,
    @inject(SessionSlot) private readonly slot: SessionSlot,
    @inject(RejoinCoordinator) private readonly coordinator: RejoinCoordinator,
    @inject(Logger) private readonly logger: Logger,
  ) {}

  /** The version every later observation is compared with (`undefined` until a daemon answered). */
  public get baselineVersion(): string | undefined {
    return this.#baseline;
  }

  /** The target kept for recovery after the active session was removed, if any. */
  public get pendingRecovery(): NotebookTarget | undefined {
    return this.#handoff ?? this.#preserved;
  }

  public start(options: WatchLoopOptions): void {
    this.#options = options;
    this.#handoff = options.handoffTarget;
    this.#subscription = this.daemon.subscribe((event) => this.wake(event));
    this.wake({ kind: 'start' });
  }

  public stop(): void {
    this.#subscription?.dispose();
    this.#subscription = undefined;
    this.#options = undefined;
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
      .catch((error: unknown) => this.logger.error('daemon watch round failed', { error }))
      .finally(() => {
        this.#running = undefined;
        const next = this.#queued;
        this.#queued = undefined;
        if (next && this.#options) this.wake(next);
      });
  }

  private async round(trigger: Trigger): Promise<void> {
    const options = this.#options;
    if (!options || this.#exitRequested) return;
    let observation: DaemonObservation;
    try {
      observation = await this.daemon.queryInfo();
    } catch (error) {
      if (!CoreError.is(error, 'daemonQueryFailed')) throw error;
      if (trigger.kind !== 'disconnected') {
        this.logger.info('daemon identity query failed; keeping sessions until the loss is confirmed', {
          error: error.message,
        });
        return;
      }
      observation = { kind: 'absent', reason: `disconnected, and the identity query failed: ${error.message}` };
    }
    const live = observation.kind === 'live' ? observation.info : undefined;
    if (live) {
      if (this.#baseline === undefined) this.#baseline = live.version;
      else if (live.version !== this.#baseline) {
        this.#exitRequested = true;
        this.logger.info('daemon version changed; handing off to a new child', {
          from: this.#baseline,
          to: live.version,
        });
        options.onVersionChange(this.#baseline, live.version);
        return;
      }
    }
    this.reconcile(live?.incarnation);
    if (!live) return;
    if (this.slot.active) {
      this.#handoff = undefined;
      return;
    }
    await this.recover(live.incarnation, options);
  }

  private reconcile(liveIncarnation: DaemonIncarnation | undefined): void {
    const removed = this.slot.removeWhere(
      (session) =>
        isLocalSession(session) &&
        (session.handle.isClosed || !liveIncarnation?.equals(session.handle.daemonIncarnation)),
      liveIncarnation ? 'bound to a daemon incarnation that is gone' : 'the daemon is gone',
    );
    if (removed.active) {
      this.#preserved = sessionRecoveryTarget(removed.active);
      this.logger.info('removed the active session of a lost daemon incarnation', {
        notebookId: removed.active.handle.notebookId,
        recoverWith: describeNotebookTarget(this.#preserved),
      });
    }
    if (removed.parked.length > 0) {
      this.logger.info('removed parked sessions of a lost daemon incarnation', { count: removed.parked.length });
    }
  }

  private async recover(incarnation: DaemonIncarnation, options: WatchLoopOptions): Promise<void> {
    for (const which of ['handoff', 'preserved'] as const) {
      const target = which === 'handoff' ? this.#handoff : this.#preserved;
      if (!target || target.kind === 'hosted-url') continue;
      const result = await this.coordinator.rejoin(target, {
        peerLabel: options.peerLabel(),
        expectedIncarnation: incarnation,
        verify: async (handle) => {
          const after = await this.daemon.queryInfo();
          return (
            after.kind === 'live' &&
            after.info.incarnation.equals(incarnation) &&
            incarnation.equals(handle.daemonIncarnation)
          );
        },
      });
      this.logger.info('rejoin attempt', { target: describeNotebookTarget(target), result: result.kind });
      if (result.kind === 'retry-later') return;
      if (which === 'handoff') this.#handoff = undefined;
      else this.#preserved = undefined;
      if (result.kind === 'published' || result.kind === 'not-published') {
        this.#handoff = undefined;
        this.#preserved = undefined;
        return;
      }
    }
  }
}
