import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BlobText } from '../persistence/blob-text.js';
import { OutputBlobStore } from '../persistence/output-blob-store.js';
import { NotebookDocument } from './notebook-document.js';

let root: string;
let store: OutputBlobStore;

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'document-blobs-'));
  store = new OutputBlobStore({ dir: join(root, 'blobs'), thresholdChars: 100, fsync: false });
});

afterEach(() => {
  rmSync(root, { recursive: true, force: true });
});

/** A notebook file with a large stream, a large display (a list of lines) and a small output. */
function notebookText(): string {
  const awkward = `quote " backslash \\ newline \n tab \t control \u0001 é 😀 `.repeat(20);
  return `${JSON.stringify(
    {
      cells: [
        {
          cell_type: 'code',
          id: 'big',
          metadata: {},
          source: ['print(1)\n'],
          execution_count: 1,
          outputs: [
            { output_type: 'stream', name: 'stdout', text: awkward },
            { output_type: 'display_data', data: { 'text/plain': ['line\n', 'x'.repeat(200)] }, metadata: {} },
            { output_type: 'stream', name: 'stderr', text: 'small' },
          ],
        },
        { cell_type: 'markdown', id: 'md', metadata: {}, source: ['# hi'] },
      ],
      metadata: { kernelspec: { name: 'python3' } },
      nbformat: 4,
      nbformat_minor: 5,
    },
    null,
    1,
  )}\n`;
}

describe('NotebookDocument with large outputs kept in blobs', () => {
  it('keeps the values over the threshold as blobs, and writes the same .ipynb text as with them in memory', () => {
    const inMemory = NotebookDocument.fromIpynb(notebookText(), 'a.ipynb');
    const kept = NotebookDocument.fromIpynb(notebookText(), 'a.ipynb');
    const version = kept.version;
    kept.keepLargeOutputs((outputs) => store.spillOutputs(outputs));
    expect(kept.version).toBe(version);
    const [stream, display, small] = kept.cell('big').outputs;
    expect(stream?.text).toBeInstanceOf(BlobText);
    expect((display?.data as Record<string, unknown> | undefined)?.['text/plain']).toBeInstanceOf(BlobText);
    expect(small?.text).toBe('small');
    const held = new Set<string>();
    kept.blobsHeld(held);
    expect(held.size).toBe(2);
    const text = kept.ipynbText();
    expect(text.holdsBlobs).toBe(true);
    expect(text.text()).toBe(inMemory.toIpynb());
    expect(kept.toIpynb()).toBe(inMemory.toIpynb());
    expect([...text.chunks()].join('')).toBe(inMemory.toIpynb());
    expect(text.inlineChars).toBeLessThan(inMemory.toIpynb().length - 200);
    // What a write reads through: the held text and every value read from its blob.
    const blobChars = [
      stream?.text,
      (display?.data as Record<string, unknown> | undefined)?.['text/plain'],
    ].reduce<number>((sum, value) => sum + (value as BlobText).chars, 0);
    expect(text.chars).toBe(text.inlineChars + blobChars);
  });

  it('keeps the outputs of a finished run and of replayed changes in blobs, sharing them as they are', () => {
    const document = NotebookDocument.fromIpynb(notebookText(), 'a.ipynb');
    document.keepLargeOutputs((outputs) => store.spillOutputs(outputs));
    const run = document.setExecutionState(
      'big',
      [{ output_type: 'stream', name: 'stdout', text: 'r'.repeat(500) }],
      2,
    );
    const blob = run.outputs[0]?.text;
    expect(blob).toBeInstanceOf(BlobText);
    expect((blob as BlobText).text()).toBe('r'.repeat(500));
    // A replayed `set` of that cell (as undo or the journal gives it) keeps the same blob.
    document.apply({ op: 'set', cell: run });
    expect(document.cell('big').outputs[0]?.text).toBe(blob);
    // A running cell's outputs stay strings until its run ends (an append costs its change).
    document.setRunningOutputs('big', [{ output_type: 'stream', name: 'stdout', text: 'g'.repeat(500) }], 1);
    expect(document.cell('big').outputs[0]?.text).toBe('g'.repeat(500));
  });
});
