import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BlobText, blobCharsOf, outputHoldsBlob, resolveBlobTexts, serializeBlobTextsAs } from './blob-text.js';
import { OutputBlobStore } from './output-blob-store.js';

let root: string;
let store: OutputBlobStore;

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'blob-text-'));
  store = new OutputBlobStore({ dir: join(root, 'blobs'), thresholdChars: 10, fsync: false });
});

afterEach(() => {
  rmSync(root, { recursive: true, force: true });
});

describe(BlobText, () => {
  it('reads back its value whole, in pieces of whole code points across the MiB a piece holds', () => {
    // 'é' is 2 bytes and the emoji 4: the MiB boundaries fall inside their UTF-8 sequences.
    const value = `${'a'.repeat(1024 * 1024 - 1)}é${'😀'.repeat(300_000)}"\\\n\u0001end`;
    const blob = store.blobText(value);
    expect(blob.chars).toBe(value.length);
    const pieces = [...blob.chunks()];
    expect(pieces.length).toBeGreaterThan(1);
    expect(pieces.join('')).toBe(value);
    expect(blob.text()).toBe(value);
  });

  it('serializes as its text, and as what serializeBlobTextsAs says within it', () => {
    const blob = store.blobText('z'.repeat(20));
    const output = { output_type: 'stream', text: blob };
    expect(JSON.parse(JSON.stringify(output)).text).toBe('z'.repeat(20));
    const inJournal = serializeBlobTextsAs(
      (it) => it.reference(),
      () => JSON.stringify(output),
    );
    expect(JSON.parse(inJournal).text).toEqual({ $nteract_blob: blob.sha, chars: 20 });
    // Outside it again: the text.
    expect(JSON.stringify(blob)).toBe(JSON.stringify('z'.repeat(20)));
  });

  it('says its blob is lost when the file was removed, instead of failing', () => {
    const blob = store.blobText('w'.repeat(20));
    store.sweep(new Set());
    expect(blob.text()).toMatch(/^\[output data lost: its blob [0-9a-f]{64} is missing/);
  });

  it('resolves the blobs of outputs into strings for code that needs the text, leaving outputs without blobs as they are', () => {
    const plain = [{ output_type: 'stream', text: 'short' }];
    expect(resolveBlobTexts(plain)).toBe(plain);
    const [spilled] = store.spillOutputs([
      { output_type: 'display_data', data: { 'text/plain': 'p'.repeat(30) }, text: 't'.repeat(30) },
    ]);
    expect(resolveBlobTexts([spilled as never])).toEqual([
      { output_type: 'display_data', data: { 'text/plain': 'p'.repeat(30) }, text: 't'.repeat(30) },
    ]);
    // What the outputs hold in blobs, counted without reading them; a plain output holds none.
    expect(blobCharsOf([spilled as never, ...plain])).toBe(60);
    expect(outputHoldsBlob(spilled as never)).toBe(true);
    expect(outputHoldsBlob(plain[0] as never)).toBe(false);
  });
});
