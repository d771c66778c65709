import type { CallToolResult, ImageContent } from '@modelcontextprotocol/sdk/types.js';
import { cutMiddle } from './cut-middle.js';
import type { NbformatOutput as CellOutput } from './nbformat-output.js';
import { defaultOutputLimits, type OutputLimits } from './output-limits.js';
import { OutputsDocument } from './outputs-document.js';
import { describeBytes, prepareImage } from './prepare-image.js';
import type { OutputRepresentation } from './represent-output.js';

/** An image of an output as the JSON names it: where its content item is, or why it is not shown. */
export interface ShapedImage {
  readonly mime_type: string;
  readonly width?: number;
  readonly height?: number;
  /** Index of its `image` item in the result's `content` (the JSON text is item 0). */
  readonly content_index?: number;
  /** Set when it was scaled down to fit: its size in the notebook. */
  readonly scaled_from?: string;
  readonly not_shown?: string;
}

/** One output as a tool shows it. */
export interface ShapedOutput {
  /** nbformat's type, or `omitted` for the line that says which outputs were left out. */
  readonly output_type: string;
  readonly name?: string;
  /** The mime type `text` comes from (rich outputs). */
  readonly mime_type?: string;
  readonly text?: string;
  readonly image?: ShapedImage;
  readonly other_mime_types?: readonly string[];
  readonly ename?: string;
  readonly evalue?: string;
  readonly traceback?: string;
  /** For `omitted`: how many and which, and how to read them. */
  readonly summary?: string;
}

/** How to read the outputs from an offset on: a call the agent can make, e.g. `get_results(execution_id="…", offset=120)`. */
export type ReadMoreCall = (offset: number) => string;

export interface ResultShaperOptions {
  /** Send images as MCP `image` content (default true); when false each image is only described. */
  readonly images?: boolean;
  readonly limits?: OutputLimits;
  /** The serialized size of one result: images take at most half of it. */
  readonly resultBudgetBytes?: number;
}

/** Characters below which an output is not worth showing cut further (its summary is shown instead). */
const smallestUsefulChars = 400;

/**
 * Shapes the outputs of one tool result, over every cell or execution the result carries: each
 * output's text cut to its head and tail with the cut marked (the marker names the call that
 * reads the part left out), at most {@link OutputLimits.maxOutputs} outputs per cell with a
 * one-line summary of the rest, output text within {@link OutputLimits.resultChars} over the
 * result, images as `image` items within their bounds. One instance per tool call.
 */
export class ResultShaper {
  readonly #limits: OutputLimits;
  readonly #images: boolean;
  readonly #content: ImageContent[] = [];
  #charsLeft: number;
  #imageBytesLeft: number;

