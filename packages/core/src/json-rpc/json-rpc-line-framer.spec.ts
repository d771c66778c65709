import { describe, expect, it } from 'vitest';
import {
  defaultMaxJsonRpcLineBytes,
  type JsonRpcFrame,
  JsonRpcLineFramer,
  jsonRpcInvalidRequestCode,
  jsonRpcParseErrorCode,
  serializeJsonRpcLine,
  validateJsonRpcMessage,
} from './json-rpc-line-framer.js';

const request = { jsonrpc: '2.0', id: 1, method: 'tools/list' } as const;
const line = (value: unknown): string => `${JSON.stringify(value)}\n`;

function errorOf(frame: JsonRpcFrame | undefined) {
  if (frame?.kind !== 'error') throw new Error(`expected an error frame, got ${JSON.stringify(frame)}`);
  return frame;
}

describe(JsonRpcLineFramer, () => {
  it('yields requests, notifications and responses in order', () => {
    const framer = new JsonRpcLineFramer();
    const notification = { jsonrpc: '2.0', method: 'notifications/initialized' };
    const result = { jsonrpc: '2.0', id: 'a', result: { tools: [] } };
    const failure = { jsonrpc: '2.0', id: 7, error: { code: -32601, message: 'nope' } };
    const frames = framer.push(line(request) + line(notification) + line(result) + line(failure));
    expect(frames).toEqual([
      { kind: 'message', message: request, line: expect.any(Buffer) },
      { kind: 'message', message: notification, line: expect.any(Buffer) },
      { kind: 'message', message: result, line: expect.any(Buffer) },
      { kind: 'message', message: failure, line: expect.any(Buffer) },
    ]);
  });

  it('answers a line that is not JSON with -32700 and a null id, and goes on', () => {
    const framer = new JsonRpcLineFramer();
    const [bad, good] = framer.push(`{"jsonrpc":"2.0","id":3,"method":\n${line(request)}`);
    expect(errorOf(bad)).toMatchObject({
      reason: 'parse-error',
      response: { jsonrpc: '2.0', id: null, error: { code: jsonRpcParseErrorCode } },
    });
    expect(errorOf(bad).response.error.message).toMatch(/^Parse error/);
    expect(good).toEqual({ kind: 'message', message: request, line: expect.any(Buffer) });
  });

  it('answers invalid UTF-8 with a parse error', () => {
    const framer = new JsonRpcLineFramer();
    const frames = framer.push(
      Buffer.concat([
        Buffer.from('{"jsonrpc":"2.0","method":"x","params":{"a":"'),
        Buffer.from([0xff, 0xfe]),
        Buffer.from('"}}\n'),
      ]),
    );
    expect(errorOf(frames[0]).response.error.code).toBe(jsonRpcParseErrorCode);
  });

  it('answers JSON that is not JSON-RPC with -32600, keeping the id when it can be read', () => {
    const framer = new JsonRpcLineFramer();
    const frames = framer.push(
      [
        line({ jsonrpc: '1.0', id: 5, method: 'ping' }),
        line({ jsonrpc: '2.0', id: 'req-9' }),
        line({ jsonrpc: '2.0', id: 6, method: 42 }),
        line({ jsonrpc: '2.0', id: { nested: true }, method: 'ping' }),
        line('just a string'),
        line(null),
        line({ jsonrpc: '2.0', id: 8, method: 'tools/call', params: 'oops' }),
        line({ jsonrpc: '2.0', id: 10, result: {}, error: { code: 1, message: 'x' } }),
      ].join(''),
    );
    expect(frames.map((frame) => errorOf(frame).response.id)).toEqual([5, 'req-9', 6, null, null, null, 8, 10]);
    for (const frame of frames) {
      expect(errorOf(frame).reason).toBe('invalid-request');
      expect(errorOf(frame).response.error.code).toBe(jsonRpcInvalidRequestCode);
      expect(errorOf(frame).response.error.message).toMatch(/^Invalid Request: /);
    }
  });

  it('refuses batches with -32600 and a null id', () => {
    const framer = new JsonRpcLineFramer();
    const [frame] = framer.push(line([request, { ...request, id: 2 }]));
    expect(errorOf(frame)).toMatchObject({ reason: 'batch', response: { id: null, error: { code: -32600 } } });
    expect(errorOf(frame).response.error.message).toContain('batch');
  });

  it('reassembles a message split across chunks, even inside a UTF-8 character', () => {
    const framer = new JsonRpcLineFramer();
    const message = {
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/call',
      params: { name: 'set_cell', arguments: { source: 'ü → 🎉' } },
    };
    const bytes = Buffer.from(line(message), 'utf8');
    const frames = [...bytes].flatMap((byte) => framer.push(Buffer.from([byte])));
    expect(frames).toEqual([{ kind: 'message', message, line: expect.any(Buffer) }]);
    expect(framer.pendingBytes).toBe(0);
    // The bytes as they came, reassembled, without the newline: a relay can pass them on unchanged.
    const frame = frames[0];
    expect(frame?.kind === 'message' && frame.line.equals(bytes.subarray(0, bytes.length - 1))).toBe(true);
  });

  it('holds an unfinished line until its newline arrives', () => {
    const framer = new JsonRpcLineFramer();
    const text = line(request);
    expect(framer.push(text.slice(0, 10))).toEqual([]);
    expect(framer.pendingBytes).toBe(10);
    expect(framer.push(text.slice(10))).toEqual([{ kind: 'message', message: request, line: expect.any(Buffer) }]);
  });

  it('accepts CRLF line endings', () => {
    const framer = new JsonRpcLineFramer();
    const frames = framer.push(`${JSON.stringify(request)}\r\n${JSON.stringify({ ...request, id: 2 })}\r`);
    expect(frames).toEqual([{ kind: 'message', message: request, line: expect.any(Buffer) }]);
    expect(framer.push('\n')).toEqual([{ kind: 'message', message: { ...request, id: 2 }, line: expect.any(Buffer) }]);
  });

  it('ignores empty and whitespace-only lines', () => {
    const framer = new JsonRpcLineFramer();
    expect(framer.push('\n\r\n   \n\t\r\n')).toEqual([]);
    expect(framer.push(`  ${JSON.stringify(request)}  \n`)).toEqual([
      { kind: 'message', message: request, line: expect.any(Buffer) },
    ]);
  });

  it('reports an oversized line once, skips it without buffering it, and parses the next line', () => {
    const framer = new JsonRpcLineFramer({ maxLineBytes: 64 });
    const head = '{"jsonrpc":"2.0","method":"tools/call","params":{"id":99,"blob":"';
    // no top-level id before the cap: the error waits for the end of the line, where it may be
    expect(framer.push(head)).toEqual([]);
    for (let index = 0; index < 100; index += 1) {
      expect(framer.push('x'.repeat(1000))).toEqual([]);
      expect(framer.pendingBytes).toBe(0);
    }
    const frames = framer.push(`"}}\n${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' })}\n`);
    expect(frames).toHaveLength(2);
    const [frame] = frames;
    expect(errorOf(frame)).toMatchObject({ reason: 'line-too-long', response: { error: { code: -32600 } } });
    expect(errorOf(frame).response.error.message).toMatch(/too long/);
    expect(errorOf(frame).response.error.message).toContain('64');
    // the nested "id" of params must not be taken
    expect(errorOf(frame).response.id).toBeNull();
    expect(frames[1]).toEqual({
      kind: 'message',
      message: { jsonrpc: '2.0', id: 1, method: 'ping' },
      line: expect.any(Buffer),
    });
  });

  it('finds the id of an oversized response at the end of the line (the MCP SDK writes it last)', () => {
    const framer = new JsonRpcLineFramer({ maxLineBytes: 1000 });
    const response = (id: number | string) =>
      line({
        result: { content: [{ type: 'text', text: `{"id": 5, "s": "${'y'.repeat(300_000)}"}` }] },
        jsonrpc: '2.0',
        id,
      });
    const numeric = response(17);
    const frames: JsonRpcFrame[] = [];
    for (let offset = 0; offset < numeric.length; offset += 4096)
      frames.push(...framer.push(numeric.slice(offset, offset + 4096)));
    expect(frames).toHaveLength(1);
    expect(errorOf(frames[0])).toMatchObject({ reason: 'line-too-long', response: { id: 17 } });
    expect(framer.pendingBytes).toBe(0);
    expect(errorOf(framer.push(response('req-"9"'))[0]).response.id).toBe('req-"9"');
    // a nested object's id at the end is not the message's
    const nested = line({ jsonrpc: '2.0', method: 'x', params: { s: 'q'.repeat(2000), id: 3 } });
    expect(errorOf(framer.push(nested)[0]).response.id).toBeNull();
    expect(framer.push(line(request))).toEqual([{ kind: 'message', message: request, line: expect.any(Buffer) }]);
  });

  it('answers an oversized request with its top-level id when the start of the line holds it', () => {
    const framer = new JsonRpcLineFramer({ maxLineBytes: 100 });
    const big = line({
      jsonrpc: '2.0',
      id: 'call-7',
      method: 'tools/call',
      params: { arguments: { id: 1, s: 'y'.repeat(500) } },
    });
    const frames = framer.push(big + line(request));
    expect(errorOf(frames[0]).response.id).toBe('call-7');
    expect(frames[1]).toEqual({ kind: 'message', message: request, line: expect.any(Buffer) });

    const numeric = framer.push(
      line({ jsonrpc: '2.0', params: { id: 'inner', s: 'z'.repeat(300) }, id: 12, method: 'x' }),
    );
    // the nested "id" of params is skipped; the top-level one after it is found
    expect(errorOf(numeric[0]).response.id).toBe(12);
    expect(framer.push(line({ jsonrpc: '2.0', method: 'x', id: 41, params: { s: 'q'.repeat(300) } }))[0]).toMatchObject(
      {
        response: { id: 41 },
      },
    );
  });

  it('accepts a line of exactly the cap', () => {
    const text = JSON.stringify(request);
    const framer = new JsonRpcLineFramer({ maxLineBytes: Buffer.byteLength(text) });
    expect(framer.push(`${text}\n`)).toEqual([{ kind: 'message', message: request, line: expect.any(Buffer) }]);
    expect(errorOf(framer.push(`${text} \n`)[0]).reason).toBe('line-too-long');
  });

  it('gives readLine each complete line within the cap, split or not, and delivers what it returns in that place', () => {
    const seen: string[] = [];
    const framer = new JsonRpcLineFramer<{ kind: 'mine'; text: string }>({
      maxLineBytes: 40,
      readLine: (line) => {
        const text = line.toString('utf8');
        seen.push(text);
        return text.startsWith('mine:') ? { kind: 'mine', text } : undefined;
      },
    });
    const out = [
      ...framer.push('mine:ü'),
      ...framer.push(`x\n{"jsonrpc":"2.0","method":"a"}\n${'y'.repeat(50)}\nmine:2\n`),
    ];
    expect(
      out.map((frame) =>
        frame.kind === 'message'
          ? `message ${(frame.message as { method: string }).method}`
          : frame.kind === 'mine'
            ? frame.text
            : `error ${frame.reason}`,
      ),
    ).toEqual(['mine:üx', 'message a', 'error line-too-long', 'mine:2']);
    // The oversized line never reached it.
    expect(seen).toEqual(['mine:üx', '{"jsonrpc":"2.0","method":"a"}', 'mine:2']);
  });

  it('defaults the cap to 16 MiB and refuses a nonsensical cap', () => {
    expect(new JsonRpcLineFramer().maxLineBytes).toBe(16 * 1024 * 1024);
    expect(defaultMaxJsonRpcLineBytes).toBe(16 * 1024 * 1024);
    expect(() => new JsonRpcLineFramer({ maxLineBytes: 0 })).toThrow(RangeError);
  });
});

