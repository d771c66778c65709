import { inject, injectable } from 'inversify';
import { CoreError } from '../errors/core-error.js';
import type { NotebookTarget } from '../notebook-target/notebook-target.js';
import { Clock } from '../ports/clock.js';
import { Logger } from '../ports/logger.js';
import type { NotebookHandle, Subscription } from '../ports/notebook-handle.js';
import { type NotebookSession, type SessionOrigin, sessionRecoveryTarget } from './notebook-session.js';
import { noSessionMessage, type SessionDropInfo, type SessionDropReason } from './session-drop-info.js';

/** At most this many parked sessions; the least recently used one is evicted beyond it. */
export const maxParkedSessions = 8;

/**
 * What a tool needs of the active session.
 * - `document`: read the notebook (the retained projection is enough).
 * - `mutation`: change the document (the document must be ready).
 * - `runtime`: run code or control the kernel (the kernel must be ready).
 */
export type SessionRequirement = 'document' | 'mutation' | 'runtime';

/**
 * Access to the active session for one tool call. The handle is copied out, so no lock is held
 * across async work; call {@link SessionAccess.ensureCurrent} after awaiting, before acting on the
 * result, to detect that another session was installed meanwhile.
 */
export interface SessionAccess {
  readonly session: NotebookSession;
  readonly handle: NotebookHandle;
  /** Throws `supersededActivation` if the active session is no longer this one. */
  ensureCurrent(): void;
}

/** A connected notebook about to become a session: the handle and the target it was reached by. */
export interface ConnectedNotebook {
  readonly handle: NotebookHandle;
  readonly target: NotebookTarget;
}

/** A parked session evicted to make room, as reported by `session_status`. */
export interface SessionEviction {
  readonly notebookId: string;
  readonly notebookPath: string | undefined;
  readonly at: number;
}

/**
 * What changed in the slot (for resource lists, status and recovery). `intent`: an explicit
 * disconnect advanced the intent epoch without removing anything (the slot was empty), which
 * cancels any automatic rejoin; sessions are unchanged.
 */
export type SlotChange = 'installed' | 'parked' | 'removed' | 'evicted' | 'intent';

/**
 * The child's session state: one active session, up to {@link maxParkedSessions} parked ones (LRU),
 * the intent epoch, and the last drop. Every method is synchronous: a check and the write it
 * guards happen with no `await` between them, which is what "under the same lock" means in a
 * single-threaded runtime. Handles that leave the slot are closed (fire-and-forget, logged).
 */
@injectable()
export class SessionSlot {
  #active: NotebookSession | undefined;
  /** Parked sessions by notebook id, least recently used first (Map insertion order). */
  readonly #parked = new Map<string, NotebookSession>();
  #intentEpoch = 0;
  #activation = 0;
  #lastDrop: SessionDropInfo | undefined;
  readonly #evictions: SessionEviction[] = [];
  readonly #listeners = new Set<(change: SlotChange) => void>();

  public constructor(
    @inject(Clock) private readonly clock: Clock,
    @inject(Logger) private readonly logger: Logger,
  ) {}

  /** The installed session. Installed is not ready: use {@link SessionSlot.access}. */
  public get active(): NotebookSession | undefined {
    return this.#active;
  }

