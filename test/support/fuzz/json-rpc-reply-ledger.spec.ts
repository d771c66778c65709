import { describe, expect, it } from 'vitest';
import { classifyJsonRpcLines } from './classify-json-rpc-lines.js';
import { FuzzViolations } from './fuzz-violations.js';
import { JsonRpcReplyLedger } from './json-rpc-reply-ledger.js';

const lines = (...messages: (string | object)[]): Buffer =>
  Buffer.from(
    messages.map((message) => `${typeof message === 'string' ? message : JSON.stringify(message)}\n`).join(''),
  );

const ok = (id: unknown) => ({ id, error: undefined, line: JSON.stringify({ jsonrpc: '2.0', id, result: {} }) });
const failed = (id: unknown, code = -32600, message = 'Invalid Request') => ({
  id,
  error: { code, message },
  line: JSON.stringify({ jsonrpc: '2.0', id, error: { code, message } }),
});

function ledgerFor(bytes: Buffer): { ledger: JsonRpcReplyLedger; violations: FuzzViolations } {
  const violations = new FuzzViolations();
  const ledger = new JsonRpcReplyLedger(violations);
  ledger.open(1, classifyJsonRpcLines(bytes));
  return { ledger, violations };
}

describe('classifyJsonRpcLines', () => {
  it('reads requests, notifications, responses and malformed lines as JSON-RPC 2.0 does', () => {
    const classified = classifyJsonRpcLines(
      lines(
        { jsonrpc: '2.0', id: 7, method: 'ping' },
        { jsonrpc: '2.0', id: '7', method: 'tools/list', params: [] },
        { jsonrpc: '2.0', method: 'notifications/initialized' },
        { jsonrpc: '2.0', id: 3, result: {} },
        { jsonrpc: '2.0', id: null, method: 'ping' },
        '{"jsonrpc":"2.0","id":',
        '\uFEFF{"jsonrpc":"2.0","id":9,"method":"ping"}',
        '   ',
      ),
    );
    expect(classified.map((line) => [line.cls, line.key])).toEqual([
      ['request', 'n:7'],
      ['request', 's:7'],
      ['notification', undefined],
      ['response', 'n:3'],
      ['malformed', undefined],
      ['malformed', undefined],
      ['lenient', 'n:9'],
    ]);
    expect(classified[1]?.traits).toEqual(['params is an array']);
  });
});

