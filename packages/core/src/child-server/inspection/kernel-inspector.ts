import type { Clock, Timer } from '../../ports/clock.js';
import type { NotebookHandle, ScratchRun } from '../../ports/notebook-handle.js';
import { ToolError } from '../tools/to-tool-failure.js';

/**
 * How long an inspection left queued behind running code is followed at most: past it, it is
 * forgotten (the handle drops its late answer) and the next call may send another.
 */
export const inspectionFollowLimitMs = 10 * 60_000;

/** At most this many notebooks' last listings are kept (the least recently listed is forgotten). */
export const maxKeptListings = 32;

/**
 * What an inspection came to: it ran (`run`, as the kernel answered it), or the kernel did not
 * take it within the wait (`busy`; `queued`: one sent earlier is still waiting behind the code the
 * kernel runs, so none was sent now).
 */
export type InspectionOutcome =
  | { readonly kind: 'ran'; readonly run: ScratchRun }
  | { readonly kind: 'busy'; readonly queued: boolean; readonly queuedSince?: number };

/** A listing as it was answered, kept to be shown (labelled) while the kernel is busy. */
export interface KeptListing {
  /** When the kernel ran it (ms since the epoch). */
  readonly takenAt: number;
  /** The kernel's last execution count then, when known. */
  readonly executionCount: number | null;
  /** What the listing answered (its page, filter and entries), as the tool showed it. */
  readonly answer: Readonly<Record<string, unknown>>;
}

/**
 * Runs inspection programs in a notebook's kernel as scratch runs, never waiting on busy code for
 * longer than asked: a run the kernel has not answered within `waitMs` is answered `busy` at once
 * and followed in the background (its late answer goes to `late`, e.g. kept as the freshest
 * listing). While one such run of a notebook is still queued, no other is sent to it: at most one
 * inspection ever waits behind a long cell. Keeps the last listing of each notebook.
 *
 * Does not guarantee: that a busy kernel is told apart from a slow inspection (a backend does not
 * say whether a scratch run is queued or running), nor anything about runs by other servers.
 */
export class KernelInspector {
  readonly #clock: Clock;
  readonly #queued = new Map<string, number>();
  readonly #listings = new Map<string, KeptListing>();

  public constructor(clock: Clock) {
    this.#clock = clock;
  }

  /**
   * Runs `source` in `handle`'s kernel and waits at most `waitMs` for it. `late` gets the run's
   * outcome when it ends after the wait (not when it fails). Rejects as the handle does (a lost
   * connection, an unavailable runtime).
   */
  public async run(
    handle: NotebookHandle,
    source: string,
    waitMs: number,
    late?: (run: ScratchRun) => void,
  ): Promise<InspectionOutcome> {
    const notebookId = handle.notebookId;
    const queuedSince = this.#queued.get(notebookId);
    if (queuedSince !== undefined) return { kind: 'busy', queued: true, queuedSince };
    if (!handle.runScratch) {
      throw new ToolError(
        `Notebook ${notebookId} cannot run code without a cell (its backend does not offer scratch runs), so its variables cannot be listed without changing the notebook.`,
      );
    }
    const token = this.#clock.now();
    this.#queued.set(notebookId, token);
    const settled = handle.runScratch(source, { timeoutMs: inspectionFollowLimitMs }).then(
      (run) => ({ ok: true as const, run }),
      (error: unknown) => ({ ok: false as const, error }),
    );
    void settled.then(() => {
      if (this.#queued.get(notebookId) === token) this.#queued.delete(notebookId);
    });
    let timer: Timer | undefined;
    const waited = new Promise<'waited'>((resolve) => {
      timer = this.#clock.setTimer(waitMs, () => resolve('waited'));
    });
    const first = await Promise.race([settled, waited]);
    timer?.cancel();
    if (first === 'waited') {
      void settled.then((outcome) => {
        if (outcome.ok && outcome.run.status !== 'timeout') late?.(outcome.run);
      });
      return { kind: 'busy', queued: false };
    }
    if (!first.ok) throw first.error;
    // Only past the follow limit, which is longer than any wait: the handle stopped waiting.
    if (first.run.status === 'timeout') return { kind: 'busy', queued: false };
    return { kind: 'ran', run: first.run };
  }

  /** Keeps `listing` as the last one of the notebook. */
  public keep(notebookId: string, listing: KeptListing): void {
    this.#listings.delete(notebookId);
    this.#listings.set(notebookId, listing);
    while (this.#listings.size > maxKeptListings) this.#listings.delete(this.#listings.keys().next().value as string);
  }

  /** The last listing kept for the notebook, if any. */
  public last(notebookId: string): KeptListing | undefined {
    return this.#listings.get(notebookId);
  }
}
