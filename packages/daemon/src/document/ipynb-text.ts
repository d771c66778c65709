import { createHash } from 'node:crypto';
import { BlobText } from '../persistence/blob-text.js';

/**
 * A notebook's `.ipynb` text as it was when taken: its structure as strings, each large output
 * value still in its blob (read only as {@link IpynbText.chunks} reaches it). A writer holds one
 * piece at a time, not the notebook: a save of a notebook with 200 MB of outputs does not build a
 * 200 MB string.
 *
 * Guarantees: the pieces put together are what `JSON.stringify` gives for the notebook with each
 * blob's value in place (JSON escapes each character on its own, and each piece of a blob is whole
 * code points); the text does not change once taken (blobs are content-addressed, immutable).
 */
export class IpynbText {
  /** The text between values, and the values kept in blobs, in order. */
  readonly #parts: readonly (string | BlobText)[];

  public constructor(parts: readonly (string | BlobText)[]) {
    this.#parts = parts;
  }

  /** The pieces of the text, in order; a blob's value as pieces of its JSON string. */
  public *chunks(): Generator<string> {
    for (const part of this.#parts) {
      if (typeof part === 'string') {
        if (part.length > 0) yield part;
        continue;
      }
      yield '"';
      for (const chunk of part.chunks()) yield JSON.stringify(chunk).slice(1, -1);
      yield '"';
    }
  }

  /** The whole text as one string (for small notebooks and tests; a save writes {@link IpynbText.chunks}). */
  public text(): string {
    let text = '';
    for (const chunk of this.chunks()) text += chunk;
    return text;
  }

  /** sha256 (hex) of the text's UTF-8, read piece by piece. */
  public sha256(): string {
    const hash = createHash('sha256');
    for (const chunk of this.chunks()) hash.update(chunk, 'utf8');
    return hash.digest('hex');
  }

  /** The characters held in memory (the text but its values in blobs). */
  public get inlineChars(): number {
    let chars = 0;
    for (const part of this.#parts) if (typeof part === 'string') chars += part.length;
    return chars;
  }

  /**
   * The characters a write reads through (held, and read from blobs piece by piece): what a write
   * leaves behind as garbage is of this order, each piece read and escaped once per pass.
   */
  public get chars(): number {
    let chars = 0;
    for (const part of this.#parts) chars += typeof part === 'string' ? part.length : part.chars;
    return chars;
  }

  /** Whether any value is in a blob (else the text is one string: {@link IpynbText.text} costs nothing more). */
  public get holdsBlobs(): boolean {
    return this.#parts.some((part) => part instanceof BlobText);
  }
}
