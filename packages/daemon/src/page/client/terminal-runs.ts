import Anser from 'anser';

/** The CSS of a coloured run of terminal text (the `style` properties set on its span). */
export type RunStyle = Partial<
  Record<'color' | 'backgroundColor' | 'fontWeight' | 'opacity' | 'fontStyle' | 'textDecoration' | 'visibility', string>
>;

/** A run of terminal text: plain (no `style`), or drawn as a span with its colours. */
export interface TerminalRun {
  readonly text: string;
  readonly style?: RunStyle;
}

/** Runs of terminal text, as a link to `href` (an OSC 8 hyperlink to a web or mail address) or not. */
export interface TerminalPiece {
  readonly href?: string;
  readonly runs: readonly TerminalRun[];
}

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
 * Terminal text (a stream, a traceback) read as the page draws it (see `renderAnsi`): carriage
 * returns rewrite their line as a terminal does (progress bars show their last state); OSC 8
 * hyperlinks to `http`, `https` and `mailto` addresses are links, other OSC sequences and links to
 * anything else show their text only; ANSI colours and decorations become each run's style.
 */
export function terminalRuns(text: string): TerminalPiece[] {
  const pieces: TerminalPiece[] = [];
  const lines = applyCarriageReturns(text);
  let at = 0;
  for (const match of lines.matchAll(hyperlinkPattern)) {
    pieces.push({ runs: colouredRuns(lines.slice(at, match.index)) });
    const [, uri = '', label = ''] = match;
    const runs = colouredRuns(label);
    pieces.push(/^(https?:|mailto:)/i.test(uri) ? { href: uri, runs } : { runs });
    at = match.index + match[0].length;
  }
  pieces.push({ runs: colouredRuns(lines.slice(at)) });
  return pieces;
}

/**
 * What anser gives a reversed run for the colours it did not name: white text (`37`'s colour) on
 * black (`40`'s), which it then swaps, so default text reversed came out black on white, no
 * different from plain text on this light page.
 */
const anserReversedDefaults = { fg: '0, 0, 0', bg: '255,255,255' } as const;
/** Reverse video of default text on this page: white on the page's text colour (#24292f). */
const reversedDefaults = { fg: '255, 255, 255', bg: '36, 41, 47' } as const;

/**
 * Text's runs with their ANSI colours. Anser applies reverse video itself (swapping the colours and
 * dropping the `reverse` decoration); a colour it filled in for a reversed run is the page's own
 * instead, so reversed default text shows light on dark, as in a terminal.
 */
function colouredRuns(text: string): TerminalRun[] {
  const runs: TerminalRun[] = [];
  for (const part of Anser.ansiToJson(text.replace(otherOscPattern, ''), { json: true, remove_empty: true })) {
    const styled = part.fg || part.bg || part.fg_truecolor || part.bg_truecolor || part.decorations.length > 0;
    if (!styled) {
      runs.push({ text: part.content });
      continue;
    }
    const style: RunStyle = {};
    const inverted = (part as { isInverted?: boolean }).isInverted === true;
    let color = part.fg_truecolor || part.fg;
    let background = part.bg_truecolor || part.bg;
    if (inverted && color === anserReversedDefaults.fg) color = reversedDefaults.fg;
    if (inverted && background === anserReversedDefaults.bg) background = reversedDefaults.bg;
    if (color) style.color = `rgb(${color})`;
    if (background) style.backgroundColor = `rgb(${background})`;
    for (const decoration of part.decorations) {
      if (decoration === 'bold') style.fontWeight = '600';
      else if (decoration === 'dim') style.opacity = '0.7';
      else if (decoration === 'italic') style.fontStyle = 'italic';
      else if (decoration === 'underline') style.textDecoration = 'underline';
      else if (decoration === 'strikethrough') style.textDecoration = 'line-through';
      else if (decoration === 'hidden') style.visibility = 'hidden';
    }
    runs.push({ text: part.content, style });
  }
  return runs;
}

/** Each line as a terminal leaves it: what follows the last lone `\r` overwrites the line. */
export function applyCarriageReturns(text: string): string {
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
