import { describe, expect, it } from 'vitest';
import { boundClientText, boundedClientTextChars, quoteClientText } from './bound-client-text.js';

describe(boundClientText, () => {
  it('leaves short printable text as it is', () => {
    expect(boundClientText('tools/call')).toBe('tools/call');
    expect(boundClientText('no_such_tool')).toBe('no_such_tool');
    expect(boundClientText('')).toBe('');
  });

  it('JSON-quotes text with control or non-ASCII characters, so they show as escapes', () => {
    expect(boundClientText('a\u0000b')).toBe('"a\\u0000b"');
    expect(boundClientText('line\r\n')).toBe('"line\\r\\n"');
    expect(boundClientText('é')).toBe('"é"');
  });

  it('cuts long text to its first characters with an ellipsis, whatever its size', () => {
    const bounded = boundClientText('x'.repeat(150_000));
    expect(bounded).toBe(`"${'x'.repeat(boundedClientTextChars)}…"`);
    expect(boundClientText('abcdef', 3)).toBe('"abc…"');
  });

  it('never cuts a surrogate pair in half', () => {
    expect(boundClientText('ab😀cd', 3)).toBe('"ab…"');
    expect(boundClientText('a😀cd', 3)).toBe('"a😀…"');
  });
});

describe(quoteClientText, () => {
  it('single-quotes plain text and leaves odd text JSON-quoted only (never quoted twice)', () => {
    expect(quoteClientText('create_cell')).toBe("'create_cell'");
    expect(quoteClientText('a\nb')).toBe('"a\\nb"');
    expect(quoteClientText('x'.repeat(100))).toBe(`"${'x'.repeat(80)}…"`);
  });
});
