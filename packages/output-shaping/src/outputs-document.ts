import { safeBoundary } from './cut-middle.js';
import type { NbformatOutput as CellOutput } from './nbformat-output.js';
import { type OutputRepresentation, representOutputs } from './represent-output.js';

/** One page of an outputs document, as `get_results` / `get_cell` return it with an `offset`. */
export interface OutputsPage {
  readonly offset: number;
  /** Characters in `text`. */
  readonly length: number;
  /** Characters in the whole document. */
  readonly total_chars: number;
  /** Where the next page starts; absent on the last page. */
  readonly next_offset?: number;
  /** Set when the page was made shorter than asked, to fit one tool result. */
  readonly note?: string;
  readonly text: string;
}

/**
 * The outputs of one cell or execution as one text, the form paging reads: for each output (in
 * {@link representOutputs}' form) a header line `── output i of n: <what>` and then its whole
 * text, nothing cut. Offsets are in UTF-16 characters of that text; the cut markers of shaped
 * outputs name offsets in it.
 */
export class OutputsDocument {
  public readonly outputs: readonly OutputRepresentation[];
  #text: string | undefined;
  #headerStarts: number[] = [];
  #bodyStarts: number[] = [];

  public constructor(outputs: readonly CellOutput[]) {
    this.outputs = representOutputs(outputs);
  }

  /** The whole document. */
  public get text(): string {
    if (this.#text === undefined) this.#build();
    return this.#text as string;
  }

  /** Where output `index`'s header line starts. */
  public headerStart(index: number): number {
    if (this.#text === undefined) this.#build();
    return this.#headerStarts[index] ?? (this.#text as string).length;
  }

  /** Where output `index`'s text starts (after its header line). */
  public bodyStart(index: number): number {
    if (this.#text === undefined) this.#build();
    return this.#bodyStarts[index] ?? (this.#text as string).length;
  }

  /**
   * Characters `offset`… of the document, at most `length` and fewer when more would take the
   * result past `budgetBytes` once escaped twice (JSON in a text item of a JSON-RPC line);
   * `undefined` for an offset past the end (the caller says so, with the document's length).
   */
  public page(offset: number, length: number, budgetBytes: number): OutputsPage | undefined {
    const text = this.text;
    if (offset > text.length) return undefined;
    let end = safeBoundary(text, Math.min(text.length, offset + Math.max(1, length)));
    let slice = text.slice(offset, end);
    let note: string | undefined;
    for (let cost = pageCost(slice); cost > budgetBytes && slice.length > 1; cost = pageCost(slice)) {
      end = safeBoundary(text, offset + Math.max(1, Math.floor(slice.length * (budgetBytes / cost) * 0.98)));
      slice = text.slice(offset, end);
      note = `Shortened to ${slice.length} characters to fit the limit of one tool result; go on from next_offset.`;
    }
    return {
      offset,
      length: slice.length,
      total_chars: text.length,
      ...(end < text.length ? { next_offset: end } : {}),
      ...(note === undefined ? {} : { note }),
      text: slice,
    };
  }

  #build(): void {
    const parts: string[] = [];
    let at = 0;
    const count = this.outputs.length;
    this.outputs.forEach((output, index) => {
      this.#headerStarts.push(at);
      const header = `── output ${index + 1} of ${count}: ${describeOutput(output)}\n`;
      const body = output.text.endsWith('\n') || output.text === '' ? output.text : `${output.text}\n`;
      parts.push(header, body);
      at += header.length;
      this.#bodyStarts.push(at);
      at += body.length;
    });
    this.#text = parts.join('');
  }
}

/** What an output is, for its header line: `stream stdout`, `display_data text/html, image/png`, `error NameError: …`. */
export function describeOutput(output: OutputRepresentation): string {
  switch (output.outputType) {
    case 'stream':
      return `stream ${output.name ?? 'stdout'}`;
    case 'error':
      return `error ${output.ename ?? ''}: ${(output.evalue ?? '').split('\n', 1)[0]}`;
    default: {
      const kinds = [output.mimeType, output.image?.mimeType].filter((kind) => kind !== undefined);
      return kinds.length > 0 ? `${output.outputType} ${kinds.join(', ')}` : output.outputType;
    }
  }
}

/** Bytes a page's text adds to a result: JSON-escaped inside JSON-escaped text, plus its fields. */
function pageCost(text: string): number {
  return Buffer.byteLength(JSON.stringify(JSON.stringify(text))) + 1024;
}