describe('JsonRpcReplyLedger', () => {
  it('accepts exactly one reply per request, 7 and "7" counted apart', () => {
    const { ledger, violations } = ledgerFor(
      lines({ jsonrpc: '2.0', id: 7, method: 'ping' }, { jsonrpc: '2.0', id: '7', method: 'ping' }),
    );
    ledger.reply(ok(7));
    ledger.reply(ok('7'));
    ledger.close();
    ledger.finish();
    expect(violations.kinds()).toEqual({});
  });

  it('reports a request left unanswered because its twin id took the reply', () => {
    const { ledger, violations } = ledgerFor(
      lines({ jsonrpc: '2.0', id: 7, method: 'ping' }, { jsonrpc: '2.0', id: '7', method: 'ping' }),
    );
    ledger.reply(ok('7'));
    ledger.close();
    ledger.finish();
    expect(violations.kinds()).toEqual({ 'request never answered (ids like 7 and "7" in flight)': 1 });
  });

  it('reports a second reply, a reply to a notification, a result for a malformed line and unclear errors', () => {
    const { ledger, violations } = ledgerFor(
      lines(
        { jsonrpc: '2.0', id: 1, method: 'ping' },
        { jsonrpc: '2.0', method: 'notifications/initialized' },
        { jsonrpc: '1.0', id: 2, method: 'ping' },
        { jsonrpc: '2.0', id: 3, method: 'tools/call' },
      ),
    );
    ledger.reply(ok(1));
    ledger.reply(ok(1));
    ledger.reply(failed(null));
    ledger.reply(ok(2));
    ledger.reply(failed(3, -32603, '[\n  {"code": "invalid_type"}\n]'));
    ledger.close();
    ledger.finish();
    expect(violations.kinds()).toEqual({
      'more than one reply for one request': 1,
      'answered a notification or response (reply with id null)': 1,
      'a result (not an error) for a malformed line': 1,
      'internal error (-32603) for a client input': 1,
      'error message is a raw dump, not a clear sentence': 1,
    });
  });

  it('lets a cancelled request go unanswered, and ignores what a crashed process still owed', () => {
    const { ledger, violations } = ledgerFor(
      lines(
        { jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'x' } },
        { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 5 } },
        { jsonrpc: '2.0', id: 6, method: 'ping' },
      ),
    );
    ledger.close();
    ledger.abandonOutstanding();
    ledger.finish();
    expect(violations.kinds()).toEqual({});
    expect(ledger.missing()).toBe(0);
  });

  it('owes a reply to a request whose cancellation (plain or BOM-prefixed) was sent before it', () => {
    const cancel = (requestId: string | number) => ({
      jsonrpc: '2.0',
      method: 'notifications/cancelled',
      params: { requestId },
    });
    const { ledger, violations } = ledgerFor(
      lines(
        `\uFEFF${JSON.stringify(cancel('8'))}`,
        { jsonrpc: '2.0', id: '8', method: 'tools/call', params: { name: 'move_cell' } },
        cancel(9),
        { jsonrpc: '2.0', id: 9, method: 'tools/list' },
        { jsonrpc: '2.0', id: 10, method: 'tools/list' },
        cancel(10),
      ),
    );
    ledger.close();
    ledger.finish();
    expect(violations.kinds()).toEqual({ 'request never answered (plain request)': 2 });
    expect(ledger.missing()).toBe(2);
  });

  it("charges a slow request's late result to its own batch, not to a later batch's malformed line with its id", () => {
    const { ledger, violations } = ledgerFor(lines({ jsonrpc: '2.0', id: 5, method: 'tools/call', params: {} }));
    ledger.close();
    // Batch 2 reuses id 5: a malformed line (answered at once with an error) and a request.
    ledger.open(
      2,
      classifyJsonRpcLines(lines('{"jsonrpc":"2.0","id":5,"method":7}', { jsonrpc: '2.0', id: 5, method: 'ping' })),
    );
    ledger.reply(failed(5));
    ledger.reply(ok(5));
    ledger.reply(ok(5));
    ledger.close();
    ledger.finish();
    expect(violations.kinds()).toEqual({});
    expect(ledger.missing()).toBe(0);
  });

  it("gives a request's result to that request, not to an earlier batch's lenient line that went unanswered", () => {
    const { ledger, violations } = ledgerFor(lines('\uFEFF{"jsonrpc":"2.0","id":3,"method":"ping"}'));
    ledger.close();
    ledger.open(2, classifyJsonRpcLines(lines({ jsonrpc: '2.0', id: 3, method: 'ping' })));
    ledger.reply(ok(3));
    ledger.close();
    ledger.finish();
    expect(violations.kinds()).toEqual({});
  });

  it('lets a lenient (BOM-prefixed) cancellation cancel a request sent before it, and only such one', () => {
    const cancel = (requestId: number) =>
      `\uFEFF${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId } })}`;
    const { ledger, violations } = ledgerFor(
      lines({ jsonrpc: '2.0', id: 1, method: 'tools/list' }, cancel(1), cancel(2), {
        jsonrpc: '2.0',
        id: 2,
        method: 'ping',
      }),
    );
    ledger.close();
    ledger.finish();
    expect(violations.kinds()).toEqual({ 'request never answered (plain request)': 1 });
  });

  it('takes the id a reader can sniff from a line over the cap that does not parse (at most one reply)', () => {
    const long = `{"jsonrpc":"2.0","id":27190,"method":"tools/call","params":{"pad":"${'x'.repeat(300)}`;
    const violations = new FuzzViolations();
    const ledger = new JsonRpcReplyLedger(violations);
    ledger.open(1, classifyJsonRpcLines(lines(long), 200));
    ledger.reply(failed(27190));
    ledger.close();
    ledger.finish();
    expect(violations.kinds()).toEqual({});
  });

  it('reports replies to ids never sent', () => {
    const { ledger, violations } = ledgerFor(lines({ jsonrpc: '2.0', id: 1, method: 'ping' }));
    ledger.reply(ok(1));
    ledger.reply(ok(99));
    ledger.reply(ok(true));
    expect(violations.kinds()).toEqual({
      'reply to an id that was never sent': 1,
      'reply with an id JSON-RPC does not allow': 1,
    });
  });
});
