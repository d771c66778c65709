import { defaultMaxFrameBytes } from './runtimed-wire-constants.js';

/** What a decoder found in the bytes so far. */
export type DecodedFrame =
  | { readonly kind: 'frame'; readonly value: unknown }
  | { readonly kind: 'malformed'; readonly reason: string }
  | { readonly kind: 'oversized'; readonly bytes: number; readonly limit: number };

/** One frame: the 4-byte big-endian length, then the UTF-8 JSON of `value`. */
export function encodeRuntimedFrame(value: unknown): Buffer {
  const body = Buffer.from(JSON.stringify(value), 'utf8');
  const header = Buffer.alloc(4);
  header.writeUInt32BE(body.length, 0);
  return Buffer.concat([header, body]);
}

/**
 * Splits a byte stream into frames. A frame whose body is not JSON yields `malformed` and decoding
 * goes on (the length prefix keeps the stream in step); a frame over the limit yields `oversized`
 * and the decoder stops for good, since the stream cannot be trusted after it.
 */
export class RuntimedFrameDecoder {
  #buffer: Buffer = Buffer.alloc(0);
  #broken = false;

  public constructor(private maxFrameBytes: number = defaultMaxFrameBytes) {}

  /** Changes the limit for the frames still to come (e.g. after the handshake). */
  public setMaxFrameBytes(limit: number): void {
    this.maxFrameBytes = limit;
  }

  /** Bytes received but not yet part of a complete frame. */
  public get pendingBytes(): number {
    return this.#buffer.length;
  }

  public push(chunk: Buffer): DecodedFrame[] {
    if (this.#broken) return [];
    this.#buffer = this.#buffer.length === 0 ? chunk : Buffer.concat([this.#buffer, chunk]);
    const out: DecodedFrame[] = [];
    while (this.#buffer.length >= 4) {
      const length = this.#buffer.readUInt32BE(0);
      if (length > this.maxFrameBytes) {
        this.#broken = true;
        this.#buffer = Buffer.alloc(0);
        out.push({ kind: 'oversized', bytes: length, limit: this.maxFrameBytes });
        return out;
      }
      if (this.#buffer.length < 4 + length) break;
      const body = this.#buffer.subarray(4, 4 + length);
      this.#buffer = this.#buffer.subarray(4 + length);
      try {
        out.push({ kind: 'frame', value: JSON.parse(body.toString('utf8')) });
      } catch (error) {
        out.push({ kind: 'malformed', reason: `frame is not JSON: ${(error as Error).message}` });
      }
    }
    return out;
  }
}
