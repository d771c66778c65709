import { closeSync, openSync, readSync } from 'node:fs';
import { StringDecoder } from 'node:string_decoder';
import type { BlobReference } from '@nteract-mcp/runtimed-protocol';

/** What a {@link BlobText} needs of its store: where blob `sha` is, and what stands for one that is gone. */
export interface BlobTextSource {
  pathOf(sha: string): string;
  lostText(sha: string): string;
}

/** Bytes of a blob read at once by {@link BlobText.chunks}. */
const chunkBytes = 1024 * 1024;

/**
 * How {@link BlobText}s serialize inside {@link serializeBlobTextsAs}; outside it, as their text.
 * A stack, so that nested calls each see their own.
 */
const serializers: Array<(blob: BlobText) => unknown> = [];

/**
 * A large output value (a stream's text, one MIME type's data) that lives in the daemon's blob
 * store instead of the heap: what the room's document and executions hold in its place. It is
 * immutable (a blob is content-addressed), so holders share one instance and a copy of an output
 * keeps it as it is.
 *
 * Guarantees: {@link BlobText.text} is the value as it was stored (UTF-8 round trip), or a line
 * saying its blob is lost when the file was removed from under the daemon; `JSON.stringify` writes
 * it as that text (every peer and the page receive the value itself, as before), unless the call
 * is made inside {@link serializeBlobTextsAs} (the journal writes a {@link BlobReference}).
 */
export class BlobText {
  readonly #source: BlobTextSource;

  public constructor(
    source: BlobTextSource,
    /** sha256 (hex) of the value's UTF-8. */
    public readonly sha: string,
    /** The value's length in UTF-16 characters, as `String.length` counts it. */
    public readonly chars: number,
  ) {
    this.#source = source;
  }

  public get path(): string {
    return this.#source.pathOf(this.sha);
  }

  /** The value, read from its blob now (a new string each call: the caller drops it when done). */
  public text(): string {
    let text = '';
    for (const chunk of this.chunks()) text += chunk;
    return text;
  }

  /**
   * The value in pieces of about a MiB, each whole code points (a UTF-8 sequence is never cut), read
   * as they are asked for; one piece saying the blob is lost when it is.
   */
  public *chunks(): Generator<string> {
    let fd: number;
    try {
      fd = openSync(this.path, 'r');
    } catch {
      yield this.#source.lostText(this.sha);
      return;
    }
    try {
      const decoder = new StringDecoder('utf8');
      const buffer = Buffer.allocUnsafe(chunkBytes);
      for (;;) {
        const read = readSync(fd, buffer, 0, chunkBytes, null);
        if (read === 0) break;
        const piece = decoder.write(buffer.subarray(0, read));
        if (piece.length > 0) yield piece;
      }
      const rest = decoder.end();
      if (rest.length > 0) yield rest;
    } finally {
      closeSync(fd);
    }
  }

  public reference(): BlobReference {
    return { $nteract_blob: this.sha, chars: this.chars };
  }

  public toJSON(): unknown {
    const serialize = serializers.at(-1);
    return serialize ? serialize(this) : this.text();
  }
}

/**
 * Runs `serialize` (a `JSON.stringify` call, synchronous) with every {@link BlobText} it meets
 * written as `as(blob)` instead of its text.
 */
export function serializeBlobTextsAs<T>(as: (blob: BlobText) => unknown, serialize: () => T): T {
  serializers.push(as);
  try {
    return serialize();
  } finally {
    serializers.pop();
  }
}

/** A value's text: its own when a string, read from its blob when a {@link BlobText}; else `undefined`. */
export function textOfValue(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  return value instanceof BlobText ? value.text() : undefined;
}

/**
 * `outputs` with every {@link BlobText} read back into its string (a transient copy, for code that
 * needs the text, such as paging an execution's outputs); the same array when none holds a blob.
 */
export function resolveBlobTexts<T extends { readonly [field: string]: unknown }>(outputs: readonly T[]): readonly T[] {
  if (!outputs.some(outputHoldsBlob)) return outputs;
  return outputs.map((output) => {
    if (!outputHoldsBlob(output)) return output;
    const copy: Record<string, unknown> = { ...output };
    if (copy.text instanceof BlobText) copy.text = copy.text.text();
    const data = copy.data;
    if (data !== null && typeof data === 'object' && !Array.isArray(data)) {
      copy.data = Object.fromEntries(
        Object.entries(data).map(([mime, value]) => [mime, value instanceof BlobText ? value.text() : value]),
      );
    }
    return copy as T;
  });
}

/** The blobs `outputs` hold (their shas), added to `into`. */
export function blobsOfOutputs(outputs: readonly { readonly [field: string]: unknown }[], into: Set<string>): void {
  for (const output of outputs) {
    if (output.text instanceof BlobText) into.add(output.text.sha);
    const data = output.data;
    if (data === null || typeof data !== 'object' || Array.isArray(data)) continue;
    for (const value of Object.values(data)) if (value instanceof BlobText) into.add(value.sha);
  }
}

/** The characters of the {@link BlobText}s `outputs` hold. */
export function blobCharsOf(outputs: readonly { readonly [field: string]: unknown }[]): number {
  let chars = 0;
  for (const output of outputs) {
    if (output.text instanceof BlobText) chars += output.text.chars;
    const data = output.data;
    if (data === null || typeof data !== 'object' || Array.isArray(data)) continue;
    for (const value of Object.values(data)) if (value instanceof BlobText) chars += value.chars;
  }
  return chars;
}

/** Whether `output` holds a {@link BlobText} (its stream text or a MIME type's data). */
export function outputHoldsBlob(output: { readonly [field: string]: unknown }): boolean {
  if (output.text instanceof BlobText) return true;
  const data = output.data;
  if (data === null || typeof data !== 'object' || Array.isArray(data)) return false;
  for (const value of Object.values(data)) if (value instanceof BlobText) return true;
  return false;
}
