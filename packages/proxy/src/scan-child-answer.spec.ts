import { describe, expect, it } from 'vitest';
import { scanAnyAnswer, scanChildAnswer } from './scan-child-answer.js';

const scan = (text: string) => scanChildAnswer(Buffer.from(text, 'utf8'));
const scanFully = (text: string) => scanAnyAnswer(Buffer.from(text, 'utf8'));
const slice = (text: string, span: { start: number; end: number } | undefined) =>
  span === undefined ? undefined : Buffer.from(text, 'utf8').toString('utf8', span.start, span.end);

describe(scanChildAnswer, () => {
  it('reads the id, where it sits, the session report and isError of an answer as the MCP SDK writes it', () => {
    const text =
      '{"result":{"_meta":{"nteract/session":{"target":"a","daemonVersion":"1"}},"content":[{"type":"text","text":"{\\n  \\"x\\": 1\\n}"}],"isError":true},"jsonrpc":"2.0","id":42}';
    const answer = scan(text);
    expect(answer?.id).toBe(42);
    expect(slice(text, answer?.idSpan)).toBe('42');
    expect(answer?.end).toBe(Buffer.byteLength(text));
    expect(answer?.sessionReport).toEqual({ target: 'a', daemonVersion: '1' });
    expect(answer?.isError).toBe(true);
    expect(scanFully(text)).toEqual(answer);
  });

  it('finds the id wherever it stands, with whitespace and a trailing \\r, and numbers in any JSON form', () => {
    const text = ' { "id" : -1.5e2 , "jsonrpc" : "2.0" , "result" : { } }\r';
    const answer = scan(text);
    expect(answer?.id).toBe(-150);
    expect(slice(text, answer?.idSpan)).toBe('-1.5e2');
    expect(answer?.end).toBe(text.length - 1);
    expect(answer?.sessionReport).toBeUndefined();
    expect(answer?.isError).toBe(false);
  });

  it('only records the members that matter where they matter (a nested _meta or id is just data)', () => {
    const text =
      '{"jsonrpc":"2.0","id":1,"result":{"content":[{"_meta":{"nteract/session":1},"id":"x"}],"structuredContent":{"isError":true}}}';
    const answer = scan(text);
    expect(answer?.id).toBe(1);
    expect(answer?.sessionReport).toBeUndefined();
    expect(answer?.isError).toBe(false);
  });

  it('keeps multi-byte UTF-8 in strings and names, and refuses invalid UTF-8', () => {
    const text = '{"jsonrpc":"2.0","id":3,"result":{"ünïcode ✓":"😀 ☃","_meta":{"nteract/session":{"note":"日本"}}}}';
    const answer = scan(text);
    expect(answer?.id).toBe(3);
    expect(answer?.sessionReport).toEqual({ note: '日本' });
    const broken = Buffer.from('{"jsonrpc":"2.0","id":3,"result":{"x":"ab"}}', 'utf8');
    broken[broken.indexOf('ab')] = 0xc3; // a lead byte followed by an ASCII byte
    expect(scanChildAnswer(broken)).toBeUndefined();
  });

  it('passes on what is not a plain successful answer with a numeric id (the caller parses those)', () => {
    for (const text of [
      '{"jsonrpc":"2.0","id":"7","result":{}}', // string id
      '{"jsonrpc":"2.0","id":7,"error":{"code":1,"message":"m"}}',
      '{"jsonrpc":"2.0","id":7,"method":"ping"}',
      '{"jsonrpc":"2.0","method":"notifications/progress","params":{}}',
      '{"jsonrpc":"2.0","id":7,"result":{},"method":{"a":1}}', // a method of any kind
      '{"jsonrpc":"2.0","id":7,"result":[1]}', // result not an object
      '{"jsonrpc":"2.0","id":7,"result":"x"}',
      '{"jsonrpc":"1.0","id":7,"result":{}}',
      '{"jsonrpc":"2.0","result":{}}', // no id
      '{"id":7,"result":{}}', // no jsonrpc
      '{"jsonrpc":"2.0","id":null,"result":{}}',
      '{"jsonrpc":"2.0","id":[7],"result":{}}',
      '[{"jsonrpc":"2.0","id":7,"result":{}}]', // a batch
      '',
      '   ',
    ]) {
      expect(scan(text), text).toBeUndefined();
    }
  });

  it('passes on members named twice where JSON.parse would keep the last, and escaped names where names matter', () => {
    for (const text of [
      '{"jsonrpc":"2.0","id":7,"id":8,"result":{}}',
      '{"jsonrpc":"2.0","id":7,"result":{},"result":{}}',
      '{"jsonrpc":"2.0","jsonrpc":"2.0","id":7,"result":{}}',
      '{"jsonrpc":"2.0","id":7,"result":{"_meta":{},"_meta":{"nteract/session":{}}}}',
      '{"jsonrpc":"2.0","id":7,"result":{"isError":false,"isError":true}}',
      '{"jsonrpc":"2.0","id":7,"result":{"_meta":{"nteract/session":1,"nteract/session":2}}}',
      '{"jsonrpc":"2.0","\\u0069d":7,"id":8,"result":{}}', // "\u0069d" is "id"
      '{"jsonrpc":"2.0","id":7,"result":{"\\u005fmeta":{}}}',
    ]) {
      expect(scan(text), text).toBeUndefined();
    }
    // An escaped name deeper down is just data.
    expect(scan('{"jsonrpc":"2.0","id":7,"result":{"content":[{"\\u0069d":1}]}}')?.id).toBe(7);
  });

  it('refuses what JSON.parse refuses', () => {
    const good = '{"jsonrpc":"2.0","id":7,"result":{"a":[1,true,false,null,"s",{"b":-0.5E+3}]}}';
    expect(scanFully(good)?.id).toBe(7);
    for (const text of [
      '{"jsonrpc":"2.0","id":7,"result":{"a":[1,]}}',
      '{"jsonrpc":"2.0","id":7,"result":{"a":1,}}',
      '{"jsonrpc":"2.0","id":7,"result":{"a" 1}}',
      '{"jsonrpc":"2.0","id":7,"result":{"a":01}}',
      '{"jsonrpc":"2.0","id":7,"result":{"a":1.}}',
      '{"jsonrpc":"2.0","id":7,"result":{"a":-}}',
      '{"jsonrpc":"2.0","id":7,"result":{"a":1e}}',
      '{"jsonrpc":"2.0","id":7,"result":{"a":tru}}',
      '{"jsonrpc":"2.0","id":7,"result":{"a":"\\x"}}',
      '{"jsonrpc":"2.0","id":7,"result":{"a":"\\u12g4"}}',
      '{"jsonrpc":"2.0","id":7,"result":{"a":"tab\there"}}',
      '{"jsonrpc":"2.0","id":7,"result":{"a":"unterminated}}',
      '{"jsonrpc":"2.0","id":7,"result":{"a":[1}}',
      '{"jsonrpc":"2.0","id":7,"result":{"a":1}',
      '{"jsonrpc":"2.0","id":7,"result":{"a":1}}}',
      '{"jsonrpc":"2.0","id":7,"result":{"a":1}} x',
      '{"jsonrpc":"2.0","id":7,"result":{"a":1}}{}',
      "{'jsonrpc':'2.0','id':7,'result':{}}",
    ]) {
      expect(() => JSON.parse(text), text).toThrow();
      expect(scanFully(text), text).toBeUndefined();
    }
  });

  it('reads an answer laid out as the MCP SDK writes it from its ends, with the session report first in _meta', () => {
    const text = `{"result":{"_meta":{"nteract/session":{"target":"t","rejoin":{"note":"a } in \\"text\\""}}},"content":[{"type":"text","text":"x"}]},"jsonrpc":"2.0","id":12}\r`;
    const answer = scan(text);
    expect(answer).toEqual({
      line: Buffer.from(text),
      id: 12,
      idSpan: { start: text.length - 4, end: text.length - 2 },
      end: text.length - 1,
      sessionReport: { target: 't', rejoin: { note: 'a } in "text"' } },
      isError: false,
    });
    expect(scanFully(text)).toEqual(answer);
  });

  it('reads isError last in result, and sends an SDK-laid-out answer the long way when a session report stands elsewhere', () => {
    const texts = [
      '{"result":{"content":[],"isError":true},"jsonrpc":"2.0","id":1}',
      '{"result":{"content":[],"_meta":{"nteract/session":{"target":"late"}}},"jsonrpc":"2.0","id":1}',
      '{"result":{"_meta":{"nteract/session":{"target":"a"},"nteract/session":{"target":"b"}}},"jsonrpc":"2.0","id":1}',
    ];
    expect(scan(texts[0] as string)?.isError).toBe(true);
    expect(scan(texts[1] as string)?.sessionReport).toEqual({ target: 'late' });
    expect(scan(texts[2] as string)).toBeUndefined(); // named twice: JSON.parse would keep the last
  });

  it('leaves a line that only looks SDK-laid-out to the full check (an id not a plain integer, a broken report), and refuses broken UTF-8', () => {
    for (const text of [
      '{"result":{},"jsonrpc":"2.0","id":01}',
      '{"result":{},"jsonrpc":"2.0","id":}',
      '{"result":{},"jsonrpc":"2.0","id":1234567890123456}',
      '{"result":{},"jsonrpc":"1.0","id":1}',
      '{"result":{"_meta":{"nteract/session":{"unterminated":"}},"jsonrpc":"2.0","id":1}',
    ]) {
      // The full check decides: it refuses what is not JSON, and reads a long id as JSON.parse does.
      expect(scan(text), text).toEqual(scanFully(text));
    }
    expect(scan('{"result":{},"jsonrpc":"2.0","id":1234567890123456}')?.id).toBe(1234567890123456);
    expect(scan('{"result":{},"jsonrpc":"2.0","id":01}')).toBeUndefined();
    const broken = Buffer.from('{"result":{"a":"ab"},"jsonrpc":"2.0","id":3}', 'utf8');
    broken[broken.indexOf('ab')] = 0xc3;
    expect(scanChildAnswer(broken)).toBeUndefined();
  });

  it('parses a session report the child repeats once: the same bytes give the same value', () => {
    const cache = {};
    const line = (id: number, target: string) =>
      Buffer.from(
        `{"result":{"_meta":{"nteract/session":{"target":"${target}"}},"content":[]},"jsonrpc":"2.0","id":${id}}`,
      );
    const first = scanChildAnswer(line(1, 'a'), cache);
    const again = scanChildAnswer(line(2, 'a'), cache);
    const changed = scanChildAnswer(line(3, 'b'), cache);
    expect(first?.sessionReport).toEqual({ target: 'a' });
    expect(again?.sessionReport).toBe(first?.sessionReport);
    expect(changed?.sessionReport).toEqual({ target: 'b' });
  });

  it('reads deep nesting without recursion', () => {
    const deep = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
    expect(scan(`{"jsonrpc":"2.0","id":9,"result":{"a":${deep}}}`)?.id).toBe(9);
  });

  it('agrees with JSON.parse on every answer it accepts', () => {
    const samples = [
      { jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: 'a "quoted" \\ back\nslash \u0001 ✓' }] } },
      { result: { _meta: { 'nteract/session': { target: null } }, isError: false }, jsonrpc: '2.0', id: 123456 },
      { jsonrpc: '2.0', result: { nested: { _meta: { 'nteract/session': 'no' } } }, id: 0 },
    ];
    for (const sample of samples) {
      const text = JSON.stringify(sample);
      const answer = scan(text);
      const parsed = JSON.parse(text) as { id: number; result: { _meta?: Record<string, unknown>; isError?: unknown } };
      expect(answer?.id).toBe(parsed.id);
      expect(answer?.isError).toBe(parsed.result.isError === true);
      expect(answer?.sessionReport).toEqual(parsed.result._meta?.['nteract/session']);
      expect(scanFully(text)).toEqual(answer);
    }
  });
});
