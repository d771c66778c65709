import { type TerminalRun, terminalRuns } from './terminal-runs.js';

/**
 * Terminal text (a stream, a traceback) with its ANSI colours: spans whose text is set as text and
 * whose colours are set through `element.style` (never an HTML string). Carriage returns rewrite
 * their line as a terminal does (progress bars show their last state). OSC 8 hyperlinks to `http`,
 * `https` and `mailto` addresses are links (opened in a new tab, without this page as opener);
 * other OSC sequences, and links to anything else, show their text only (see {@link terminalRuns}).
 */
export function renderAnsi(text: string): DocumentFragment {
  const fragment = document.createDocumentFragment();
  for (const piece of terminalRuns(text)) {
    const shown = renderRuns(piece.runs);
    if (piece.href === undefined) {
      fragment.append(shown);
      continue;
    }
    const link = document.createElement('a');
    link.href = piece.href;
    link.target = '_blank';
    link.rel = 'noopener noreferrer';
    link.append(shown);
    fragment.append(link);
  }
  return fragment;
}

/** Runs as text nodes, and spans for the styled ones. */
function renderRuns(runs: readonly TerminalRun[]): DocumentFragment {
  const fragment = document.createDocumentFragment();
  for (const run of runs) {
    if (run.style === undefined) {
      fragment.append(run.text);
      continue;
    }
    const span = document.createElement('span');
    span.textContent = run.text;
    Object.assign(span.style, run.style);
    fragment.append(span);
  }
  return fragment;
}
