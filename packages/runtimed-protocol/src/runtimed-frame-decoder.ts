import { releaseLargeTransient, sniffTopLevelId, sniffTrailingId } from '@nteract-mcp/foundation';
import { RuntimedProtocolError } from './runtimed-protocol-error.js';
import {
  defaultMaxFrameBytes,
  defaultMaxMessageBytes,
  runtimedChunkBytes,
  runtimedContinuationBit,
} from './runtimed-wire-constants.js';

/** What a decoder found in the bytes so far. */
export type DecodedFrame =
  /** One whole message (all its frames), parsed. */
  | { readonly kind: 'frame'; readonly value: unknown }
  /** A whole message that is not JSON; decoding goes on. */
  | { readonly kind: 'malformed'; readonly reason: string }
  /**
   * A message over the message cap: its bytes were skipped as they came and decoding goes on.
   * `bytes` is its full size; `id` is its top-level numeric `id` when it could be read from the
   * start or the end of the message (our senders put it last).
   */
  | { readonly kind: 'oversized'; readonly bytes: number; readonly limit: number; readonly id?: number }
  /** One frame over the frame cap: the stream cannot be trusted, decoding stops for good. */
  | { readonly kind: 'frame-too-large'; readonly bytes: number; readonly limit: number };

export interface RuntimedEncodeOptions {
  /** Largest frame body written (default {@link runtimedChunkBytes}). */
  readonly chunkBytes?: number;
  /** Largest message accepted for sending (default {@link defaultMaxMessageBytes}). */
  readonly maxMessageBytes?: number;
}

/**
 * One message as frames: its UTF-8 JSON cut into bodies of at most `chunkBytes`, each behind a
 * 4-byte big-endian header (length, top bit set on every frame but the last). A message that
 * fits one frame is one frame with a plain length header.
 *
 * Throws a `messageTooLarge` {@link RuntimedProtocolError} (naming the size and the limit) when the JSON is
 * over `maxMessageBytes` or too large to build at all; nothing is sent then.
 */
export function encodeRuntimedFrame(value: unknown, options: RuntimedEncodeOptions = {}): Buffer {
  const chunkBytes = options.chunkBytes ?? runtimedChunkBytes;
  const maxMessageBytes = options.maxMessageBytes ?? defaultMaxMessageBytes;
  let json: string;
  try {
    json = JSON.stringify(value);
  } catch (error) {
    if (!(error instanceof RangeError)) throw error;
    throw new RuntimedProtocolError(
      'messageTooLarge',
      `The message is too large to encode (over the ${maxMessageBytes}-byte limit of one daemon message)`,
      { code: 'oversized_message', cause: error },
    );
  }
  const bytes = Buffer.byteLength(json, 'utf8');
  if (bytes > maxMessageBytes) {
    throw new RuntimedProtocolError(
      'messageTooLarge',
      `The message is ${bytes} bytes, over the ${maxMessageBytes}-byte limit of one daemon message`,
      { code: 'oversized_message' },
    );
  }
  // The UTF-8 goes straight into the frames' buffer (no separate body: a large output is not held
  // once more while it is framed), behind room for every header; each chunk then moves forward to
  // its place behind its header. A chunk's place ends before the next chunk's bytes begin.
  const count = Math.max(1, Math.ceil(bytes / chunkBytes));
  const out = Buffer.allocUnsafe(bytes + 4 * count);
  out.write(json, 4 * count, 'utf8');
  for (let index = 0; index < count; index += 1) {
    const from = 4 * count + index * chunkBytes;
    const length = Math.min(chunkBytes, bytes - index * chunkBytes);
    const at = index * (chunkBytes + 4);
    out.copyWithin(at + 4, from, from + length);
    const more = index < count - 1 ? runtimedContinuationBit : 0;
    out.writeUInt32BE((length | more) >>> 0, at);
  }
  return out;
}

export interface RuntimedDecoderLimits {
  /** Largest frame body accepted (default {@link defaultMaxFrameBytes}). */
  readonly maxFrameBytes?: number;
  /** Largest message accepted (default {@link defaultMaxMessageBytes}). */
  readonly maxMessageBytes?: number;
  /**
   * Largest first message accepted (e.g. a handshake), default `maxMessageBytes`. Applies to the
   * first message whatever arrives with it in the same chunk.
   */
  readonly maxFirstMessageBytes?: number;
}

/** Bytes of the start and of the end of a skipped message kept to find its `id`. */
const idSniffBytes = 256;

/**
 * Splits a byte stream into messages (see {@link encodeRuntimedFrame}). A message whose JSON is
 * bad yields `malformed`, one over the message cap yields `oversized` after its last frame, and
 * decoding goes on in both cases (the frame headers keep the stream in step); a single frame
 * over the frame cap yields `frame-too-large` and the decoder stops for good.
 *
 * Memory: at most the message cap plus one chunk is held; a skipped message holds a few hundred
 * bytes.
 */
