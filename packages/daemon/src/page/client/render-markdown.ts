import DOMPurify from 'dompurify';
import type Katex from 'katex';
import { Marked, type TokenizerAndRendererExtension, type Tokens } from 'marked';

/** KaTeX, once its chunk is loaded: on the first formula (most of a long notebook has none). */
let katex: typeof Katex | undefined;
let katexLoading: Promise<unknown> | undefined;
/** Set while a text is rendered when it has a formula that waits for KaTeX. */
let mathWaiting = false;

function loadKatex(): Promise<unknown> {
  katexLoading ??= import('katex').then((module) => {
    katex = module.default;
  });
  // A chunk that failed to load is asked for again by the next formula.
  katexLoading.catch(() => {
    katexLoading = undefined;
  });
  return katexLoading;
}

/**
 * TeX as MathML (KaTeX's `mathml` output: the browser draws it, no fonts or font CSS). A formula
 * KaTeX cannot read is shown as its source, marked as an error, with KaTeX's reason as the title;
 * before KaTeX is loaded, as its source (see {@link show}).
 */
function renderTex(tex: string, displayMode: boolean): string {
  if (!katex) {
    mathWaiting = true;
    return `<code class="math-pending">${escapeHtml(tex)}</code>`;
  }
  try {
    return katex.renderToString(tex, { output: 'mathml', displayMode, throwOnError: true });
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return `<code class="math-error" title="${escapeHtml(reason)}">${escapeHtml(tex)}</code>`;
  }
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}

interface MathToken extends Tokens.Generic {
  readonly text: string;
  readonly display: boolean;
}

/** `$$ … $$` on lines of their own: a displayed formula. */
const blockMath: TokenizerAndRendererExtension = {
  name: 'blockMath',
  level: 'block',
  start: (src) => src.match(/^ {0,3}\$\$/m)?.index,
  tokenizer(src) {
    const match = /^ {0,3}\$\$([\s\S]+?)\$\$[^\S\n]*(?:\n|$)/.exec(src);
    if (!match) return undefined;
    return { type: 'blockMath', raw: match[0], text: (match[1] as string).trim(), display: true };
  },
  renderer: (token) => `<div class="math-display">${renderTex((token as MathToken).text, true)}</div>\n`,
};

/**
 * `$…$` within text (not `$ 5`, not `5$`, not before a digit: prices stay text), and `$$…$$`
 * within a paragraph (displayed).
 */
const inlineMath: TokenizerAndRendererExtension = {
  name: 'inlineMath',
  level: 'inline',
  start: (src) => src.indexOf('$'),
  tokenizer(src) {
    const display = /^\$\$((?:\\.|[^\\$])+?)\$\$/.exec(src);
    if (display) return { type: 'inlineMath', raw: display[0], text: (display[1] as string).trim(), display: true };
    const inline = /^\$(?!\s)((?:\\.|[^\\$\n])+?)(?<!\s)\$(?!\d)/.exec(src);
    if (!inline) return undefined;
    return { type: 'inlineMath', raw: inline[0], text: inline[1] as string, display: false };
  },
  renderer: (token) => renderTex((token as MathToken).text, (token as MathToken).display),
};

/** Where a cell's images come from while its text is rendered (see {@link showMarkdown}). */
export interface MarkdownImages {
  /** The cell's `attachments`: what an `attachment:<name>` image stands for. */
  readonly attachments?: Readonly<Record<string, unknown>> | undefined;
  /** Where the page server serves an image at `path` relative to the notebook's folder. */
  readonly fileUrl?: ((path: string) => string) | undefined;
}

let imagesNow: MarkdownImages | undefined;

/**
 * A cell attachment as a `data:` URL (its first image type), from the cell's `attachments`
 * (nbformat: a MIME bundle by file name); `undefined` when there is none such.
 */
function attachmentUrl(href: string): string | undefined {
  if (!href.startsWith('attachment:')) return undefined;
  const bundle = imagesNow?.attachments?.[decodeURIComponent(href.slice('attachment:'.length))];
  if (typeof bundle !== 'object' || bundle === null) return undefined;
  for (const [mime, value] of Object.entries(bundle)) {
    if (/^image\/(png|jpeg|gif|webp)$/.test(mime) && typeof value === 'string') {
      return `data:${mime};base64,${value.replace(/\s/g, '')}`;
    }
  }
  return undefined;
}

