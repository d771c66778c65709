import { describe, expect, it } from 'vitest';
import { type SessionReportCache, scanChildAnswer } from './scan-child-answer.js';

const scan = (text: string, cache?: SessionReportCache) => scanChildAnswer(Buffer.from(text, 'utf8'), cache);
/** An answer as the MCP SDK writes it: `result` first, `_meta` first in it, the id last. */
const sdkLine = (id: number | string, result: Record<string, unknown>) =>
  `${JSON.stringify({ result, jsonrpc: '2.0', id })}`;

describe(scanChildAnswer, () => {
  it('reads the id, where it sits, the session report and isError of an answer as the MCP SDK writes it', () => {
    const report = { target: 'a', notebookId: 'n', rejoin: { requested: 'a', outcome: 'pending', note: 'a } in "x"' } };
    const text = sdkLine(42, {
      _meta: { 'nteract/session': report },
      content: [{ type: 'text', text: '{\n  "x": [1, "]}"]\n}' }],
      isError: true,
    });
    const answer = scan(text);
    expect(answer?.id).toBe(42);
    expect(text.slice(answer?.idSpan.start, answer?.idSpan.end)).toBe('42');
    expect(answer?.end).toBe(text.length);
    expect(answer?.sessionReport).toEqual(report);
    expect(answer?.isError).toBe(true);
    expect(scan(sdkLine(7, { content: [] }))).toMatchObject({ id: 7, sessionReport: undefined, isError: false });
  });

  it('ends the line before trailing whitespace (a \\r of \\r\\n), and keeps multi-byte UTF-8', () => {
    const text = `${sdkLine(3, { _meta: { 'nteract/session': { note: '日本 ✓ 😀' } }, content: [{ type: 'text', text: 'für' }] })}\r`;
    const answer = scan(text);
    expect(answer?.end).toBe(Buffer.byteLength(text) - 1);
    expect(answer?.sessionReport).toEqual({ note: '日本 ✓ 😀' });
  });

  it('leaves every other line to the full parse', () => {
    for (const text of [
      '{"jsonrpc":"2.0","id":7,"result":{}}', // another layout
      sdkLine('7', {}), // a string id
      '{"result":{},"jsonrpc":"2.0","id":01}',
      '{"result":{},"jsonrpc":"2.0","id":-1}',
      '{"result":{},"jsonrpc":"2.0","id":1.5}',
      '{"result":{},"jsonrpc":"2.0","id":}',
      '{"result":{},"jsonrpc":"2.0","id":1234567890123456}', // past exact integers in 15 digits
      '{"result":{},"jsonrpc":"1.0","id":1}',
      '{"result":[],"jsonrpc":"2.0","id":1}',
      '{"error":{"code":-1,"message":"m"},"jsonrpc":"2.0","id":1}',
      '{"method":"notifications/progress","jsonrpc":"2.0","params":{}}',
      '{"result":{"_meta":{"nteract/session":{"unterminated":"}},"jsonrpc":"2.0","id":1}',
      '{"result":{"_meta":{"nteract/session":{"a":1,}}},"jsonrpc":"2.0","id":1}', // not JSON where it is read
      '',
      '   ',
    ]) {
      expect(scan(text), text).toBeUndefined();
    }
  });

  it('leaves a line to the full parse when a session report stands anywhere but first in _meta, or twice', () => {
    for (const text of [
      sdkLine(1, { content: [], _meta: { 'nteract/session': { target: 'late' } } }),
      sdkLine(1, { _meta: { other: 1, 'nteract/session': { target: 'second' } } }),
      '{"result":{"_meta":{"nteract/session":{"target":"a"},"nteract/session":{"target":"b"}}},"jsonrpc":"2.0","id":1}',
    ]) {
      expect(scan(text), text).toBeUndefined();
    }
    // Other _meta members after the report are fine.
    expect(scan(sdkLine(1, { _meta: { 'nteract/session': { target: 'a' }, other: 1 } }))?.sessionReport).toEqual({
      target: 'a',
    });
  });

  it('refuses invalid UTF-8', () => {
    const broken = Buffer.from(sdkLine(3, { content: [{ type: 'text', text: 'ab' }] }), 'utf8');
    broken[broken.indexOf('ab')] = 0xc3; // a lead byte followed by an ASCII byte
    expect(scanChildAnswer(broken)).toBeUndefined();
  });

  it('parses a session report the child repeats once: the same bytes give the same value', () => {
    const cache: SessionReportCache = {};
    const line = (id: number, target: string) => sdkLine(id, { _meta: { 'nteract/session': { target } }, content: [] });
    const first = scan(line(1, 'a'), cache);
    const again = scan(line(2, 'a'), cache);
    const changed = scan(line(3, 'b'), cache);
    expect(first?.sessionReport).toEqual({ target: 'a' });
    expect(again?.sessionReport).toBe(first?.sessionReport);
    expect(changed?.sessionReport).toEqual({ target: 'b' });
    // A report that shares the cached report's first bytes is read for itself.
    const grown = scan(sdkLine(4, { _meta: { 'nteract/session': { target: 'b', notebookId: 'n' } } }), cache);
    expect(grown?.sessionReport).toEqual({ target: 'b', notebookId: 'n' });
  });

  it('agrees with JSON.parse on every answer it reads', () => {
    const samples = [
      { content: [{ type: 'text', text: 'a "quoted" \\ back\nslash \u0001 ✓ }]' }] },
      { _meta: { 'nteract/session': { target: null } }, content: [], isError: false },
      { _meta: { 'nteract/session': { target: 't' } }, structuredContent: { isError: true, _meta: {} } },
    ];
    for (const [index, result] of samples.entries()) {
      const text = sdkLine(index + 100, result);
      const answer = scan(text);
      const parsed = JSON.parse(text) as { id: number; result: { _meta?: Record<string, unknown>; isError?: unknown } };
      expect(answer?.id).toBe(parsed.id);
      expect(answer?.isError).toBe(parsed.result.isError === true);
      expect(answer?.sessionReport).toEqual(parsed.result._meta?.['nteract/session']);
    }
  });
});
