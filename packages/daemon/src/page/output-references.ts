import { createHash } from 'node:crypto';
import type { WireCell, WireOutput } from '@nteract-mcp/runtimed-protocol';
import { BlobText } from '../persistence/blob-text.js';

/**
 * The largest output value (one MIME type's data, in characters) the page receives inline; a
 * larger one (a plot's PNG, a big HTML table) comes as an {@link OutputReference} and the page
 * loads it by its URL, once: an edit elsewhere in the notebook never sends it again.
 */
export const inlineOutputLimit = 4096;

/**
 * What stands in the page's copy of an output for a value over {@link inlineOutputLimit}: where
 * the page server serves it (content-addressed: the URL changes with the content) and its size.
 */
export interface OutputReference {
  readonly runtimed_output_ref: string;
  readonly hash: string;
  readonly chars: number;
}

/** The hash of each large value, by the output's `data` object (the room keeps an output's objects as they are until it replaces them). */
const hashes = new WeakMap<object, Map<string, { readonly chars: number; readonly hash: string }>>();

/**
 * A value of an output's `data` as its text (nbformat multiline text is a list of strings; a value
 * kept in a blob is read from it).
 */
export function outputValueText(value: unknown): string {
  if (value instanceof BlobText) return value.text();
  if (Array.isArray(value)) return value.join('');
  return typeof value === 'string' ? value : JSON.stringify(value ?? null);
}

/**
 * The content hash of a value kept in a blob, without reading it: its blob is named by the SHA-256
 * of its UTF-8, as {@link outputValueHash} hashes a string.
 */
export function blobValueHash(value: BlobText): string {
  return Buffer.from(value.sha, 'hex').toString('base64url').slice(0, 22);
}

/** The content hash of an output value, as its URL names it (SHA-256, base64url, 128 bits). */
export function outputValueHash(text: string): string {
  return createHash('sha256').update(text).digest('base64url').slice(0, 22);
}

/**
 * Where the page server serves the value `mime` of output `index` of a cell, to the page whose
 * output capability is `cap` (see `PageAccess.outputCapability`).
 */
export function outputValueUrl(
  notebookId: string,
  cellId: string,
  index: number,
  mime: string,
  hash: string,
  cap: string,
): string {
  return `/notebooks/${notebookId}/outputs/${encodeURIComponent(cellId)}/${index}/${encodeURIComponent(mime)}?v=${hash}&cap=${cap}`;
}

/** `output` as the page receives it: each value over {@link inlineOutputLimit} replaced by its reference (loaded with `cap`). */
export function referenceOutput(
  notebookId: string,
  cellId: string,
  index: number,
  output: WireOutput,
  cap: string,
): WireOutput {
  const data = output.data;
  if (data === null || typeof data !== 'object' || Array.isArray(data)) return output;
  let referenced: Record<string, unknown> | undefined;
  for (const [mime, value] of Object.entries(data)) {
    const chars =
      typeof value === 'string'
        ? value.length
        : Array.isArray(value)
          ? sumLengths(value)
          : value instanceof BlobText
            ? value.chars
            : 0;
    if (chars <= inlineOutputLimit) continue;
    referenced ??= { ...data };
    referenced[mime] = {
      runtimed_output_ref: outputValueUrl(notebookId, cellId, index, mime, hashOf(data, mime, value), cap),
      hash: hashOf(data, mime, value),
      chars,
    } satisfies OutputReference;
  }
  return referenced === undefined ? output : { ...output, data: referenced };
}

/** `cell` as the page receives it: its outputs through {@link referenceOutput}. */
export function referenceCell<T extends WireCell>(notebookId: string, cell: T, cap: string): T {
  return {
    ...cell,
    outputs: cell.outputs.map((output, index) => referenceOutput(notebookId, cell.id, index, output, cap)),
  };
}

/**
 * A broadcast frame or a request's answer as the page receives it: the cell it carries (an insert,
 * an update, an answer's `cell`) and an `output_set`'s output referenced; `execution_done`
 * without the outputs of a run whose cell is gone (the page has no cell to show them in).
 */
export function referenceFrame(
  notebookId: string,
  frame: Readonly<Record<string, unknown>>,
  cap: string,
): Readonly<Record<string, unknown>> {
  const cell = frame.cell as WireCell | undefined;
  if (cell !== undefined && cell !== null && Array.isArray(cell.outputs)) {
    return { ...frame, cell: referenceCell(notebookId, cell, cap) };
  }
  if (frame.event === 'output_set') {
    const output = frame.output as WireOutput;
    return { ...frame, output: referenceOutput(notebookId, String(frame.cell_id), Number(frame.index), output, cap) };
  }
  if (frame.event === 'execution_done' && (frame.outputs !== undefined || frame.blob_outputs !== undefined)) {
    // The page keeps the outputs the output events built; `blob_outputs` is for agents' copies.
    const { outputs: _dropped, blob_outputs: _blobs, ...rest } = frame;
    return rest;
  }
  return frame;
}

function hashOf(data: object, mime: string, value: unknown): string {
  if (value instanceof BlobText) return blobValueHash(value);
  const text = outputValueText(value);
  let known = hashes.get(data);
  const cached = known?.get(mime);
  if (cached && cached.chars === text.length) return cached.hash;
  const hash = outputValueHash(text);
  if (!known) {
    known = new Map();
    hashes.set(data, known);
  }
  known.set(mime, { chars: text.length, hash });
  return hash;
}

function sumLengths(parts: readonly unknown[]): number {
  let sum = 0;
  for (const part of parts) sum += typeof part === 'string' ? part.length : 0;
  return sum;
}
