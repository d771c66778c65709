import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { blobReferenceKey } from '@nteract-mcp/runtimed-protocol';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { BlobText } from './blob-text.js';
import { OutputBlobStore, type SpillableOutput } from './output-blob-store.js';

let root: string;
let store: OutputBlobStore;
const sha = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'blobs-'));
  store = new OutputBlobStore({ dir: join(root, 'blobs'), thresholdChars: 10, fsync: true });
});

afterEach(() => {
  rmSync(root, { recursive: true, force: true });
});

describe(OutputBlobStore, () => {
  it('turns only strings over its threshold into references, and back', () => {
    const value = { small: 'exactly10!', big: 'é'.repeat(11), list: ['x'.repeat(20), 3] };
    const text = JSON.stringify(value, store.replacer);
    expect(JSON.parse(text).small).toBe('exactly10!');
    expect(JSON.parse(text).big).toEqual({ [blobReferenceKey]: sha('é'.repeat(11)), chars: 11 });
    const revived = JSON.parse(text, store.reviver);
    expect(revived.small).toBe('exactly10!');
    expect(revived.big).toBeInstanceOf(BlobText);
    expect([revived.big.text(), revived.list[0].text(), revived.list[1]]).toEqual(['é'.repeat(11), 'x'.repeat(20), 3]);
    expect(OutputBlobStore.referencesIn(text)).toEqual(new Set([sha('é'.repeat(11)), sha('x'.repeat(20))]));
  });

  it('stores the string an unchanged object holds once, however often it is serialized, and again once its blob is gone', () => {
    const put = vi.spyOn(store, 'put');
    const output = { output_type: 'stream', name: 'stdout', text: 'q'.repeat(40) };
    const first = JSON.stringify({ outputs: [output] }, store.replacer);
    expect(JSON.stringify({ again: [output] }, store.replacer)).toContain(sha('q'.repeat(40)));
    expect(put).toHaveBeenCalledTimes(1);
    store.sweep(new Set());
    expect(JSON.stringify({ outputs: [output] }, store.replacer)).toBe(first);
    expect(put).toHaveBeenCalledTimes(2);
    expect(store.read(sha('q'.repeat(40)))).toBe('q'.repeat(40));
  });

  it('addresses blobs by content: one file 0600 in a 0700 dir per text, however often it is put', () => {
    const text = 'y'.repeat(100);
    expect(store.put(text)).toBe(sha(text));
    expect(store.put(text)).toBe(sha(text));
    expect(readdirSync(store.dir)).toEqual([sha(text)]);
    expect(readFileSync(join(store.dir, sha(text)), 'utf8')).toBe(text);
    expect(statSync(store.dir).mode & 0o777).toBe(0o700);
    expect(statSync(join(store.dir, sha(text))).mode & 0o777).toBe(0o600);
    expect(store.read(sha(text))).toBe(text);
  });

  it('sweeps the blobs not referenced and the temp files a crash left, keeping the referenced ones', () => {
    const kept = store.put('k'.repeat(50));
    const dropped = store.put('d'.repeat(50));
    writeFileSync(join(store.dir, `${sha('t')}.123.abcd.tmp`), 'torn');
    expect(store.sweep(new Set([kept]))).toBe(1);
    expect(readdirSync(store.dir)).toEqual([kept]);
    expect(store.has(dropped)).toBe(false);
  });

  it('sweeps only candidates when given (what a rotation dropped), leaving every other blob', () => {
    const a = store.put('a'.repeat(50));
    const b = store.put('b'.repeat(50));
    const c = store.put('c'.repeat(50));
    expect(store.sweep(new Set([a]), new Set([a, b]))).toBe(1);
    expect(readdirSync(store.dir).sort()).toEqual([a, c].sort());
  });

  it('revives a reference whose blob is gone as a text saying so, not a failure', () => {
    const text = JSON.stringify({ big: 'z'.repeat(30) }, store.replacer);
    store.sweep(new Set());
    expect(JSON.parse(text, store.reviver).big).toMatch(/^\[output data lost: its blob [0-9a-f]{64} is missing/);
  });

  it('spills the values of outputs over its threshold (text, data, a list of strings) and leaves the rest as they are', () => {
    const small = { output_type: 'stream', name: 'stdout', text: 'short' };
    expect(store.spillOutputs([small])).toEqual([small]);
    const untouched = [small];
    expect(store.spillOutputs(untouched)).toBe(untouched);
    const big = { output_type: 'stream', name: 'stdout', text: 's'.repeat(11) };
    const display = {
      output_type: 'display_data',
      data: { 'text/plain': ['l'.repeat(6), 'l'.repeat(6)], 'text/html': '<b>' },
      metadata: {},
    };
    const [stream, shown, kept] = store.spillOutputs<SpillableOutput>([big, display, small]);
    expect(stream?.text).toBeInstanceOf(BlobText);
    expect((stream?.text as BlobText | undefined)?.text()).toBe('s'.repeat(11));
    const data = (shown?.data ?? {}) as Record<string, unknown>;
    expect((data['text/plain'] as BlobText).text()).toBe('l'.repeat(12));
    expect(data['text/html']).toBe('<b>');
    expect(kept).toBe(small);
    // The given outputs are not changed, and spilling again stores nothing new.
    expect(big.text).toBe('s'.repeat(11));
    const put = vi.spyOn(store, 'put');
    expect(store.spillOutputs([stream, shown].filter((output) => output !== undefined))[0]).toBe(stream);
    expect(put).not.toHaveBeenCalled();
  });

  it('never sweeps a blob a holder references, until it lets go', () => {
    const held = store.put('h'.repeat(50));
    const free = store.put('f'.repeat(50));
    const release = store.hold(() => [held]);
    expect(store.sweep(new Set())).toBe(1);
    expect(readdirSync(store.dir)).toEqual([held]);
    expect(store.sweep(new Set(), new Set([held]))).toBe(0);
    release();
    expect(store.sweep(new Set(), new Set([held]))).toBe(1);
    expect(readdirSync(store.dir)).toEqual([]);
    expect(free).not.toBe(held);
  });
});
