import { describe, expect, it } from 'vitest';
import { rewriteRequestId } from './rewrite-request-id.js';

const rewrite = (text: string, from: number | string, to: number) =>
  rewriteRequestId(Buffer.from(text, 'utf8'), from, to)?.toString('utf8');

describe(rewriteRequestId, () => {
  it('rewrites the id last, as the MCP SDK writes requests, and keeps every other byte', () => {
    const text =
      '{"method":"tools/call","params":{"name":"get_cell","arguments":{"text":"日本 \\u0041"}},"jsonrpc":"2.0","id":7}';
    expect(rewrite(text, 7, 1234)).toBe(`${text.slice(0, -2)}1234}\n`);
    expect(rewrite('{"method":"ping","jsonrpc":"2.0","id":"a\\"b"}', 'a"b', 5)).toBe(
      '{"method":"ping","jsonrpc":"2.0","id":5}\n',
    );
  });

  it('rewrites the id second, after jsonrpc, when no other "id" follows', () => {
    const text = '{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"x","arguments":{"cell_id":"c"}}}';
    expect(rewrite(text, 12, 3)).toBe(`${text.replace('"id":12,', '"id":3,')}\n`);
  });

  it('drops trailing whitespace (the \\r of a \\r\\n line)', () => {
    expect(rewrite('{"method":"ping","jsonrpc":"2.0","id":1} \r', 1, 2)).toBe(
      '{"method":"ping","jsonrpc":"2.0","id":2}\n',
    );
  });

  it('leaves to serializing what it cannot rewrite in place', () => {
    // A duplicate top-level id: the last one, which a parser keeps, is the one rewritten; another
    // "id" after the leading one (here nested) leaves the line to serializing.
    expect(rewrite('{"jsonrpc":"2.0","id":1,"method":"m","id":1}', 1, 2)).toBe(
      '{"jsonrpc":"2.0","id":1,"method":"m","id":2}\n',
    );
    expect(rewrite('{"jsonrpc":"2.0","id":1,"method":"m","params":{"id":4}}', 1, 2)).toBeUndefined();
    // The id written otherwise than JSON.stringify writes it, or elsewhere, or inside a nested object.
    expect(rewrite('{"method":"m","jsonrpc":"2.0","id":1.0}', 1, 2)).toBeUndefined();
    expect(rewrite('{"id":1,"jsonrpc":"2.0","method":"m"}', 1, 2)).toBeUndefined();
    expect(rewrite('{"method":"m","params":{"id":1},"jsonrpc":"2.0","id":9}', 1, 2)).toBeUndefined();
    expect(rewrite(' {"jsonrpc":"2.0","id":1,"method":"m"}', 1, 2)).toBeUndefined();
    // A longer id whose text starts with the id's.
    expect(rewrite('{"jsonrpc":"2.0","id":12,"method":"m"}', 1, 2)).toBeUndefined();
    expect(rewrite('{"method":"m","jsonrpc":"2.0","id":21}', 1, 2)).toBeUndefined();
  });
});
