import type { WireOutput } from '@nteract-mcp/runtimed-protocol';

/**
 * What stands for an output value the page server did not send inline (a large one): its URL on
 * the page server (content-addressed) and its hash (see the server's `output-references.ts`).
 */
interface OutputReference {
  readonly runtimed_output_ref: string;
  readonly hash: string;
}

/** A text value as the output holds it, or as a URL to read it from (a large value sent by reference). */
export type OutputText = { readonly inline: string } | { readonly url: string };

/** Images the page shows as `<img>`. */
type ImageMime = 'image/png' | 'image/jpeg' | 'image/gif';

/**
 * How the page draws one output (see `renderOutput`): `kind` of a rich value is `result` for an
 * `execute_result`, `display` otherwise (its CSS class).
 */
export type OutputChoice =
  | { readonly as: 'stream'; readonly name: string; readonly text: string }
  | { readonly as: 'error'; readonly text: string }
  /** HTML and SVG: a sandboxed frame whose document the page server serves; `version` changes with the content. */
  | { readonly as: 'frame'; readonly mime: 'text/html' | 'image/svg+xml'; readonly version: string }
  | {
      readonly as: 'image';
      readonly kind: string;
      readonly mime: ImageMime;
      readonly src: string;
      readonly width?: number;
      readonly height?: number;
    }
  | { readonly as: 'markdown' | 'latex' | 'text'; readonly kind: string; readonly text: OutputText }
  | { readonly as: 'json'; readonly kind: string; readonly json: string };

/** The MIME types the page draws, best first (as a Jupyter front end ranks them). */
const mimeRank = [
  'text/html',
  'image/svg+xml',
  'image/png',
  'image/jpeg',
  'image/gif',
  'text/markdown',
  'text/latex',
  'application/json',
  'text/plain',
] as const;

function isReference(value: unknown): value is OutputReference {
  return typeof (value as OutputReference | null)?.runtimed_output_ref === 'string';
}

/** nbformat multiline text: a string or a list of strings. */
function text(value: unknown): string {
  if (Array.isArray(value)) return value.join('');
  return typeof value === 'string' ? value : value === undefined || value === null ? '' : JSON.stringify(value);
}

/**
 * How the page draws `output`: a stream or a traceback as terminal text; a rich value by its best
 * MIME type (HTML and SVG in a frame, images as `<img>` from a `data:` URL or, for a large one,
 * the page server's URL, markdown, LaTeX, JSON pretty-printed, else plain text). A value the server
 * sent by reference is read from its URL.
 */
export function outputChoice(output: WireOutput): OutputChoice {
  const type = output.output_type;
  if (type === 'stream') {
    return { as: 'stream', name: typeof output.name === 'string' ? output.name : 'stdout', text: text(output.text) };
  }
  if (type === 'error') {
    const traceback = Array.isArray(output.traceback) ? output.traceback.join('\n') : '';
    return { as: 'error', text: traceback || `${text(output.ename)}: ${text(output.evalue)}` };
  }
  const data = (output.data ?? {}) as Record<string, unknown>;
  const mime = mimeRank.find((candidate) => data[candidate] !== undefined);
  const value = mime === undefined ? '' : data[mime];
  const kind = type === 'execute_result' ? 'result' : 'display';
  const reference = isReference(value) ? value : undefined;
  const body = reference ? '' : text(value);
  const shown: OutputText = reference ? { url: reference.runtimed_output_ref } : { inline: body };
  switch (mime) {
    case 'text/html':
    case 'image/svg+xml':
      return { as: 'frame', mime, version: reference ? reference.hash : contentVersion(body) };
    case 'image/png':
    case 'image/jpeg':
    case 'image/gif':
      return {
        as: 'image',
        kind,
        mime,
        src: reference ? reference.runtimed_output_ref : `data:${mime};base64,${body.replace(/\s/g, '')}`,
        ...imageSize(output, mime),
      };
    case 'text/markdown':
      return { as: 'markdown', kind, text: shown };
    case 'text/latex':
      return { as: 'latex', kind, text: shown };
    case 'application/json':
      if (!reference) return { as: 'json', kind, json: JSON.stringify(value, null, 2) };
      return { as: 'text', kind, text: shown };
    default:
      return { as: 'text', kind, text: shown };
  }
}

/**
 * An image output's size as its metadata gives it (`width`/`height` under the MIME type or at the
 * top): a retina plot is twice its shown size in pixels, and says so there.
 */
function imageSize(output: WireOutput, mime: string): { width?: number; height?: number } {
  const metadata = (output.metadata ?? {}) as Record<string, unknown>;
  const own = (metadata[mime] ?? metadata) as { width?: unknown; height?: unknown };
  const size: { width?: number; height?: number } = {};
  if (typeof own.width === 'number' && own.width > 0) size.width = Math.round(own.width);
  if (typeof own.height === 'number' && own.height > 0) size.height = Math.round(own.height);
  return size;
}

/** A short hash of an output's content (FNV-1a), so its frame is loaded again only when it changed. */
function contentVersion(body: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < body.length; i++) {
    hash ^= body.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0).toString(36);
}
