import type { Writable } from 'node:stream';

/**
 * A stretch of work (the handling of one chunk read from a stream) during which writes to the
 * {@link TurnWriter}s that share it are held, and sent when it ends: one write each when that is
 * all there was, else one `writev`. Spans nest; the outermost end sends, then runs the work put
 * {@link afterWrites} (bookkeeping that the peers need not wait for), in order.
 */
export class WriteTurn {
  #depth = 0;
  #held: TurnWriter[] = [];
  #after: (() => void)[] = [];

  /** A write now is held until {@link end}. */
  public get open(): boolean {
    return this.#depth > 0;
  }

  public begin(): void {
    this.#depth += 1;
  }

  /** Ends the span begun last; the outermost sends what its writers hold. */
  public end(): void {
    this.#depth -= 1;
    if (this.#depth > 0) return;
    if (this.#held.length > 0) {
      const held = this.#held;
      this.#held = [];
      for (let i = 0; i < held.length; i++) held[i]?.flush();
    }
    if (this.#after.length > 0) {
      const after = this.#after;
      this.#after = [];
      for (let i = 0; i < after.length; i++) after[i]?.();
    }
  }

  /**
   * Runs `work` once this turn's writes have been handed to their streams (at once outside a
   * turn), so the peers already have their messages while it runs. `work` must not throw.
   */
  public afterWrites(work: () => void): void {
    if (this.#depth > 0) this.#after.push(work);
    else work();
  }

  /** `writer` holds writes until the span ends. */
  public hold(writer: TurnWriter): void {
    this.#held.push(writer);
  }
}

/**
 * Writes to one stream so that everything written in one turn of the event loop leaves together,
 * so a burst of answers (64 calls in flight) costs one `writev` instead of a system call each:
 * inside an open {@link WriteTurn} the writes are held until it ends (a lone write then goes out
 * as it is, with no corking and no deferral; text written after text is joined into one string,
 * one plain write); outside one, the first write of a turn corks the stream and the end of the
 * turn uncorks it.
 *
 * Guarantees: order is kept; {@link flush} sends what is held at once (before the process exits).
 */
export class TurnWriter {
  readonly #stream: Writable;
  readonly #turn: WriteTurn | undefined;
  /** What an open turn wrote so far, not yet handed to the stream: one chunk, or the text of several. */
  #single: string | Buffer | undefined;
  #corked = false;

  public constructor(stream: Writable, turn?: WriteTurn) {
    this.#stream = stream;
    this.#turn = turn;
  }

  public get writable(): boolean {
    return this.#stream.writable;
  }

  public write(chunk: string | Buffer): void {
    if (this.#corked) {
      this.#stream.write(chunk);
      return;
    }
    const single = this.#single;
    if (single !== undefined) {
      if (typeof single === 'string' && typeof chunk === 'string') {
        // Text after text (requests to a child): held as one string, one write without a writev.
        this.#single = single + chunk;
        return;
      }
      // A second write in the turn: both go out together.
      this.#single = undefined;
      this.#corked = true;
      this.#stream.cork();
      this.#stream.write(single);
      this.#stream.write(chunk);
      return;
    }
    if (this.#turn?.open) {
      this.#single = chunk;
      this.#turn.hold(this);
      return;
    }
    this.#corked = true;
    this.#stream.cork();
    process.nextTick(() => this.flush());
    this.#stream.write(chunk);
  }

  /** Sends what this turn wrote so far. */
  public flush(): void {
    const single = this.#single;
    if (single !== undefined) {
      this.#single = undefined;
      this.#stream.write(single);
      return;
    }
    if (!this.#corked) return;
    this.#corked = false;
    this.#stream.uncork();
  }
}
