import Anser from 'anser';

/**
 * An OSC 8 hyperlink (`ESC ] 8 ; params ; URI ST text ESC ] 8 ; ; ST`, ST being `ESC \` or BEL),
 * as rich, IPython and many CLIs print them; its URI and text.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: terminal escapes (ESC, BEL) are what it reads.
const hyperlinkPattern = /\x1b\]8;[^;\x07\x1b]*;([^\x07\x1b]*)(?:\x07|\x1b\\)([\s\S]*?)\x1b\]8;;(?:\x07|\x1b\\)/g;
/** Any other OSC sequence (a window title, a colour query): shown as nothing, as a terminal does. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: terminal escapes (ESC, BEL) are what it reads.
const otherOscPattern = /\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)/g;

/**
 * Terminal text (a stream, a traceback) with its ANSI colours: spans whose text is set as text and
 * whose colours are set through `element.style` (never an HTML string). Carriage returns rewrite
 * their line as a terminal does (progress bars show their last state). OSC 8 hyperlinks to `http`,
 * `https` and `mailto` addresses are links (opened in a new tab, without this page as opener);
 * other OSC sequences, and links to anything else, show their text only.
 */
export function renderAnsi(text: string): DocumentFragment {
  const fragment = document.createDocumentFragment();
  const lines = applyCarriageReturns(text);
  let at = 0;
  for (const match of lines.matchAll(hyperlinkPattern)) {
    fragment.append(renderColours(lines.slice(at, match.index)));
    const [, uri = '', label = ''] = match;
    const shown = renderColours(label);
    if (/^(https?:|mailto:)/i.test(uri)) {
      const link = document.createElement('a');
      link.href = uri;
      link.target = '_blank';
      link.rel = 'noopener noreferrer';
      link.append(shown);
      fragment.append(link);
    } else fragment.append(shown);
    at = match.index + match[0].length;
  }
  fragment.append(renderColours(lines.slice(at)));
  return fragment;
}

/** Text with its ANSI colours (see {@link renderAnsi}). */
function renderColours(text: string): DocumentFragment {
  const fragment = document.createDocumentFragment();
  for (const part of Anser.ansiToJson(text.replace(otherOscPattern, ''), { json: true, remove_empty: true })) {
    const styled = part.fg || part.bg || part.fg_truecolor || part.bg_truecolor || part.decorations.length > 0;
    if (!styled) {
      fragment.append(part.content);
      continue;
    }
    const span = document.createElement('span');
    span.textContent = part.content;
    const reverse = part.decorations.includes('reverse');
    const fg = part.fg_truecolor || part.fg;
    const bg = part.bg_truecolor || part.bg;
    const color = reverse ? bg : fg;
    const background = reverse ? fg || '34, 34, 34' : bg;
    if (color) span.style.color = `rgb(${color})`;
    if (background) span.style.backgroundColor = `rgb(${background})`;
    for (const decoration of part.decorations) {
      if (decoration === 'bold') span.style.fontWeight = '600';
      else if (decoration === 'dim') span.style.opacity = '0.7';
      else if (decoration === 'italic') span.style.fontStyle = 'italic';
      else if (decoration === 'underline') span.style.textDecoration = 'underline';
      else if (decoration === 'strikethrough') span.style.textDecoration = 'line-through';
      else if (decoration === 'hidden') span.style.visibility = 'hidden';
    }
    fragment.append(span);
  }
  return fragment;
}

/** Each line as a terminal leaves it: what follows the last lone `\r` overwrites the line. */
function applyCarriageReturns(text: string): string {
  if (!text.includes('\r')) return text;
  return text
    .replace(/\r\n/g, '\n')
    .split('\n')
    .map((line) => {
      const at = line.lastIndexOf('\r', line.length - 2);
      return at < 0 ? line.replace(/\r$/, '') : line.slice(at + 1).replace(/\r$/, '');
    })
    .join('\n');
}