  public constructor(options: ResultShaperOptions = {}) {
    this.#limits = options.limits ?? defaultOutputLimits;
    this.#images = options.images ?? true;
    this.#charsLeft = this.#limits.resultChars;
    this.#imageBytesLeft = Math.min(
      this.#limits.resultImageBytes,
      Math.floor((options.resultBudgetBytes ?? Number.POSITIVE_INFINITY) / 2),
    );
  }

  /** Base64 characters of the images added so far. */
  public get imageBytes(): number {
    return this.#content.reduce((sum, item) => sum + item.data.length, 0);
  }

  public get limits(): OutputLimits {
    return this.#limits;
  }

  /** `outputs` (one cell's or execution's) as shown; `readMore` names the paging call of their document. */
  public shapeOutputs(outputs: readonly CellOutput[], readMore: ReadMoreCall): ShapedOutput[] {
    if (outputs.length === 0) return [];
    const document = new OutputsDocument(outputs);
    const all = document.outputs;
    const { maxOutputs } = this.#limits;
    const tail = Math.min(this.#limits.tailOutputs, maxOutputs);
    const capped = all.length > maxOutputs;
    const headCount = capped ? maxOutputs - tail : all.length;
    const order = capped
      ? [...range(0, headCount), ...range(all.length - tail, all.length)]
      : [...range(0, all.length)];
    const shaped: ShapedOutput[] = [];
    let previous = -1;
    for (const index of order) {
      if (index !== previous + 1) {
        const reason = `one result shows the first ${headCount} and the last ${tail} outputs of a cell`;
        shaped.push(omitted(all, previous + 1, index, document, readMore, reason));
      }
      if (this.#charsLeft < smallestUsefulChars) {
        // Out of text for this result: one line for the rest, but the last output (where an
        // error or the result is) still shows its head and tail.
        const last = all.length - 1;
        const reason = `one result shows at most ${this.#limits.resultChars} characters of output text`;
        if (index < last) shaped.push(omitted(all, index, last, document, readMore, reason));
        this.#charsLeft = Math.max(this.#charsLeft, smallestUsefulChars);
        shaped.push(this.#shapeOne(all[last] as OutputRepresentation, (at) => readMore(document.bodyStart(last) + at)));
        return shaped;
      }
      const output = all[index] as OutputRepresentation;
      shaped.push(this.#shapeOne(output, (at) => readMore(document.bodyStart(index) + at)));
      previous = index;
    }
    return shaped;
  }

  /** A result: `text` in item 0, then the images its outputs name by `content_index`. */
  public textResult(text: string): CallToolResult {
    return { content: [{ type: 'text', text }, ...this.#content] };
  }

  /** A result: `value` as pretty JSON in item 0, then the images its outputs name by `content_index`. */
  public result(value: unknown): CallToolResult {
    return { content: [{ type: 'text', text: JSON.stringify(value, null, 2) }, ...this.#content] };
  }

  #shapeOne(output: OutputRepresentation, readMore: ReadMoreCall): ShapedOutput {
    const cap = Math.min(this.#limits.outputChars, this.#charsLeft);
    const text = this.#cut(output.text, cap, readMore);
    this.#charsLeft -= text.length;
    if (output.outputType === 'error') {
      return { output_type: 'error', ename: output.ename ?? '', evalue: output.evalue ?? '', traceback: text };
    }
    if (output.outputType === 'stream') return { output_type: 'stream', name: output.name ?? 'stdout', text };
    return {
      output_type: output.outputType,
      ...(output.mimeType === undefined ? {} : { mime_type: output.mimeType }),
      text,
      ...(output.image === undefined ? {} : { image: this.#image(output.image) }),
      ...(output.otherMimeTypes === undefined ? {} : { other_mime_types: output.otherMimeTypes }),
    };
  }

  #cut(text: string, cap: number, readMore: ReadMoreCall): string {
    const cut = cutMiddle(text, cap);
    if (cut === undefined) return text;
    const lines = cut.cutLines === 1 ? '1 line break' : `${cut.cutLines} line breaks`;
    return `${cut.head}\n… [${cut.cutChars} characters (${lines}) cut here; read them with ${readMore(cut.head.length)}] …\n${cut.tail}`;
  }

  #image(image: { readonly mimeType: string; readonly base64: string }): ShapedImage {
    const describe = (reason: string): ShapedImage => ({
      mime_type: image.mimeType,
      not_shown: `${describeBytes((image.base64.length * 3) / 4)} image not shown: ${reason}.`,
    });
    if (!this.#images) return describe('images are off for this call (images=false)');
    if (this.#content.length >= this.#limits.resultImages) {
      return describe(
        `this result already carries ${this.#content.length} images; read this cell alone with get_cell(cell_id=...)`,
      );
    }
    const prepared = prepareImage(image.mimeType, image.base64, {
      maxBase64Chars: Math.min(this.#limits.imageBytes, this.#imageBytesLeft),
      maxEdgePixels: this.#limits.imageEdgePixels,
    });
    const size = {
      ...(prepared.width === undefined ? {} : { width: prepared.width }),
      ...(prepared.height === undefined ? {} : { height: prepared.height }),
    };
    if (!prepared.shown) {
      return {
        mime_type: image.mimeType,
        ...size,
        not_shown: `${describeBytes(prepared.bytes)} image not shown: ${prepared.reason}; it stays in the notebook (its .ipynb file, or the nteract://notebook/<notebook_id> resource).`,
      };
    }
    this.#imageBytesLeft -= prepared.data.length;
    this.#content.push({ type: 'image', data: prepared.data, mimeType: prepared.mimeType });
    return {
      mime_type: prepared.mimeType,
      ...size,
      content_index: this.#content.length,
      ...(prepared.original === undefined
        ? {}
        : {
            scaled_from: `${prepared.original.width}×${prepared.original.height} px, ${describeBytes(prepared.original.bytes)}`,
          }),
    };
  }
}

/** The line that stands for outputs `from`…`to - 1` left out. */
function omitted(
  all: readonly OutputRepresentation[],
  from: number,
  to: number,
  document: OutputsDocument,
  readMore: ReadMoreCall,
  reason: string,
): ShapedOutput {
  const kinds = new Map<string, number>();
  let chars = 0;
  for (const output of all.slice(from, to)) {
    kinds.set(output.outputType, (kinds.get(output.outputType) ?? 0) + 1);
    chars += output.text.length;
  }
  const count = to - from;
  const which = count === 1 ? `output ${from + 1}` : `outputs ${from + 1}–${to}`;
  const what = [...kinds].map(([kind, n]) => `${n} ${kind}`).join(', ');
  return {
    output_type: 'omitted',
    summary: `${count} output${count === 1 ? '' : 's'} not shown (${which} of ${all.length}: ${what}; ${chars} characters): ${reason}. Read ${count === 1 ? 'it' : 'them'} with ${readMore(document.headerStart(from))}.`,
  };
}

function* range(from: number, to: number): Iterable<number> {
  for (let index = from; index < to; index += 1) yield index;
}