describe(validateJsonRpcMessage, () => {
  it('allows a null id only on an error response', () => {
    expect(validateJsonRpcMessage({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'x' } }).valid).toBe(
      true,
    );
    expect(validateJsonRpcMessage({ jsonrpc: '2.0', id: null, result: {} }).valid).toBe(false);
    expect(validateJsonRpcMessage({ jsonrpc: '2.0', id: null, method: 'ping' }).valid).toBe(false);
  });

  it('takes any string as a method name, the empty one too: an id-less one is a notification, never refused', () => {
    expect(validateJsonRpcMessage({ jsonrpc: '2.0', method: '' })).toEqual({
      valid: true,
      message: { jsonrpc: '2.0', method: '' },
    });
    expect(validateJsonRpcMessage({ jsonrpc: '2.0', id: 4, method: '' }).valid).toBe(true);
    expect(validateJsonRpcMessage({ jsonrpc: '2.0', method: 7 })).toMatchObject({ valid: false, id: null });
  });

  it('refuses a malformed error object and a request carrying a result', () => {
    expect(validateJsonRpcMessage({ jsonrpc: '2.0', id: 1, error: { code: 'bad', message: 'x' } })).toMatchObject({
      valid: false,
      id: 1,
    });
    expect(validateJsonRpcMessage({ jsonrpc: '2.0', id: 1, method: 'ping', result: {} }).valid).toBe(false);
    expect(validateJsonRpcMessage({ jsonrpc: '2.0', method: 'ping', params: [1, 2] }).valid).toBe(true);
  });
});

describe(serializeJsonRpcLine, () => {
  it('writes one line that round-trips through the framer, with no raw newline inside', () => {
    const message = {
      jsonrpc: '2.0' as const,
      id: 3,
      result: { content: [{ type: 'text', text: 'line one\nline two\r\n\u2028end' }] },
    };
    const text = serializeJsonRpcLine(message);
    expect(text.endsWith('\n')).toBe(true);
    expect(text.slice(0, -1)).not.toMatch(/[\r\n]/);
    expect(new JsonRpcLineFramer().push(text)).toEqual([{ kind: 'message', message, line: expect.any(Buffer) }]);
  });
});
