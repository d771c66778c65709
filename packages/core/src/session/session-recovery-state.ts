import { inject, injectable } from 'inversify';
import type { RejoinReport, SessionReport } from '../contract/session-report.js';
import { describeNotebookTarget, type NotebookTarget } from '../target/notebook-target.js';
import { sessionRecoveryTarget } from './notebook-session.js';
import { SessionSlot } from './session-slot.js';

interface Recovering {
  readonly target: NotebookTarget;
  /** The intent epoch the recovery belongs to: an explicit disconnect since then cancels it. */
  readonly epoch: number;
}

/**
 * What the child is bringing back, as its recovery owner (the daemon watch loop) reports it, and
 * the fate of the rejoin it was asked for at start (`NTERACT_MCP_REJOIN_NOTEBOOK`). Read by the
 * child server to build the {@link SessionReport} of every tool result.
 *
 * Guarantees: a recovery target counts only while the slot's intent epoch is the one it was
 * recorded under (an explicit disconnect makes it `null` at once, before any watch round); the
 * rejoin outcome moves only from `pending`, once, and only when its owner says so (it is never
 * inferred here). Synchronous; no I/O.
 */
@injectable()
export class SessionRecoveryState {
  #recovering: Recovering | undefined;
  #rejoin: RejoinReport | undefined;

  public constructor(@inject(SessionSlot) private readonly slot: SessionSlot) {}

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
  }

  /** The child was handed `requested` to rejoin: the outcome is `pending` until settled. Once only. */
  public requestRejoin(requested: string): void {
    if (this.#rejoin) return;
    this.#rejoin = { requested, outcome: 'pending' };
  }

  /** Settles a pending rejoin; returns whether it was pending. A failure carries the text the agent would be told. */
  public settleRejoin(outcome: 'rejoined'): boolean;
  public settleRejoin(outcome: 'failed', reason: string): boolean;
  public settleRejoin(outcome: 'rejoined' | 'failed', reason?: string): boolean {
    const rejoin = this.#rejoin;
    if (rejoin?.outcome !== 'pending') return false;
    this.#rejoin =
      outcome === 'failed'
        ? { requested: rejoin.requested, outcome, reason: reason ?? 'not rejoined' }
        : { requested: rejoin.requested, outcome };
    return true;
  }

  /**
   * The report as of now: the active session's recovery target (saved path first, else notebook
   * id; a hosted URL without credentials) and id; else the target being recovered; else `null`.
   */
  public report(): SessionReport {
    const active = this.slot.active;
    const rejoin = this.#rejoin ? { rejoin: this.#rejoin } : {};
    if (active) {
      return {
        target: describeNotebookTarget(sessionRecoveryTarget(active)),
        notebookId: active.handle.notebookId,
        ...rejoin,
      };
    }
    const recovering = this.recovering;
    return { target: recovering ? describeNotebookTarget(recovering) : null, ...rejoin };
  }
}
