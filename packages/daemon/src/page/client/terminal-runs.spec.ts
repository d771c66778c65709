import { describe, expect, it } from 'vitest';
import { applyCarriageReturns, terminalRuns } from './terminal-runs.js';

const ESC = '\x1b';

describe(terminalRuns, () => {
  it('keeps plain text as one unstyled run', () => {
    expect(terminalRuns('x = 1\n')).toEqual([{ runs: [{ text: 'x = 1\n' }] }]);
  });

  it('gives coloured text its colour and decorations, and text after a reset none', () => {
    expect(terminalRuns(`${ESC}[31mError${ESC}[0m: bad`)).toEqual([
      { runs: [{ text: 'Error', style: { color: 'rgb(187, 0, 0)' } }, { text: ': bad' }] },
    ]);
    expect(terminalRuns(`${ESC}[1;4;44mhead${ESC}[0m`)[0]?.runs).toEqual([
      { text: 'head', style: { backgroundColor: 'rgb(0, 0, 187)', fontWeight: '600', textDecoration: 'underline' } },
    ]);
    expect(terminalRuns(`${ESC}[38;2;10;20;30mrgb${ESC}[0m`)[0]?.runs).toEqual([
      { text: 'rgb', style: { color: 'rgb(10, 20, 30)' } },
    ]);
  });

  it('shows reversed default text light on dark, as a terminal does on this light page', () => {
    const [run] = terminalRuns(`${ESC}[7mselected${ESC}[0m`)[0]?.runs ?? [];
    expect(run).toEqual({
      text: 'selected',
      style: { color: 'rgb(255, 255, 255)', backgroundColor: 'rgb(36, 41, 47)' },
    });
  });

  it('swaps named colours in reverse video', () => {
    expect(terminalRuns(`${ESC}[31;42;7mx${ESC}[0m`)[0]?.runs).toEqual([
      { text: 'x', style: { color: 'rgb(0, 187, 0)', backgroundColor: 'rgb(187, 0, 0)' } },
    ]);
    expect(terminalRuns(`${ESC}[31;7mx${ESC}[0m`)[0]?.runs).toEqual([
      { text: 'x', style: { color: 'rgb(255, 255, 255)', backgroundColor: 'rgb(187, 0, 0)' } },
    ]);
  });

  it('makes an OSC 8 hyperlink to a web or mail address a link, ended by ESC \\ or BEL', () => {
    expect(terminalRuns(`see ${ESC}]8;;https://example.org/a${ESC}\\the docs${ESC}]8;;${ESC}\\ now`)).toEqual([
      { runs: [{ text: 'see ' }] },
      { href: 'https://example.org/a', runs: [{ text: 'the docs' }] },
      { runs: [{ text: ' now' }] },
    ]);
    expect(terminalRuns(`${ESC}]8;id=1;mailto:ada@example.org\x07mail${ESC}]8;;\x07`)[1]).toEqual({
      href: 'mailto:ada@example.org',
      runs: [{ text: 'mail' }],
    });
  });

  it('shows only the text of a link to anything else (no javascript: or file: link)', () => {
    for (const uri of ['javascript:alert(1)', 'file:///etc/passwd', 'data:text/html,x']) {
      const pieces = terminalRuns(`${ESC}]8;;${uri}\x07click${ESC}]8;;\x07`);
      expect(pieces.some((piece) => piece.href !== undefined)).toBe(false);
      expect(pieces.flatMap((piece) => piece.runs.map((run) => run.text)).join('')).toBe('click');
    }
  });

  it('drops other OSC sequences (a window title) as a terminal does', () => {
    expect(terminalRuns(`${ESC}]0;my title\x07after`)).toEqual([{ runs: [{ text: 'after' }] }]);
  });
});

describe(applyCarriageReturns, () => {
  it('leaves each line as its last rewrite left it (a progress bar shows its last state)', () => {
    expect(applyCarriageReturns('10%\r50%\r100%\ndone')).toBe('100%\ndone');
    expect(applyCarriageReturns('a\rb\nc\rd')).toBe('b\nd');
  });

  it('reads CRLF and a trailing carriage return as line ends, not rewrites', () => {
    expect(applyCarriageReturns('one\r\ntwo\r\n')).toBe('one\ntwo\n');
    expect(applyCarriageReturns('end\r')).toBe('end');
  });

  it('leaves text without a carriage return as it is', () => {
    const text = 'no returns\nhere';
    expect(applyCarriageReturns(text)).toBe(text);
  });
});
