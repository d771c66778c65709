import { htmlToMarkdown } from './html-to-markdown.js';
import type { NbformatOutput as CellOutput } from './nbformat-output.js';

/** Raster image types sent as MCP `image` content, in order of preference. */
export const imageMimeTypes = ['image/png', 'image/jpeg', 'image/gif', 'image/webp'] as const;

/**
 * The text of a rich output (`execute_result`, `display_data`) comes from the first of these its
 * data holds:
 * 1. `text/markdown`, as is;
 * 2. `text/latex`, as is;
 * 3. `text/html`, converted to Markdown, unless it holds a `<table>` and `text/plain` is there
 *    too (a pandas DataFrame reads better as its plain repr) or converts to nothing (script-only
 *    widget HTML); HTML longer than {@link htmlConversionLimit} is not converted (about a second
 *    per 500 KB): `text/plain` is taken instead when there is one, else the HTML source;
 * 4. `image/svg+xml`, its source, when the output has no raster image;
 * 5. `application/json`, pretty-printed;
 * 6. `text/plain`.
 * Independently, the first raster image of {@link imageMimeTypes} becomes an image (its text is
 * then the `text/plain` alt text, e.g. `<Figure size 640x480 with 1 Axes>`, unless 1–3 apply).
 * Every other mime type of the data is named in `otherMimeTypes`.
 */
export const textPreference = [
  'text/markdown',
  'text/latex',
  'text/html',
  'image/svg+xml',
  'application/json',
  'text/plain',
] as const;

/** Characters of HTML converted to Markdown at most; longer HTML is shown otherwise (see {@link textPreference}). */
export const htmlConversionLimit = 200_000;

/** One nbformat output read for showing: its whole text, and its image if any. Never cut. */
export interface OutputRepresentation {
  readonly outputType: string;
  /** Stream name (`stdout`, `stderr`). */
  readonly name?: string;
  /** The mime type `text` comes from (rich outputs). */
  readonly mimeType?: string;
  /** Stream text, the chosen rich representation, or an error's traceback (without ANSI colours). */
  readonly text: string;
  readonly image?: { readonly mimeType: string; readonly base64: string };
  readonly otherMimeTypes?: readonly string[];
  readonly ename?: string;
  readonly evalue?: string;
}

const ansiEscape = new RegExp(`${String.fromCharCode(27)}\\[[0-9;?]*[A-Za-z]`, 'g');

/**
 * `outputs` ready to show: consecutive stream outputs of one name joined into one (as Jupyter
 * shows them), each output in its preferred representation ({@link textPreference}). Pure.
 */
export function representOutputs(outputs: readonly CellOutput[]): OutputRepresentation[] {
  const represented: OutputRepresentation[] = [];
  let pendingStream: { name: string; parts: string[] } | undefined;
  const flush = (): void => {
    if (pendingStream === undefined) return;
    represented.push({ outputType: 'stream', name: pendingStream.name, text: pendingStream.parts.join('') });
    pendingStream = undefined;
  };
  for (const output of outputs) {
    if (output.output_type === 'stream') {
      const name = typeof output.name === 'string' ? output.name : 'stdout';
      if (pendingStream?.name !== name) {
        flush();
        pendingStream = { name, parts: [] };
      }
      pendingStream.parts.push(multiline(output.text));
      continue;
    }
    flush();
    represented.push(representOutput(output));
  }
  flush();
  return represented;
}

/** One output (not a stream run) in its preferred representation. Pure. */
export function representOutput(output: CellOutput): OutputRepresentation {
  switch (output.output_type) {
    case 'stream':
      return {
        outputType: 'stream',
        name: typeof output.name === 'string' ? output.name : 'stdout',
        text: multiline(output.text),
      };
    case 'execute_result':
    case 'display_data':
      return representRich(output.output_type, output.data);
    case 'error': {
      const traceback = Array.isArray(output.traceback) ? output.traceback.map(String).join('\n') : '';
      return {
        outputType: 'error',
        ename: String(output.ename ?? ''),
        evalue: String(output.evalue ?? ''),
        text: traceback.replace(ansiEscape, ''),
      };
    }
    default:
      return { outputType: output.output_type, text: '' };
  }
}

function representRich(outputType: string, rawData: unknown): OutputRepresentation {
  const data = (typeof rawData === 'object' && rawData !== null ? rawData : {}) as Record<string, unknown>;
  const imageMime = imageMimeTypes.find((mime) => typeof data[mime] === 'string' || Array.isArray(data[mime]));
  const image = imageMime === undefined ? undefined : { mimeType: imageMime, base64: base64Of(data[imageMime]) };
  let chosen: { mimeType: string; text: string } | undefined;
  for (const mimeType of textPreference) {
    if (!(mimeType in data)) continue;
    const text = textOf(mimeType, data[mimeType], data, image !== undefined);
    if (text !== undefined) {
      chosen = { mimeType, text };
      break;
    }
  }
  const others = Object.keys(data).filter((mime) => mime !== chosen?.mimeType && mime !== imageMime);
  return {
    outputType,
    ...(chosen ? { mimeType: chosen.mimeType } : {}),
    text: chosen?.text ?? '',
    ...(image ? { image } : {}),
    ...(others.length > 0 ? { otherMimeTypes: others } : {}),
  };
}

/** The text of one mime type, or `undefined` when the preference order passes it over. */
function textOf(
  mimeType: string,
  value: unknown,
  data: Record<string, unknown>,
  hasImage: boolean,
): string | undefined {
  switch (mimeType) {
    case 'text/html': {
      const html = multiline(value);
      if ('text/plain' in data && (html.length > htmlConversionLimit || /<table[\s>]/i.test(html))) return undefined;
      if (html.length > htmlConversionLimit) return html;
      const markdown = htmlToMarkdown(html);
      return markdown === '' ? undefined : markdown;
    }
    case 'image/svg+xml':
      return hasImage ? undefined : multiline(value);
    case 'application/json':
      return typeof value === 'string' ? value : (JSON.stringify(value, null, 2) ?? '');
    default:
      return multiline(value);
  }
}

/** nbformat keeps long strings as arrays of lines. */
function multiline(value: unknown): string {
  if (Array.isArray(value)) return value.map(String).join('');
  return typeof value === 'string' ? value : '';
}

function base64Of(value: unknown): string {
  return multiline(value).replace(/\s+/g, '');
}
