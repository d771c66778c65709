import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * What stands, in JSON, for an output value the daemon keeps in its blob store (a stream's text
 * or one MIME type's data, over the daemon's size threshold): the SHA-256 (hex) of the value's
 * UTF-8, which names its file, and the value's length in UTF-16 characters. The daemon's journal
 * writes these; a notebook peer whose handshake asks for `blob_references` receives them in place
 * of such values and reads the value from the file when it needs the text.
 */
export interface BlobReference {
  readonly $nteract_blob: string;
  readonly chars: number;
}

/** The key that marks a {@link BlobReference}. */
export const blobReferenceKey = '$nteract_blob';

const shaPattern = /^[0-9a-f]{64}$/;

/** Whether `value` is a {@link BlobReference} (a sha of 64 hex digits and a whole `chars`). */
export function isBlobReference(value: unknown): value is BlobReference {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const reference = value as Record<string, unknown>;
  return (
    typeof reference.$nteract_blob === 'string' &&
    shaPattern.test(reference.$nteract_blob) &&
    Number.isInteger(reference.chars) &&
    (reference.chars as number) >= 0
  );
}

/**
 * Where blob `sha` lives in the blob directory `dir` (the daemon writes it there, a reader finds it
 * there: the one layout both sides know). Throws for a name that is not a sha, so no path can be
 * built from anything else.
 */
export function blobFilePath(dir: string, sha: string): string {
  if (!shaPattern.test(sha)) throw new Error(`not a blob name: ${sha}`);
  return join(dir, sha);
}

/** The line that stands for the value of a blob that is gone (removed by hand, or a disk that lost it). */
export function lostBlobText(dir: string, sha: string): string {
  return `[output data lost: its blob ${sha} is missing from ${dir}]`;
}

/**
 * The value `reference` stands for, read from the blob directory `dir` now (a new string: the
 * caller drops it when done), or {@link lostBlobText} when its file is gone.
 */
export function readBlobText(dir: string, reference: BlobReference): string {
  try {
    return readFileSync(blobFilePath(dir, reference.$nteract_blob), 'utf8');
  } catch {
    return lostBlobText(dir, reference.$nteract_blob);
  }
}
