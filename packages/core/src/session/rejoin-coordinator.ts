import { inject, injectable } from 'inversify';
import { NotebookTargetResolver } from '../contributions/notebook-target-resolver.js';
import { describeNotebookTarget, type NotebookTarget } from '../notebook-target/notebook-target.js';
import { Logger } from '../ports/logger.js';
import type { NotebookHandle } from '../ports/notebook-handle.js';
import type { NotebookSession } from './notebook-session.js';
import { type RejoinOutcome, rejoinByOpening } from './rejoin-by-opening.js';
import { SessionSlot } from './session-slot.js';

export interface RejoinRequest {
  readonly peerLabel: string;
  readonly signal?: AbortSignal;
  /**
   * The one check that the connected handle still belongs to the world the attempt started in
   * (for a local target: the daemon incarnation is unchanged and the handle is bound to it). Run
   * after the backend reopened it and before publishing; `false` or a throw closes the handle and
   * answers `retry-later`. The recovery contribution that asked for the attempt supplies it.
   */
  readonly verify?: (handle: NotebookHandle) => Promise<boolean>;
}

/**
 * - `published`: connected and installed.
 * - `not-published`: connected, but an explicit disconnect or an installed session won; closed.
 * - `retry-later`: transient; keep the target.
 * - `evicted`: definitive; recorded as an `evicted` drop; do not retry.
 */
export type RejoinResult =
  | { readonly kind: 'published'; readonly session: NotebookSession }
  | { readonly kind: 'not-published'; readonly reason: string }
  | { readonly kind: 'retry-later'; readonly reason: string }
  | { readonly kind: 'evicted'; readonly reason: string };

/**
 * Brings a lost notebook back: the notebook backend of the target's kind reopens it (its
 * `reopen`, else `connect`), readiness is awaited as the backend's `rejoinWhen` says, and the
 * session is published through the slot's guard. Backends never write the slot; only this class
 * publishes, and only when the intent epoch captured before connecting is unchanged and the slot
 * is still empty.
 */
@injectable()
export class RejoinCoordinator {
  public constructor(
    @inject(NotebookTargetResolver) private readonly backends: NotebookTargetResolver,
    @inject(SessionSlot) private readonly slot: SessionSlot,
    @inject(Logger) private readonly logger: Logger,
  ) {}

  /** Whether a lost session of `target` can be brought back: a backend of its kind is loaded. */
  public canRejoin(target: NotebookTarget): boolean {
    return this.backends.supportedKinds().includes(target.kind);
  }

  public async rejoin(target: NotebookTarget, request: RejoinRequest): Promise<RejoinResult> {
    const capturedEpoch = this.slot.intentEpoch;
    const where = describeNotebookTarget(target);
    if (!this.canRejoin(target)) {
      const reason = `No notebook backend handles ${target.kind} targets`;
      this.slot.recordDrop('evicted', undefined, target);
      this.slot.noteDropDetail(reason);
      return { kind: 'evicted', reason };
    }
    const context = { peerLabel: request.peerLabel, signal: request.signal ?? new AbortController().signal };
    let outcome: RejoinOutcome;
    try {
      outcome = await rejoinByOpening(() => this.backends.reopen(target, context), context.signal, {
        until: this.backends.backendFor(target).rejoinWhen ?? 'settled',
      });
    } catch (error) {
      const backend = this.backends.backendFor(target).id;
      this.logger.warn('rejoin failed; will retry later', { backend, target: where, error });
      return { kind: 'retry-later', reason: (error as Error).message };
    }
    if (outcome.kind === 'evicted') {
      if (!this.slot.active) {
        this.slot.recordDrop('evicted', undefined, target);
        // Why it is gone, as the backend said it (the drop's text claims no cause of its own).
        this.slot.noteDropDetail(outcome.reason);
      }
      this.logger.info('rejoin refused definitively', { target: where, reason: outcome.reason });
      return outcome;
    }
    if (outcome.kind === 'retry-later') return outcome;
    const { handle } = outcome;
    if (request.verify && !(await request.verify(handle).catch(() => false))) {
      void handle.close();
      return { kind: 'retry-later', reason: 'the daemon changed while rejoining' };
    }
    const session = this.slot.publishRejoined({ handle, target }, capturedEpoch);
    if (!session) {
      void handle.close();
      const reason =
        this.slot.intentEpoch !== capturedEpoch
          ? 'an explicit disconnect happened meanwhile'
          : 'another session is installed';
      return { kind: 'not-published', reason };
    }
    this.logger.info('rejoined notebook', { target: where, notebookId: handle.notebookId });
    return { kind: 'published', session };
  }
}
