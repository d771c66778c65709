/** A cell's text as the room has it, and the cell's content version (what `expected_version` names). */
export interface RoomSource {
  readonly text: string;
  readonly version: string | undefined;
  /** The peer that made this text (`edited_by`), shown beside its change in the person's editor. */
  readonly editedBy?: string | undefined;
}

/** How one send of the person's text ended. */
export type SourceSendOutcome =
  /** The room took it; the cell's version now. */
  | { readonly kind: 'applied'; readonly version: string | undefined }
  /** The cell changed since the version it was written over: nothing changed. */
  | { readonly kind: 'stale' }
  /** No answer (the daemon down, restarting or stopping): it may or may not have been applied; asked again with the same key. */
  | { readonly kind: 'unknown'; readonly message: string }
  /** Refused for good (the cell is gone, the page may no longer edit): not saved. */
  | { readonly kind: 'refused'; readonly message: string };

/**
 * How the person's text stands: in the room (`saved`), on its way (`sending`), kept here while the
 * daemon does not answer and sent when it does (`waiting`), or refused (`refused`, not saved).
 */
export type SourceSyncState = 'saved' | 'sending' | 'waiting' | 'refused';

/** What {@link SourceSync} needs of its cell. */
export interface SourceSyncPort {
  /** The text in the person's editor (the room's when there is no editor). */
  localText(): string;
  /**
   * Puts `remote`, the room's text now, into the editor, keeping the person's changes made over
   * `base` (the room's text the editor started from); see `mergeSource`.
   */
  merge(base: string, remote: RoomSource): void;
  /** Sends `text` as the cell's source, refused unless the cell's version is `expectedVersion`; `key` makes a resend apply once. */
  send(text: string, expectedVersion: string | undefined, key: string): Promise<SourceSendOutcome>;
  /** The state changed (the cell shows it; `message` for `waiting` and `refused`). */
  stateChanged(state: SourceSyncState, message?: string): void;
}

/** Timings (ms): how long typing pauses before the text is sent, the longest it waits while typing goes on, and the resend backoff. */
export interface SourceSyncTimings {
  readonly pauseMs: number;
  readonly maxWaitMs: number;
  readonly retryMs: readonly number[];
}

export const defaultSourceSyncTimings: SourceSyncTimings = {
  pauseMs: 250,
  maxWaitMs: 1000,
  retryMs: [500, 1000, 2000, 4000],
};

interface InFlight {
  readonly text: string;
  readonly expectedVersion: string | undefined;
  readonly key: string;
}

/**
 * Keeps one cell's source in step between the person's editor and the room, which stays the single
 * authority: the person's text is sent a moment after they pause (one send on its way at a time),
 * written over the room's version it started from (`expected_version`); the room's changes,
 * whoever made them, are merged into the editor at the character level as they come, the person's
 * own changes kept; a send the cell's newer version refused is merged and sent again. So the page
 * never shows a text that is not the room's plus the person's edits on their way, clicking in and
 * out sends nothing, and two peers typing in one cell both keep their work.
 *
 * A send that got no answer (the daemon down) is sent again, with the same idempotency key, until
 * the room answers (so it applies once); meanwhile the cell says its text is kept and not saved
 * yet. A refusal for good is said, the text left in the editor. Room states must be given in the
 * room's order (the page applies its events by document version).
 */
export class SourceSync {
  #base: RoomSource;
  #inFlight: InFlight | undefined;
  /** The room's latest text that came while a send was on its way (merged once its answer says how). */
  #arrived: RoomSource | undefined;
  /** A send was refused as stale and the room's newer text has not come yet. */
  #awaitingRoom = false;
  #state: SourceSyncState = 'saved';
  #timer: ReturnType<typeof setTimeout> | undefined;
  /** The resend of a send that got no answer. */
  #retryTimer: ReturnType<typeof setTimeout> | undefined;
  #firstUnsent: number | undefined;
  #retries = 0;
  #closed = false;
  readonly #settled: ((saved: boolean) => void)[] = [];

  public constructor(
    base: RoomSource,
    private readonly port: SourceSyncPort,
    private readonly timings: SourceSyncTimings = defaultSourceSyncTimings,
  ) {
    this.#base = base;
  }

  /** The room's text as this page last had it. */
  public get roomText(): string {
    return this.#base.text;
  }

  public get state(): SourceSyncState {
    return this.#state;
  }

