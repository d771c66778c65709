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
 * so a burst of answers (64 calls in flight) costs one system call instead of one each: inside an
 * open {@link WriteTurn} the writes are held until it ends, then a lone write goes out as it is
 * (no corking, no deferral), text written after text as one string, and bytes after bytes, up to
 * {@link joinedBytesLimit} in all, as one buffer: one plain write, which spares the stream the
 * bookkeeping of each chunk (its queue entry, its part of a `writev`); anything else is corked and
 * leaves as one `writev`. Outside a turn, the first write corks the stream and the end of the
 * turn of the event loop uncorks it.
 *
 * Guarantees: order is kept; {@link flush} sends what is held at once (before the process exits).
 */
export class TurnWriter {
  readonly #stream: Writable;
  readonly #turn: WriteTurn | undefined;
  /** What an open turn wrote so far, not yet handed to the stream, when it is one chunk. */
  #single: string | Buffer | undefined;
  /** What an open turn wrote so far, from its second chunk on (the array is kept for the next turn). */
  readonly #held: (string | Buffer)[] = [];
  /** The bytes held in {@link #held}, while all of it is bytes (`-1` once text was held too). */
  #heldBytes = 0;
  /** Where a turn's bytes are joined while its last write went through at once (see {@link #joinInto}). */
  #scratch: Buffer | undefined;
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
      // A second write in the turn: both are held, and leave together at its end.
      this.#single = undefined;
      this.#hold(single);
      this.#hold(chunk);
      return;
    }
    if (this.#held.length > 0) {
      this.#hold(chunk);
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
    if (this.#held.length > 0) {
      this.#writeHeld();
      return;
    }
    if (!this.#corked) return;
    this.#corked = false;
    this.#stream.uncork();
  }

  /**
   * A buffer of `bytes` to join a turn's writes in: a view of the scratch buffer when they fit in
   * it, so a turn of answers allocates nothing (the scratch is given up when a write of it stays
   * queued, as on a full pipe), else a new one.
   */
  #joinInto(bytes: number): Buffer {
    if (bytes > scratchBytes) return Buffer.allocUnsafe(bytes);
    this.#scratch ??= Buffer.allocUnsafe(scratchBytes);
    return this.#scratch.subarray(0, bytes);
  }

  #hold(chunk: string | Buffer): void {
    this.#held.push(chunk);
    if (typeof chunk === 'string') this.#heldBytes = -1;
    else if (this.#heldBytes >= 0) this.#heldBytes += chunk.length;
  }

  /** Writes what {@link #hold} held: as one string, as one buffer, or corked, as one `writev`. */
  #writeHeld(): void {
    const held = this.#held;
    const bytes = this.#heldBytes;
    this.#heldBytes = 0;
    if (bytes >= 0 && bytes <= joinedBytesLimit) {
      const joined = this.#joinInto(bytes);
      let at = 0;
      for (let i = 0; i < held.length; i++) {
        const part = held[i] as Buffer;
        joined.set(part, at);
        at += part.length;
      }
      held.length = 0;
      this.#stream.write(joined);
      // Written through to the pipe at once (nothing left queued), the scratch is free again.
      if (joined.buffer === this.#scratch?.buffer && this.#stream.writableLength !== 0) this.#scratch = undefined;
      return;
    }
    if (held.every((part) => typeof part === 'string')) {
      const text = held.join('');
      held.length = 0;
      this.#stream.write(text);
      return;
    }
    this.#stream.cork();
    for (let i = 0; i < held.length; i++) this.#stream.write(held[i] as string | Buffer);
    held.length = 0;
    this.#stream.uncork();
  }
}

/**
 * The most bytes a turn's writes are copied into one buffer for: below it, a copy costs less than
 * the stream's handling of each chunk; above it (large answers), the chunks go out as they are.
 */
const joinedBytesLimit = 64 * 1024;

/** The size of a writer's scratch buffer: a burst of 64 small answers fits. */
const scratchBytes = 32 * 1024;
