import { inject, injectable } from 'inversify';
import { CoreError } from '../errors/core-error.js';
import type { NotebookTarget } from '../notebook-target/notebook-target.js';
import type { NotebookHandle } from '../ports/notebook-handle.js';
import type { NotebookSession, SessionOrigin } from './notebook-session.js';
import { SessionSlot } from './session-slot.js';

interface Attempt {
  readonly key: string;
  readonly generation: number;
  readonly controller: AbortController;
  readonly result: Promise<NotebookSession>;
}

/** One explicit connect or create. */
export interface ActivationRequest {
  /** Same key = same canonical target: calls share one in-flight attempt. Creates use unique keys. */
  readonly key: string;
  readonly target: NotebookTarget | ((handle: NotebookHandle) => NotebookTarget);
  readonly origin: SessionOrigin;
  /** Connects (and waits for whatever readiness the tool promises). Must honour the signal. */
  readonly connect: (signal: AbortSignal) => Promise<NotebookHandle>;
}

/**
 * The generation owner of explicit connect/create. Calls for the same target share one in-flight
 * result; a call for a different target supersedes the older attempt (A→B→A never joins stale A
 * work: the second A is a new attempt). The commit is synchronous: if the attempt was superseded
 * or its handle closed meanwhile, nothing in the slot changes (the previous occupant stays) and
 * the new handle is closed. A failed connect leaves the installed session alone.
 */
@injectable()
export class SessionActivation {
  #current: Attempt | undefined;
  #generation = 0;

  public constructor(@inject(SessionSlot) private readonly slot: SessionSlot) {}

  /** The key of the attempt in flight, if any. */
  public get pendingKey(): string | undefined {
    return this.#current?.key;
  }

  public activate(request: ActivationRequest): Promise<NotebookSession> {
    const current = this.#current;
    if (current && current.key === request.key) return current.result;
    current?.controller.abort(new CoreError('supersededActivation', `Superseded by a newer connect (${request.key})`));
    this.#generation += 1;
    const generation = this.#generation;
    const controller = new AbortController();
    const result = this.run(request, generation, controller.signal).finally(() => {
      if (this.#current?.generation === generation) this.#current = undefined;
    });
    this.#current = { key: request.key, generation, controller, result };
    return result;
  }

  private async run(request: ActivationRequest, generation: number, signal: AbortSignal): Promise<NotebookSession> {
    const handle = await request.connect(signal);
    // Commit: checks and install with no await in between.
    if (generation !== this.#generation || signal.aborted) {
      void handle.close();
      throw new CoreError(
        'supersededActivation',
        `This connect was superseded by a newer connect or create before it finished; the newer one decides the active notebook.`,
      );
    }
    if (handle.isClosed) {
      throw new CoreError(
        'localSyncFailed',
        `The connection to notebook ${handle.notebookId} closed before it could be installed; the previous session is unchanged.`,
      );
    }
    return this.slot.installActivated({
      handle,
      target: typeof request.target === 'function' ? request.target(handle) : request.target,
      origin: request.origin,
    });
  }
}