  /** The person has text the room does not have yet (or a send on its way). */
  public get pending(): boolean {
    if (this.#closed) return false;
    return this.#inFlight !== undefined || this.port.localText() !== this.#base.text;
  }

  /** The person changed the text: it is sent once they pause (or after {@link SourceSyncTimings.maxWaitMs} of typing). */
  public edited(): void {
    if (this.#closed) return;
    const now = Date.now();
    this.#firstUnsent ??= now;
    const wait = Math.min(this.timings.pauseMs, Math.max(0, this.#firstUnsent + this.timings.maxWaitMs - now));
    this.schedule(wait);
  }

  /** The room's text now (in the room's order): merged into the editor unless it is what this page sent. */
  public roomChanged(room: RoomSource): void {
    if (this.#closed) return;
    if (room.version === this.#base.version && room.text === this.#base.text) return;
    if (this.#inFlight) {
      // Its own text coming back (the answer applied as an event): the room has what was sent.
      if (room.text === this.#inFlight.text) this.#base = room;
      else this.#arrived = room;
      return;
    }
    this.adopt(room);
    if (this.#awaitingRoom) {
      this.#awaitingRoom = false;
      this.schedule(0);
    }
  }

  /**
   * Sends the person's text now; resolves `true` once the room has all of it (after any merge and
   * resend), `false` when it could not be saved (no answer yet, or refused).
   */
  public async flush(): Promise<boolean> {
    if (this.#closed) return false;
    if (!this.pending && !this.#awaitingRoom) return true;
    const settled = new Promise<boolean>((resolve) => this.#settled.push(resolve));
    if (!this.#inFlight && !this.#awaitingRoom) this.schedule(0);
    return settled;
  }

  /** Stops sending (the cell is gone): nothing is pending any more; a flush waiting resolves `false`. */
  public close(): void {
    this.#closed = true;
    clearTimeout(this.#timer);
    clearTimeout(this.#retryTimer);
    this.settle(false);
  }

  private schedule(ms: number): void {
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      void this.send();
    }, ms);
  }

  private async send(): Promise<void> {
    if (this.#closed || this.#inFlight || this.#awaitingRoom) return;
    const text = this.port.localText();
    if (text === this.#base.text) {
      this.#firstUnsent = undefined;
      this.setState('saved');
      this.settle(true);
      return;
    }
    this.#firstUnsent = undefined;
    await this.sendInFlight({ text, expectedVersion: this.#base.version, key: `page-${crypto.randomUUID()}` });
  }

  private async sendInFlight(request: InFlight): Promise<void> {
    this.#inFlight = request;
    if (this.#state !== 'waiting') this.setState('sending');
    const outcome = await this.port.send(request.text, request.expectedVersion, request.key);
    if (this.#closed) return;
    if (outcome.kind === 'unknown') {
      // Asked again, the same request: the room answers it once, applied or stale.
      this.setState('waiting', outcome.message);
      this.settle(false);
      const backoff = this.timings.retryMs;
      const wait = backoff[Math.min(this.#retries, backoff.length - 1)] ?? 1000;
      this.#retries += 1;
      this.#retryTimer = setTimeout(() => {
        this.#retryTimer = undefined;
        void this.sendInFlight(request);
      }, wait);
      return;
    }
    this.#retries = 0;
    this.#inFlight = undefined;
    const arrived = this.#arrived;
    this.#arrived = undefined;
    if (outcome.kind === 'applied') {
      const sent: RoomSource = { text: request.text, version: outcome.version };
      this.#base = sent;
      // A later change of the room (it came while the answer was on its way) is merged over what was sent.
      if (arrived && arrived.version !== sent.version && arrived.text !== sent.text) this.adopt(arrived);
    } else if (outcome.kind === 'stale') {
      // Another peer's change came first: merge it (when it is here already, else once it comes), then send again.
      if (arrived) this.adopt(arrived);
      else if (this.#base.version === request.expectedVersion) {
        this.#awaitingRoom = true;
        return;
      }
    } else {
      if (arrived) this.adopt(arrived);
      this.setState('refused', outcome.message);
      this.settle(false);
      return;
    }
    if (this.port.localText() === this.#base.text) {
      this.setState('saved');
      this.settle(true);
    } else this.schedule(this.#settled.length > 0 ? 0 : this.timings.pauseMs);
  }

  /** Takes `room` as the room's text, merging it into the editor over the base it replaces. */
  private adopt(room: RoomSource): void {
    const base = this.#base.text;
    this.#base = room;
    if (room.text !== base) this.port.merge(base, room);
    if (this.port.localText() !== room.text && !this.#timer && !this.#awaitingRoom) this.schedule(this.timings.pauseMs);
  }

  private setState(state: SourceSyncState, message?: string): void {
    if (state === this.#state && state !== 'waiting' && state !== 'refused') return;
    this.#state = state;
    this.port.stateChanged(state, message);
  }

  private settle(saved: boolean): void {
    for (const resolve of this.#settled.splice(0)) resolve(saved);
  }
}
