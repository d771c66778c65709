/**
 * How one running execution changes a cell's outputs, as the room tells its peers (the
 * `output_set`, `stream_appended` and `outputs_cleared` broadcasts) and as every peer (the child's
 * copy, the page) applies it. Each edit is the size of the change, not of the outputs: a chatty
 * cell costs each peer the text it printed, once.
 *
 * No schema library here, so that the live page's bundle can use it (`/output-edit` subpath).
 */

import type { WireRoomEvent } from './schemas/wire-room-event.js';

/** An nbformat 4 output, as far as an edit needs to know it. */
export interface EditableOutput {
  readonly output_type: string;
  readonly [field: string]: unknown;
}

/**
 * - `set`: the output at `index` is now `output` (a new output when `index` is the count so far,
 *   else a replaced one: an updated display).
 * - `append`: the stream output at `index` is now its first `keep` characters followed by `text`
 *   (`keep` below its length: a `\r` or `\b` rewrote the end of its last line).
 * - `clear`: no outputs (the code's `clear_output`).
 */
export type OutputEdit =
  | { readonly kind: 'set'; readonly index: number; readonly output: EditableOutput }
  | { readonly kind: 'append'; readonly index: number; readonly keep: number; readonly text: string }
  | { readonly kind: 'clear' };

/**
 * The outputs after `edit`, a new array (the given one and its outputs are not changed); `undefined`
 * when the edit does not fit them (an index past the end, an append to what is not a stream or
 * beyond its text): then the peer's copy is not the room's, and it reads the cell again.
 */
export function applyOutputEdit(outputs: readonly EditableOutput[], edit: OutputEdit): EditableOutput[] | undefined {
  switch (edit.kind) {
    case 'clear':
      return [];
    case 'set': {
      if (!isIndex(edit.index, outputs.length + 1)) return undefined;
      const next: EditableOutput[] = outputs.slice();
      next[edit.index] = edit.output;
      return next;
    }
    case 'append': {
      const current = outputs[edit.index];
      if (!isIndex(edit.index, outputs.length) || current === undefined || current.output_type !== 'stream')
        return undefined;
      const text = typeof current.text === 'string' ? current.text : '';
      if (!isIndex(edit.keep, text.length + 1)) return undefined;
      const next: EditableOutput[] = outputs.slice();
      const kept = edit.keep === text.length ? text : text.slice(0, edit.keep);
      next[edit.index] = { ...current, text: kept + edit.text };
      return next;
    }
  }
}

/** The broadcasts that carry an output edit. */
export type WireOutputEvent = Extract<WireRoomEvent, { event: 'output_set' | 'stream_appended' | 'outputs_cleared' }>;

/** What names an output event: the document version it made, the execution and cell, its number among the execution's. */
export interface OutputEventPlace {
  readonly document_version: number;
  readonly execution_id: string;
  readonly cell_id: string;
  readonly seq: number;
}

/** The broadcast that tells `edit`. */
export function outputEventOf(edit: OutputEdit, place: OutputEventPlace): WireOutputEvent {
  switch (edit.kind) {
    case 'clear':
      return { event: 'outputs_cleared', ...place };
    case 'set':
      return {
        event: 'output_set',
        ...place,
        index: edit.index,
        output: edit.output as Extract<WireOutputEvent, { event: 'output_set' }>['output'],
      };
    case 'append':
      return { event: 'stream_appended', ...place, index: edit.index, keep: edit.keep, text: edit.text };
  }
}

/** The edit an output broadcast tells. */
export function outputEditOf(event: WireOutputEvent): OutputEdit {
  switch (event.event) {
    case 'outputs_cleared':
      return { kind: 'clear' };
    case 'output_set':
      return { kind: 'set', index: event.index, output: event.output };
    case 'stream_appended':
      return { kind: 'append', index: event.index, keep: event.keep, text: event.text };
  }
}

/** Whether `index` is a whole number in `0..limit-1`. */
function isIndex(index: number, limit: number): boolean {
  return Number.isInteger(index) && index >= 0 && index < limit;
}
