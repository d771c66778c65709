import { describe, expect, it } from 'vitest';
import { cutMiddle } from './cut-middle.js';

describe(cutMiddle, () => {
  it('keeps a text that fits', () => {
    expect(cutMiddle('short', 5)).toBeUndefined();
  });

  it('keeps whole first and last lines when line breaks are near, and counts what it cut', () => {
    const lines = Array.from({ length: 1000 }, (_, n) => `line ${n}`).join('\n');
    const cut = cutMiddle(lines, 200);
    expect(cut?.head.startsWith('line 0\nline 1\n')).toBe(true);
    expect(cut?.head.endsWith('\n')).toBe(true);
    expect(cut?.tail.endsWith('line 999')).toBe(true);
    expect(cut?.tail.startsWith('line 9')).toBe(true);
    expect((cut?.head.length ?? 0) + (cut?.tail.length ?? 0)).toBeLessThanOrEqual(200);
    expect((cut?.head.length ?? 0) + (cut?.cutChars ?? 0) + (cut?.tail.length ?? 0)).toBe(lines.length);
    const middle = lines.slice(cut?.head.length, lines.length - (cut?.tail.length ?? 0));
    expect(cut?.cutLines).toBe(middle.split('\n').length - 1);
  });

  it('cuts a single long line at the character and never inside a surrogate pair', () => {
    const text = '😀'.repeat(1000);
    const cut = cutMiddle(text, 101);
    expect(cut?.head).toBe('😀'.repeat(25));
    expect(cut?.tail.length).toBe(50);
    expect(cut?.tail.startsWith('😀')).toBe(true);
    expect(cut?.cutLines).toBe(0);
  });
});