/**
 * A relative image path (`figures/plot.png`: no scheme, not from the root, not a fragment) as the
 * page server's URL for it beside the notebook; `undefined` for any other.
 */
function fileUrl(href: string): string | undefined {
  const toFile = imagesNow?.fileUrl;
  if (toFile === undefined || href === '' || /^([a-z][a-z0-9+.-]*:|\/|#)/i.test(href)) return undefined;
  let path: string;
  try {
    path = decodeURI(href.split(/[?#]/)[0] ?? '');
  } catch {
    return undefined;
  }
  return toFile(path.replace(/^\.\//, ''));
}

const markdown = new Marked({
  gfm: true,
  extensions: [blockMath, inlineMath],
  walkTokens: (token) => {
    if (token.type !== 'image') return;
    const image = token as Tokens.Image;
    const resolved = attachmentUrl(image.href) ?? fileUrl(image.href);
    if (resolved !== undefined) image.href = resolved;
  },
});

/**
 * Sanitised HTML as nodes of this document. DOMPurify keeps HTML, SVG and MathML and drops
 * scripts, event handlers and `javascript:` URLs; `style` attributes are dropped as well (the page's
 * CSP would refuse them). Links open outside the page (a link must not take the person away from
 * the notebook).
 */
function sanitize(html: string): DocumentFragment {
  const fragment = DOMPurify.sanitize(html, { RETURN_DOM_FRAGMENT: true, FORBID_ATTR: ['style'] });
  for (const link of fragment.querySelectorAll('a[href]')) {
    link.setAttribute('target', '_blank');
    link.setAttribute('rel', 'noopener noreferrer');
  }
  return fragment;
}

/** A markdown text as sanitised HTML, with `$…$` / `$$…$$` math. */
function renderMarkdown(text: string): DocumentFragment {
  return sanitize(markdown.parse(text, { async: false }));
}

/**
 * A `text/latex` output: a formula in `$…$`, `$$…$$`, `\[…\]` or `\(…\)`, or bare TeX (an
 * environment such as `\begin{align}`), displayed.
 */
function renderLatex(text: string): DocumentFragment {
  const trimmed = text.trim();
  const wrapped = /^\$\$([\s\S]*)\$\$$|^\$([\s\S]*)\$$|^\\\[([\s\S]*)\\\]$|^\\\(([\s\S]*)\\\)$/.exec(trimmed);
  const tex = wrapped ? (wrapped.slice(1).find((part) => part !== undefined) ?? '') : trimmed;
  return sanitize(`<div class="math-display">${renderTex(tex, true)}</div>`);
}

/**
 * Shows a markdown text (a cell, a `text/markdown` output) in `node`, replacing what it showed, with
 * `$…$` / `$$…$$` math; `images` give a cell's `attachment:<name>` images and its images by a path
 * relative to the notebook.
 */
export function showMarkdown(node: Element, text: string, images?: MarkdownImages): void {
  show(node, text, (markdownText) => {
    imagesNow = images;
    try {
      return renderMarkdown(markdownText);
    } finally {
      imagesNow = undefined;
    }
  });
}

/** Shows a `text/latex` output in `node`, replacing what it showed (see {@link renderLatex}). */
export function showLatex(node: Element, text: string): void {
  show(node, text, renderLatex);
}

/**
 * Renders `text` into `node`. A formula met before KaTeX is loaded shows as its source, KaTeX is
 * loaded, and the text is rendered again then, unless the node shows something else by that time
 * (or KaTeX could not be loaded: the formula stays as its source).
 */
function show(node: Element, text: string, render: (text: string) => DocumentFragment): void {
  mathWaiting = false;
  node.replaceChildren(render(text));
  if (!mathWaiting) return;
  const shown = [...node.childNodes];
  void loadKatex().then(
    () => {
      const unchanged =
        node.childNodes.length === shown.length && shown.every((child, at) => node.childNodes[at] === child);
      if (unchanged) node.replaceChildren(render(text));
    },
    () => undefined,
  );
}