export class RuntimedFrameDecoder {
  /**
   * Bytes received and not yet taken, as received: joined once a whole frame is there, not at
   * every chunk (a 1 MiB frame comes in many socket reads, each would copy all before it again).
   */
  #received: Buffer[] = [];
  #receivedBytes = 0;
  #broken = false;
  #maxFrameBytes: number;
  readonly #maxMessageBytes: number;
  /** Bodies of the message being assembled. */
  #parts: Buffer[] = [];
  #size = 0;
  /** The cap of the first message, until it is complete. */
  #firstMessageBytes: number | undefined;
  /** Set while a message over the cap is being skipped: its first and last bytes. */
  #skipping: { head: Buffer; tail: Buffer } | undefined;

  public constructor(limits: RuntimedDecoderLimits = {}) {
    this.#maxFrameBytes = limits.maxFrameBytes ?? defaultMaxFrameBytes;
    this.#maxMessageBytes = limits.maxMessageBytes ?? defaultMaxMessageBytes;
    this.#firstMessageBytes = limits.maxFirstMessageBytes;
  }

  /** Bytes received but not yet part of a complete message. */
  public get pendingBytes(): number {
    return this.#receivedBytes + this.#size;
  }

  public push(chunk: Buffer): DecodedFrame[] {
    if (this.#broken) return [];
    this.#received.push(chunk);
    this.#receivedBytes += chunk.length;
    const out: DecodedFrame[] = [];
    while (this.#receivedBytes >= 4) {
      const header = this.#joinedAtLeast(4).readUInt32BE(0);
      const more = (header & runtimedContinuationBit) !== 0;
      const length = header & ~runtimedContinuationBit;
      if (length > this.#maxFrameBytes) {
        this.#broken = true;
        this.#received = [];
        this.#receivedBytes = 0;
        this.#parts = [];
        this.#size = 0;
        out.push({ kind: 'frame-too-large', bytes: length, limit: this.#maxFrameBytes });
        return out;
      }
      if (this.#receivedBytes < 4 + length) break;
      const joined = this.#joinedAtLeast(4 + length);
      const body = joined.subarray(4, 4 + length);
      const rest = joined.subarray(4 + length);
      this.#received[0] = rest;
      if (rest.length === 0) this.#received.shift();
      this.#receivedBytes -= 4 + length;
      const done = this.#take(body, more);
      if (done) out.push(done);
    }
    return out;
  }

  /** The first received buffer, after joining as many as it takes to hold `bytes` (all there). */
  #joinedAtLeast(bytes: number): Buffer {
    const first = this.#received[0] as Buffer;
    if (first.length >= bytes) return first;
    let count = 0;
    let joinedBytes = 0;
    while (joinedBytes < bytes) joinedBytes += (this.#received[count++] as Buffer).length;
    const joined = Buffer.concat(this.#received.slice(0, count), joinedBytes);
    this.#received.splice(0, count, joined);
    return joined;
  }

  /** Adds one frame body to the current message; returns what a finished message turned into. */
  #take(body: Buffer, more: boolean): DecodedFrame | undefined {
    const limit = this.#firstMessageBytes ?? this.#maxMessageBytes;
    if (!more) this.#firstMessageBytes = undefined;
    const total = this.#size + body.length;
    if (this.#skipping === undefined && total > limit) {
      const head: Buffer[] = [];
      let headBytes = 0;
      for (const part of [...this.#parts, body]) {
        if (headBytes >= idSniffBytes) break;
        head.push(Buffer.from(part.subarray(0, idSniffBytes - headBytes)));
        headBytes += Math.min(part.length, idSniffBytes - headBytes);
      }
      this.#skipping = { head: Buffer.concat(head), tail: Buffer.alloc(0) };
      this.#parts = [];
    }
    this.#size = total;
    if (this.#skipping !== undefined) {
      const tail = Buffer.concat([this.#skipping.tail, body.subarray(Math.max(0, body.length - idSniffBytes))]);
      this.#skipping.tail = Buffer.from(tail.subarray(Math.max(0, tail.length - idSniffBytes)));
      if (more) return undefined;
      const { head } = this.#skipping;
      this.#skipping = undefined;
      this.#size = 0;
      const id = sniffMessageId(head.toString('utf8'), tail.toString('utf8'));
      return { kind: 'oversized', bytes: total, limit, ...(id === undefined ? {} : { id }) };
    }
    if (more) {
      // Kept as a view, not copied: the buffer under it holds this frame and at most the rest of
      // one socket read (reads are joined per frame), so a large message is not held twice.
      this.#parts.push(body);
      return undefined;
    }
    const whole = this.#parts.length === 0 ? body : Buffer.concat([...this.#parts, body]);
    this.#parts = [];
    this.#size = 0;
    try {
      return { kind: 'frame', value: JSON.parse(whole.toString('utf8')) };
    } catch (error) {
      return { kind: 'malformed', reason: `message is not JSON: ${(error as Error).message}` };
    } finally {
      // Its bytes and their text are garbage now: a large message's are given back soon.
      releaseLargeTransient(whole.byteLength);
    }
  }
}

/**
 * The numeric top-level `id` of a JSON object seen only by its first and last bytes: a member of
 * its start (`{"type":"ok","id":7,…`) or its last member (`…,"id":7}`, where our senders put it). Pure.
 */
export function sniffMessageId(head: string, tail: string): number | undefined {
  const id = sniffTopLevelId(head) ?? sniffTrailingId(tail);
  return typeof id === 'number' ? id : undefined;
}