  /** Parked sessions, least recently used first. */
  public get parked(): readonly NotebookSession[] {
    return [...this.#parked.values()];
  }

  /** Advanced by every explicit disconnect; a background rejoin captured before it cannot publish. */
  public get intentEpoch(): number {
    return this.#intentEpoch;
  }

  public get lastDrop(): SessionDropInfo | undefined {
    return this.#lastDrop;
  }

  /** The most recent LRU evictions (up to 16). */
  public get evictions(): readonly SessionEviction[] {
    return [...this.#evictions];
  }

  /** The active or a parked session for a notebook id. */
  public find(notebookId: string): NotebookSession | undefined {
    if (this.#active?.handle.notebookId === notebookId) return this.#active;
    return this.#parked.get(notebookId);
  }

  public onDidChange(listener: (change: SlotChange) => void): Subscription {
    this.#listeners.add(listener);
    return { dispose: () => this.#listeners.delete(listener) };
  }

  /**
   * Builds and installs an explicitly activated session (a fresh activation number, installed
   * now). The previous active session is parked (drop `switched`), unless it is the same notebook,
   * which is replaced. A parked peer of the same notebook is removed only now, after the new one
   * is installed. Beyond the cap the least recently used parked session is evicted and
   * disconnected. Returns the installed session.
   */
  public installActivated(connected: ConnectedNotebook & { readonly origin: SessionOrigin }): NotebookSession {
    const session = this.build(connected, connected.origin);
    const previous = this.#active;
    const notebookId = session.handle.notebookId;
    this.#active = session;
    const staleParked = this.#parked.get(notebookId);
    if (staleParked) {
      this.#parked.delete(notebookId);
      this.release(staleParked, 'replaced by a fresh activation of the same notebook');
    }
    if (previous && previous !== session) {
      if (previous.handle.notebookId === notebookId) {
        this.release(previous, 'replaced by a fresh activation of the same notebook');
      } else {
        this.park(previous);
      }
    }
    this.emit('installed');
    return session;
  }

  /**
   * Builds and publishes a session that background rejoin connected (origin `rejoin`). Succeeds
   * only if the intent epoch is still `capturedEpoch` and the slot is empty; any installed session
   * wins, even one for the same notebook. Returns the published session, or `undefined` (nothing
   * built; the caller closes the handle).
   */
  public publishRejoined(connected: ConnectedNotebook, capturedEpoch: number): NotebookSession | undefined {
    if (capturedEpoch !== this.#intentEpoch || this.#active !== undefined) return undefined;
    const session = this.build(connected, 'rejoin');
    this.#active = session;
    const staleParked = this.#parked.get(session.handle.notebookId);
    if (staleParked) {
      this.#parked.delete(session.handle.notebookId);
      this.release(staleParked, 'replaced by the rejoined session');
    }
    this.emit('installed');
    return session;
  }

  /**
   * Explicit disconnect of the active session (no id) or of a given notebook, active or parked.
   * Disconnecting the active session, or asking to disconnect while none is active, advances the
   * intent epoch, so a background rejoin in flight cannot resurrect it. Closes the peer; records a
   * `closed` drop for the active session only (a parked one leaves drop info alone).
   * Returns what was removed.
   */
  public disconnect(
    notebookId?: string,
  ): { readonly kind: 'active' | 'parked'; readonly session: NotebookSession } | undefined {
    const active = this.#active;
    if (!active && notebookId === undefined) {
      this.#intentEpoch += 1;
      this.emit('intent');
    }
    if (active && (notebookId === undefined || active.handle.notebookId === notebookId)) {
      this.#intentEpoch += 1;
      this.#active = undefined;
      this.recordDrop('closed', active);
      this.release(active, 'explicit disconnect');
      this.emit('removed');
      return { kind: 'active', session: active };
    }
    const parked = notebookId === undefined ? undefined : this.#parked.get(notebookId);
    if (!parked || notebookId === undefined) return undefined;
    this.#parked.delete(notebookId);
    this.release(parked, 'explicit disconnect of a parked session');
    this.emit('removed');
    return { kind: 'parked', session: parked };
  }

  /**
   * Removes every session (active and parked) the predicate selects, closing their peers; a
   * removed active session records a `disconnected` drop. Used by reconciliation; removing parked
   * sessions does not ask for their recovery.
   */
  public removeWhere(
    predicate: (session: NotebookSession) => boolean,
    why: string,
  ): { readonly active: NotebookSession | undefined; readonly parked: readonly NotebookSession[] } {
    const active = this.#active && predicate(this.#active) ? this.#active : undefined;
    if (active) {
      this.#active = undefined;
      this.recordDrop('disconnected', active);
      this.release(active, why);
    }
    const parked = [...this.#parked.values()].filter(predicate);
    for (const session of parked) {
      this.#parked.delete(session.handle.notebookId);
      this.release(session, why);
    }
    if (active || parked.length > 0) this.emit('removed');
    return { active, parked };
  }

  /**
   * At child shutdown: closes the peers of every session (active and parked) and waits for them;
   * failures are logged. The slot itself is left as it is (no listener runs).
   */
  public async closeAllPeers(): Promise<void> {
    const sessions = [...(this.#active ? [this.#active] : []), ...this.#parked.values()];
    await Promise.all(
      sessions.map((session) =>
        session.handle.close().catch((error: unknown) => this.logger.warn('closing a session peer failed', { error })),
      ),
    );
  }

  /** Records why the slot lost a session (a rejoin target may be given when the session itself is gone). */
  public recordDrop(reason: SessionDropReason, session?: NotebookSession, target?: NotebookTarget): void {
    const rejoinTarget = target ?? (session ? sessionRecoveryTarget(session) : undefined);
    this.#lastDrop = {
      reason,
      notebookId:
        session?.handle.notebookId ?? (rejoinTarget?.kind === 'notebook-id' ? rejoinTarget.notebookId : undefined),
      notebookPath:
        session?.handle.notebookPath ?? (rejoinTarget?.kind === 'local-path' ? rejoinTarget.path : undefined),
      rejoinTarget,
      at: this.clock.now(),
    };
  }

  /** Adds why the automatic rejoin gave up to the last drop, while no session is active (see {@link SessionDropInfo.detail}). */
  public noteDropDetail(detail: string): void {
    if (this.#active !== undefined || this.#lastDrop === undefined) return;
    this.#lastDrop = { ...this.#lastDrop, detail };
  }

  /**
   * Access to the active session for a tool, or the distinct error that says why not:
   * `noSession` (with the drop context), `localSyncFailed` (connection lost), `sourceDegraded`
   * (the notebook failed to load), `documentNotReady` (mutations before convergence),
   * `runtimeNotReady` (execution without a ready kernel).
   */
  public access(requirement: SessionRequirement): SessionAccess {
    const session = this.#active;
    if (!session) throw new CoreError('noSession', noSessionMessage(this.#lastDrop));
    const { handle } = session;
    const id = handle.notebookId;
    if (handle.isClosed) {
      throw new CoreError(
        'localSyncFailed',
        `Lost the connection to notebook ${id}. It is rejoined automatically when the daemon is back; retry in a few seconds.`,
      );
    }
    const readiness = handle.readiness();
    if (readiness.document === 'failed') {
      throw new CoreError(
        'sourceDegraded',
        `Notebook ${id} could not be loaded: ${readiness.reason ?? 'unknown reason'}`,
      );
    }
    if (requirement !== 'document' && readiness.document !== 'ready') {
      throw new CoreError(
        'documentNotReady',
        `Notebook ${id} is still syncing; reads work now, edits and execution in a moment. Retry shortly.`,
      );
    }
    // A failed start is tried again by the next execution, which says why when it fails again.
    if (requirement === 'runtime' && readiness.runtime !== 'ready' && readiness.runtime !== 'failed') {
      throw new CoreError(
        'runtimeNotReady',
        readiness.runtime === 'unavailable'
          ? `The notebook's runtime is unavailable: ${readiness.reason ?? 'no kernel can be started'}`
          : `The kernel of notebook ${id} is still starting; retry in a few seconds.`,
      );
    }
    return {
      session,
      handle,
      ensureCurrent: () => {
        if (this.#active?.activation !== session.activation) {
          throw new CoreError(
            'supersededActivation',
            `The active notebook changed while this call was running (was ${id}); the result was not applied to the new one.`,
          );
        }
      },
    };
  }

  /** The one place a {@link NotebookSession} is made: a fresh activation number, installed now. */
  private build(connected: ConnectedNotebook, origin: SessionOrigin): NotebookSession {
    this.#activation += 1;
    return {
      handle: connected.handle,
      target: connected.target,
      activation: this.#activation,
      origin,
      installedAt: this.clock.now(),
    };
  }

  private park(session: NotebookSession): void {
    this.recordDrop('switched', session);
    this.#parked.delete(session.handle.notebookId);
    this.#parked.set(session.handle.notebookId, session);
    while (this.#parked.size > maxParkedSessions) {
      const [oldestId, oldest] = this.#parked.entries().next().value as [string, NotebookSession];
      this.#parked.delete(oldestId);
      this.#evictions.push({ notebookId: oldestId, notebookPath: oldest.handle.notebookPath, at: this.clock.now() });
      if (this.#evictions.length > 16) this.#evictions.shift();
      this.logger.info('evicted the least recently used parked session', {
        notebookId: oldestId,
        path: oldest.handle.notebookPath,
      });
      this.release(oldest, 'evicted from the parked map (least recently used)');
      this.emit('evicted');
    }
    this.emit('parked');
  }

  private release(session: NotebookSession, why: string): void {
    this.logger.debug('closing session peer', { notebookId: session.handle.notebookId, why });
    session.handle.close().catch((error: unknown) => this.logger.warn('closing a session peer failed', { error }));
  }

  private emit(change: SlotChange): void {
    for (const listener of [...this.#listeners]) {
      try {
        listener(change);
      } catch (error) {
        this.logger.warn('a slot listener failed', { error });
      }
    }
  }
}
