import Anser from 'anser';

/**
 * Terminal text (a stream, a traceback) with its ANSI colours: spans whose text is set as text and
 * whose colours are set through `element.style` (never an HTML string). Carriage returns rewrite
 * their line as a terminal does (progress bars show their last state).
 */
export function renderAnsi(text: string): DocumentFragment {
  const fragment = document.createDocumentFragment();
  for (const part of Anser.ansiToJson(applyCarriageReturns(text), { json: true, remove_empty: true })) {
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
