import type { WireOutput } from '@nteract-mcp/runtimed-protocol';
import { el } from './element.js';
import { renderAnsi } from './render-ansi.js';
import { showLatex, showMarkdown } from './render-markdown.js';

/** Where an output's HTML or SVG is served for its frame (`version` changes with the content). */
export type OutputFrameUrl = (index: number, version: string) => string;

/**
 * What stands for an output value the page server did not send inline (a large one): its URL on
 * the page server (content-addressed) and its hash (see the server's `output-references.ts`).
 */
interface OutputReference {
  readonly runtimed_output_ref: string;
  readonly hash: string;
}

function isReference(value: unknown): value is OutputReference {
  return typeof (value as OutputReference | null)?.runtimed_output_ref === 'string';
}

/**
 * An element whose content is a referenced value's text, drawn by `fill` once it is read (the
 * browser keeps the answer: its URL names one content for good).
 */
function referencedText<K extends 'pre' | 'div'>(
  tag: K,
  className: string,
  reference: OutputReference,
  fill: (node: HTMLElementTagNameMap[K], text: string) => void,
): HTMLElementTagNameMap[K] {
  const node = el(tag) as HTMLElementTagNameMap[K];
  node.className = className;
  node.textContent = 'loading…';
  fetch(reference.runtimed_output_ref)
    .then((answer) => (answer.ok ? answer.text() : Promise.reject(new Error(`HTTP ${answer.status}`))))
    .then(
      (value) => {
        node.textContent = '';
        fill(node, value);
      },
      (error: unknown) => {
        node.textContent = `(this output could not be read: ${(error as Error).message})`;
      },
    );
  return node;
}

/** nbformat multiline text: a string or a list of strings. */
function text(value: unknown): string {
  if (Array.isArray(value)) return value.join('');
  return typeof value === 'string' ? value : value === undefined || value === null ? '' : JSON.stringify(value);
}

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

/**
 * One output as elements. Text is set as text (stream and traceback colours as styled spans);
 * images are `data:` URLs, or the page server's URL for a large one (a value the server sent as a
 * reference: it is loaded once, by URL, and cached; a large text is read the same way); markdown
 * and LaTeX are sanitised; HTML and SVG go into a frame
 * sandboxed with `allow-scripts` and popups (its scripts run with an opaque origin: no cookie, no
 * access to this page; its links open in a new tab), loaded from the page server, which serves that
 * document under its own CSP.
 */
export function renderOutput(output: WireOutput, index: number, frameUrl: OutputFrameUrl): HTMLElement {
  const node = renderValue(output, index, frameUrl);
  // A result shows its `Out[n]:` as a Jupyter front end does (drawn by CSS from the attribute).
  if (output.output_type === 'execute_result' && typeof output.execution_count === 'number') {
    node.dataset.prompt = `Out[${output.execution_count}]:`;
  }
  return node;
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

function image(output: WireOutput, mime: string, src: string, kind: string): HTMLElement {
  const img = el('img', { src, alt: mime, decoding: 'async' });
  const { width, height } = imageSize(output, mime);
  if (width !== undefined) img.width = width;
  if (height !== undefined) img.height = height;
  return el('div', { className: `output ${kind} image` }, [img]);
}

function renderValue(output: WireOutput, index: number, frameUrl: OutputFrameUrl): HTMLElement {
  const type = output.output_type;
  if (type === 'stream') {
    const name = typeof output.name === 'string' ? output.name : 'stdout';
    return el('pre', { className: `output stream ${name}` }, [renderAnsi(text(output.text))]);
  }
  if (type === 'error') {
    const traceback = Array.isArray(output.traceback) ? output.traceback.join('\n') : '';
    const fallback = `${text(output.ename)}: ${text(output.evalue)}`;
    return el('pre', { className: 'output error' }, [renderAnsi(traceback || fallback)]);
  }
  const data = (output.data ?? {}) as Record<string, unknown>;
  const mime = mimeRank.find((candidate) => data[candidate] !== undefined);
  const value = mime === undefined ? '' : data[mime];
  const kind = type === 'execute_result' ? 'result' : 'display';
  if (isReference(value)) {
    switch (mime) {
      case 'text/html':
      case 'image/svg+xml':
        return outputFrame(mime, frameUrl(index, value.hash));
      case 'image/png':
      case 'image/jpeg':
      case 'image/gif':
        return image(output, mime, value.runtimed_output_ref, kind);
      case 'text/markdown':
        return referencedText('div', `output ${kind} markdown-body`, value, showMarkdown);
      case 'text/latex':
        return referencedText('div', `output ${kind} latex`, value, showLatex);
      default:
        return referencedText('pre', `output ${kind}`, value, (node, body) => node.append(renderAnsi(body)));
    }
  }
  const body = text(value);
  switch (mime) {
    case 'text/html':
    case 'image/svg+xml':
      return outputFrame(mime, frameUrl(index, contentVersion(body)));
    case 'image/png':
    case 'image/jpeg':
    case 'image/gif':
      return image(output, mime, `data:${mime};base64,${body.replace(/\s/g, '')}`, kind);
    case 'text/markdown': {
      const node = el('div', { className: `output ${kind} markdown-body` });
      showMarkdown(node, body);
      return node;
    }
    case 'text/latex': {
      const node = el('div', { className: `output ${kind} latex` });
      showLatex(node, body);
      return node;
    }
    case 'application/json':
      return el('pre', { className: `output ${kind} json`, textContent: JSON.stringify(data[mime], null, 2) });
    default:
      return el('pre', { className: `output ${kind}` }, [renderAnsi(body)]);
  }
}

/** An HTML or SVG output's sandboxed frame, its document loaded from `src`. */
function outputFrame(mime: 'text/html' | 'image/svg+xml', src: string): HTMLIFrameElement {
  const frame = el('iframe', {
    className: 'output rich',
    title: mime === 'text/html' ? 'HTML output' : 'SVG output',
    // Its links open in a new tab (the linked page is not sandboxed: it is that site's own).
    attrs: { sandbox: 'allow-scripts allow-popups allow-popups-to-escape-sandbox' },
  });
  frame.src = src;
  return frame;
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

/**
 * Sizes the output frames from the height each reports (the frame's own script posts it; the page
 * cannot measure a frame of another origin). A message is taken only from one of this page's
 * frames, and only as a number, clamped.
 */
export function followOutputFrameHeights(): void {
  window.addEventListener('message', (event) => {
    const height = (event.data as { runtimedFrameHeight?: unknown } | null)?.runtimedFrameHeight;
    if (typeof height !== 'number' || !Number.isFinite(height)) return;
    for (const frame of document.querySelectorAll<HTMLIFrameElement>('iframe.rich')) {
      if (frame.contentWindow !== event.source) continue;
      frame.style.height = `${Math.min(1600, Math.max(24, Math.ceil(height)))}px`;
    }
  });
}
