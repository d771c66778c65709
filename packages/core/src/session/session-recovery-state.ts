import { inject, injectable } from 'inversify';
import type { RejoinReport, SessionReport } from '../handoff/session-report.js';
import { describeNotebookTarget, type NotebookTarget } from '../notebook-target/notebook-target.js';
import { Clock } from '../ports/clock.js';
import { type NotebookSession, sessionRecoveryTarget } from './notebook-session.js';
import { SessionSlot } from './session-slot.js';

interface Recovering {
  readonly target: NotebookTarget;
  /** The intent epoch the recovery belongs to: an explicit disconnect since then cancels it. */
  readonly epoch: number;
}

/**
 * What the child is bringing back, as its recovery owner (the `RecoveryLoop`) reports it, and
 * the fate of the rejoin it was asked for at start (`handoffEnvironment.rejoinNotebook`). Read by the
 * child server to build the {@link SessionReport} of every tool result.
 *
 * Guarantees: a recovery target counts only while the slot's intent epoch is the one it was
 * recorded under (an explicit disconnect makes it `null` at once, before any watch round); the
 * rejoin outcome moves only from `pending`, once, and only when its owner says so (it is never
 * inferred here); {@link SessionRecoveryState.whenRecovered} waits only while an attempt is
 * actually running (a daemon start or a rejoin), never longer than asked. No I/O.
 */
@injectable()
export class SessionRecoveryState {
  #recovering: Recovering | undefined;
  #rejoin: RejoinReport | undefined;
  #attempting = false;
  #daemonVersion: string | undefined;
  #watched = false;
  readonly #waiters = new Set<() => void>();

  public constructor(
    @inject(SessionSlot) private readonly slot: SessionSlot,
    @inject(Clock) private readonly clock: Clock,
  ) {
    slot.onDidChange(() => this.notify());
  }

  /** The slot is empty, a target is being recovered, and an attempt (daemon start or rejoin) is running. */
  public get isRecovering(): boolean {
    return this.#attempting && this.slot.active === undefined && this.recovering !== undefined;
  }

  /** The target being recovered while the slot is empty, unless an explicit disconnect cancelled it. */
  public get recovering(): NotebookTarget | undefined {
    const recovering = this.#recovering;
    return recovering && recovering.epoch === this.slot.intentEpoch ? recovering.target : undefined;
  }

  /** The rejoin asked for at start and how it went, if one was asked for. */
  public get rejoin(): RejoinReport | undefined {
    return this.#rejoin;
  }

  /** Records the target the owner is recovering (or `undefined`: nothing), under the given intent epoch. */
  public setRecovering(target: NotebookTarget | undefined, epoch: number): void {
    this.#recovering = target ? { target, epoch } : undefined;
    this.notify();
  }

  /** The owner says whether an attempt to bring the target back is running now. */
  public setAttempting(attempting: boolean): void {
    this.#attempting = attempting;
    this.notify();
  }

  /**
   * Resolves at once unless {@link SessionRecoveryState.isRecovering}; else when that ends (the
   * session is back, the recovery was given up or cancelled, or the attempt stopped), after
   * `timeoutMs`, or when `signal` aborts, whichever comes first. Never rejects.
   */
  public whenRecovered(timeoutMs: number, signal?: AbortSignal): Promise<void> {
    if (!this.isRecovering || signal?.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = this.clock.setTimer(timeoutMs, () => done());
      const check = (): void => {
        if (!this.isRecovering) done();
      };
      const done = (): void => {
        this.#waiters.delete(check);
        timer.cancel();
        signal?.removeEventListener('abort', done);
        resolve();
      };
      this.#waiters.add(check);
      signal?.addEventListener('abort', done, { once: true });
    });
  }

  /**
   * Waits until a session other than `lost` is active (the background rejoin after a daemon loss
   * installed one: `true`), the agent's intent changed (an explicit connect or disconnect), the
   * call was cancelled, or `timeoutMs` passed (`false` for all three). Driven by slot changes.
   */
  public whenReplaced(lost: NotebookSession, timeoutMs: number, signal?: AbortSignal): Promise<boolean> {
    const epoch = this.slot.intentEpoch;
    const replaced = (): boolean => this.slot.active !== undefined && this.slot.active !== lost;
    if (replaced()) return Promise.resolve(true);
    if (signal?.aborted) return Promise.resolve(false);
    return new Promise((resolve) => {
      const timer = this.clock.setTimer(timeoutMs, () => done(false));
      const check = (): void => {
        if (replaced()) done(true);
        else if (this.slot.intentEpoch !== epoch) done(false);
      };
      const abort = (): void => done(false);
      const done = (result: boolean): void => {
        this.#waiters.delete(check);
        timer.cancel();
        signal?.removeEventListener('abort', abort);
        resolve(result);
      };
      this.#waiters.add(check);
      signal?.addEventListener('abort', abort, { once: true });
    });
  }

  /** The child was handed `requested` to rejoin: the outcome is `pending` until settled. Once only. */
  public requestRejoin(requested: string): void {
    if (this.#rejoin) return;
    this.#rejoin = { requested, outcome: 'pending' };
  }

  /** A pending rejoin's attempt failed and will be retried: `reason` says why, until the next one settles it. */
  public noteRejoinRetry(reason: string): void {
    const rejoin = this.#rejoin;
    if (rejoin?.outcome !== 'pending') return;
    this.#rejoin = { requested: rejoin.requested, outcome: 'pending', reason };
  }

  /** Settles a pending rejoin; returns whether it was pending. A failure carries the text the agent would be told. */
  public settleRejoin(outcome: 'rejoined', note?: string): boolean;
  public settleRejoin(outcome: 'failed', reason: string): boolean;
  public settleRejoin(outcome: 'rejoined' | 'failed', text?: string): boolean {
    const rejoin = this.#rejoin;
    if (rejoin?.outcome !== 'pending') return false;
    this.#rejoin =
      outcome === 'failed'
        ? { requested: rejoin.requested, outcome, reason: text ?? 'not rejoined' }
        : { requested: rejoin.requested, outcome, ...(text === undefined ? {} : { note: text }) };
    return true;
  }

  /** Whether the recovery loop runs with a contribution that brings lost sessions back: only then is a lost one worth waiting for. */
  public get watched(): boolean {
    return this.#watched;
  }

  public setWatched(watched: boolean): void {
    this.#watched = watched;
  }

  /** Records the version of the daemon this child works with (its baseline), for the report. */
  public setDaemonVersion(version: string): void {
    this.#daemonVersion = version;
  }

  /**
   * The report as of now: the active session's recovery target (saved path first, else notebook
   * id; a hosted URL without credentials) and id; else the target being recovered; else `null`.
   */
  public report(): SessionReport {
    const active = this.slot.active;
    const rejoin = this.#rejoin ? { rejoin: this.#rejoin } : {};
    const daemon = this.#daemonVersion === undefined ? {} : { daemonVersion: this.#daemonVersion };
    if (active) {
      return {
        target: describeNotebookTarget(sessionRecoveryTarget(active)),
        notebookId: active.handle.notebookId,
        ...daemon,
        ...rejoin,
      };
    }
    const recovering = this.recovering;
    return { target: recovering ? describeNotebookTarget(recovering) : null, ...daemon, ...rejoin };
  }

  private notify(): void {
    for (const check of [...this.#waiters]) check();
  }
}
