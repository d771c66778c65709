import { describe, expect, it } from 'vitest';
import type { CellOutput } from '../../ports/notebook-handle.js';
import { outputTail, packageChanges, parsePackageAnswer, unchanged } from './parse-package-answer.js';

const marker = '\u001enteract-packages-1234abcd:';
const environment = { interpreter: '/v/bin/python', prefix: '/v', kind: 'venv', externally_managed: false };

function stdout(text: string): CellOutput[] {
  return [{ output_type: 'stream', name: 'stdout', text }];
}

describe('parsePackageAnswer', () => {
  it('reads the answer after the marker and what was printed before it', () => {
    const line = JSON.stringify({ language: 'r', environment, install: { ran: true, before: [], after: { a: '1' } } });
    const { answer, printed } = parsePackageAnswer(stdout(`* installing\n* DONE\n\n${marker}${line}\n`), marker, 'X');
    expect(printed).toBe('* installing\n* DONE\n\n');
    // R's empty named list arrives as [].
    expect(answer.install).toMatchObject({ ran: true, before: {}, after: { a: '1' } });
  });

  it('says what went wrong: no answer, an error, a malformed answer, the program’s own error', () => {
    expect(() => parsePackageAnswer(stdout('nothing'), marker, 'Listing')).toThrow(
      /Listing failed: the program printed no answer/,
    );
    expect(() =>
      parsePackageAnswer([{ output_type: 'error', ename: 'KeyboardInterrupt', evalue: '' }], marker, 'Listing'),
    ).toThrow(/the kernel answered KeyboardInterrupt/);
    expect(() => parsePackageAnswer(stdout(`${marker}{oops\n`), marker, 'Listing')).toThrow(/not valid JSON/);
    expect(() => parsePackageAnswer(stdout(`${marker}{"environment": 3}\n`), marker, 'Listing')).toThrow(
      /not as expected/,
    );
    expect(() => parsePackageAnswer(stdout(`${marker}{"error": "ImportError: x"}\n`), marker, 'Listing')).toThrow(
      'Listing failed in the kernel: ImportError: x',
    );
  });
});

describe('packageChanges', () => {
  it('names what was added, changed and removed, in name order', () => {
    const changes = packageChanges({ b: '1', c: '2', d: '1' }, { a: '0.1', b: '1', c: '3' });
    expect(changes).toEqual({
      added: [{ name: 'a', version: '0.1' }],
      changed: [{ name: 'c', from: '2', to: '3' }],
      removed: [{ name: 'd', version: '1' }],
    });
    expect(unchanged(changes)).toBe(false);
    expect(unchanged(packageChanges({ a: '1' }, { a: '1' }))).toBe(true);
  });
});

describe('outputTail', () => {
  it('keeps the last lines, bounded, and counts the rest', () => {
    const printed = Array.from({ length: 50 }, (_, index) => `line ${index}`).join('\r\n');
    const { tail, omitted_lines } = outputTail(`${printed}\n\n`, 3);
    expect(tail).toBe('line 47\nline 48\nline 49');
    expect(omitted_lines).toBe(47);
    expect(outputTail('x'.repeat(100), 40, 10).tail).toBe(`…${'x'.repeat(9)}`);
    expect(outputTail('')).toEqual({ tail: '', omitted_lines: 0 });
  });
});
