import { describe, expect, it } from 'vitest';
import { cutMarker, escapedBytes, fitToolResult, resultBytes } from './tool-result-budget.js';

const text = (value: string) => ({ content: [{ type: 'text' as const, text: value }] });
const json = (value: unknown) => text(JSON.stringify(value, null, 2));

describe(fitToolResult, () => {
  it('returns a result within the budget unchanged, at exactly the budget too', () => {
    const result = json({ a: 'x'.repeat(1000) });
    expect(fitToolResult(result, resultBytes(result))).toBe(result);
  });

  it('cuts the longest strings of a JSON result, keeps it valid JSON and marks each cut', () => {
    const value = { id: 'c1', source: 'ü"\n'.repeat(30_000), outputs: [{ text: 'y'.repeat(50_000) }, { text: 'z' }] };
    const marker = /\n… \[\d+ more characters not shown: one tool result is limited to 0\.\d+ MiB\]$/;
    const once = JSON.parse((fitToolResult(json(value), 150_000).content[0] as { text: string }).text);
    // Only the longest string had to give way.
    expect(once.source).toMatch(marker);
    expect(once.source.startsWith('ü"\n'.repeat(100))).toBe(true);
    expect(once.outputs).toEqual(value.outputs);
    const fitted = fitToolResult(json(value), 20_000);
    expect(resultBytes(fitted)).toBeLessThanOrEqual(20_000);
    const parsed = JSON.parse((fitted.content[0] as { text: string }).text);
    expect(parsed.id).toBe('c1');
    expect(parsed.outputs[1]).toEqual({ text: 'z' });
    for (const cut of [parsed.source as string, parsed.outputs[0].text as string]) expect(cut).toMatch(marker);
  });

  it('cuts plain text at its end with the marker, never splitting a surrogate pair', () => {
    const fitted = fitToolResult(text('😀'.repeat(100_000)), 50_000);
    expect(resultBytes(fitted)).toBeLessThanOrEqual(50_000);
    const cut = (fitted.content[0] as { text: string }).text;
    const [kept] = cut.split('\n… [');
    expect(kept).toBe('😀'.repeat((kept as string).length / 2));
    expect(cut.endsWith(cutMarker(200_000 - (kept as string).length, 50_000))).toBe(true);
  });

  it('cuts JSON made of many short strings as text, marked at the end', () => {
    const fitted = fitToolResult(json(Array.from({ length: 5000 }, (_, index) => `item ${index}`)), 10_000);
    expect(resultBytes(fitted)).toBeLessThanOrEqual(10_000);
    expect((fitted.content[0] as { text: string }).text).toMatch(/^\[\n {2}"item 0",[\s\S]*\n… \[\d+ more characters/);
  });

  it('answers a tool error naming size and budget when nothing can be cut enough', () => {
    const many = { content: [{ type: 'image' as const, data: 'A'.repeat(30_000), mimeType: 'image/png' }] };
    const fitted = fitToolResult(many, 10_000);
    expect(fitted.isError).toBe(true);
    expect((fitted.content[0] as { text: string }).text).toBe(
      `The result is ${resultBytes(many)} bytes, over the 0.01 MiB limit of one tool result, and could not be cut to fit. Ask for less at once (a window of cells with start/count, one cell with get_cell, outputs in pages (get_cell or get_results with offset and length)).`,
    );
  });
});

describe(escapedBytes, () => {
  it('counts quotes, escapes and UTF-8 bytes', () => {
    expect(escapedBytes('a"\nü')).toBe(Buffer.byteLength('"a\\"\\nü"'));
  });
});
