import type { WireOutput } from '@nteract-mcp/runtimed-protocol';
import { el } from './element.js';
import { type OutputText, outputChoice } from './output-choice.js';
import { renderAnsi } from './render-ansi.js';
import { showLatex, showMarkdown } from './render-markdown.js';

/** Where an output's HTML or SVG is served for its frame (`version` changes with the content). */
export type OutputFrameUrl = (index: number, version: string) => string;

/**
 * An element whose content is a referenced value's text, drawn by `fill` once it is read (the
 * browser keeps the answer: its URL names one content for good).
 */
function referencedText<K extends 'pre' | 'div'>(
  tag: K,
  className: string,
  url: string,
  fill: (node: HTMLElementTagNameMap[K], text: string) => void,
): HTMLElementTagNameMap[K] {
  const node = el(tag) as HTMLElementTagNameMap[K];
  node.className = className;
  node.textContent = 'loading…';
  fetch(url)
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

/** An element holding `text`, drawn by `fill` now, or once read when it is sent by URL. */
function textual<K extends 'pre' | 'div'>(
  tag: K,
  className: string,
  text: OutputText,
  fill: (node: HTMLElementTagNameMap[K], text: string) => void,
): HTMLElementTagNameMap[K] {
  if ('url' in text) return referencedText(tag, className, text.url, fill);
  const node = el(tag) as HTMLElementTagNameMap[K];
  node.className = className;
  fill(node, text.inline);
  return node;
}

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

function renderValue(output: WireOutput, index: number, frameUrl: OutputFrameUrl): HTMLElement {
  const choice = outputChoice(output);
  switch (choice.as) {
    case 'stream':
      return el('pre', { className: `output stream ${choice.name}` }, [renderAnsi(choice.text)]);
    case 'error':
      return el('pre', { className: 'output error' }, [renderAnsi(choice.text)]);
    case 'frame':
      return outputFrame(choice.mime, frameUrl(index, choice.version));
    case 'image': {
      const img = el('img', { src: choice.src, alt: choice.mime, decoding: 'async' });
      if (choice.width !== undefined) img.width = choice.width;
      if (choice.height !== undefined) img.height = choice.height;
      return el('div', { className: `output ${choice.kind} image` }, [img]);
    }
    case 'markdown':
      return textual('div', `output ${choice.kind} markdown-body`, choice.text, showMarkdown);
    case 'latex':
      return textual('div', `output ${choice.kind} latex`, choice.text, showLatex);
    case 'json':
      return el('pre', { className: `output ${choice.kind} json`, textContent: choice.json });
    case 'text':
      return textual('pre', `output ${choice.kind}`, choice.text, (node, body) => node.append(renderAnsi(body)));
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
