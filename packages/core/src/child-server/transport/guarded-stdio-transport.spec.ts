import { PassThrough, Writable } from 'node:stream';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { type JSONRPCMessage, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { RecordingLogger } from '@nteract-mcp/foundation/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { GuardedStdioTransport, type OutgoingMessageFilter } from './guarded-stdio-transport.js';

interface Wire {
  readonly stdin: PassThrough;
  readonly lines: () => Record<string, unknown>[];
  readonly send: (line: string) => void;
  readonly server: Server;
  readonly logger: RecordingLogger;
}

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
});

/** A real SDK server with one tool list handler, behind the guarded transport on in-memory streams. */
async function wire(
  options: { outgoing?: OutgoingMessageFilter[]; maxLineBytes?: number; maxMessageBytes?: number } = {},
): Promise<Wire> {
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  let text = '';
  stdout.setEncoding('utf8').on('data', (chunk: string) => {
    text += chunk;
  });
  const logger = new RecordingLogger();
  const server = new Server({ name: 't', version: '1' }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: [] }));
  servers.push(server);
  await server.connect(new GuardedStdioTransport({ stdin, stdout, logger, ...options }));
  return {
    stdin,
    server,
    logger,
    send: (line) => stdin.write(`${line}\n`),
    lines: () =>
      text
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as Record<string, unknown>),
  };
}

const initialize = JSON.stringify({
  jsonrpc: '2.0',
  id: 0,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'c', version: '1' } },
});

describe(GuardedStdioTransport, () => {
  it('answers every request: bad params -32602 in one line, bad lines -32600/-32700, then serves the next one', async () => {
    const w = await wire();
    w.send(initialize);
    w.send('{"jsonrpc":"2.0","id":1,"method":"tools/list","params":[1,2]}');
    w.send('{"jsonrpc":"2.0","id":2,"method":"tools/call"}');
    w.send('{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"arguments":{}}}');
    // Arguments that are not an object: a malformed request (protocol error), not the tool's business.
    w.send('{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"get_cell","arguments":"cell-1"}}');
    w.send('{"jsonrpc":"2.0","id":4,"method":');
    w.send('[{"jsonrpc":"2.0","id":5,"method":"ping"}]');
    w.send('{"jsonrpc":"2.0","id":6.5,"method":"ping"}');
    w.send('{"jsonrpc":"2.0","method":"notifications/initialized","params":[1]}');
    w.send('{"jsonrpc":"2.0","id":7,"method":"tools/list"}');
    await expect.poll(() => w.lines().length).toBe(9);
    const byId = new Map(w.lines().map((line) => [JSON.stringify(line.id), line]));
    expect(byId.get('1')?.error).toEqual({
      code: -32602,
      message: 'Invalid params for tools/list: "params" must be an object (MCP uses named parameters), not an array',
    });
    expect(byId.get('2')?.error).toMatchObject({ code: -32602 });
    const messageOf = (id: string): string => (byId.get(id)?.error as { message?: string } | undefined)?.message ?? '';
    expect(messageOf('2')).toMatch(/^Invalid params for tools\/call: params/);
    expect(messageOf('3')).toMatch(/^Invalid params for tools\/call: params\.name/);
    expect(byId.get('8')?.error).toMatchObject({ code: -32602 });
    expect(messageOf('8')).toMatch(/^Invalid params for tools\/call: params\.arguments/);
    for (const id of ['2', '3', '8']) {
      const message = messageOf(id);
      expect(message).not.toContain('\n');
      expect(message).not.toContain('"code"');
    }
    expect(
      w
        .lines()
        .filter((line) => line.id === null)
        .map((line) => line.error),
    ).toEqual([
      { code: -32700, message: 'Parse error: the line is not valid JSON' },
      { code: -32600, message: expect.stringMatching(/^Invalid Request: batches/) },
    ]);
    expect(byId.get('6.5')?.error).toMatchObject({ code: -32600 });
    expect(byId.get('7')?.result).toEqual({ tools: [] });
    expect(w.logger.find('refused an incoming message').length).toBeGreaterThanOrEqual(6);
  });

  it('names a client-supplied method bounded in its answers, however long or odd it is', async () => {
    const w = await wire();
    w.send(initialize);
    const method = `m\r${'x'.repeat(150_000)}`;
    w.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: [1] }));
    w.send('{"jsonrpc":"2.0","id":2,"method":"tools/list"}');
    await expect.poll(() => w.lines().length).toBe(3);
    expect(w.lines().find((line) => line.id === 1)?.error).toEqual({
      code: -32602,
      message: `Invalid params for "m\\r${'x'.repeat(78)}…": "params" must be an object (MCP uses named parameters), not an array`,
    });
    expect(w.lines().find((line) => line.id === 2)).toMatchObject({ result: { tools: [] } });
  });

  it('answers a request whose cancellation came before it (in the same chunk), and still honours one in flight', async () => {
    const w = await wire();
    w.send(initialize);
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    w.server.setRequestHandler(ListToolsRequestSchema, async (request) =>
      request.params?.cursor === 'hold' ? held.then(() => ({ tools: [] })) : { tools: [] },
    );
    const cancel = (requestId: string | number): string =>
      JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId } });
    // One write: the cancellation of "5" precedes request "5"; 5 (a number) is a different id.
    w.stdin.write(
      `${cancel('5')}\n${JSON.stringify({ jsonrpc: '2.0', id: '5', method: 'tools/list' })}\n${cancel(5)}\n` +
        `${JSON.stringify({ jsonrpc: '2.0', id: 5, method: 'tools/list', params: { cursor: 'hold' } })}\n`,
    );
    await expect.poll(() => w.lines().some((line) => line.id === '5')).toBe(true);
    w.send(cancel(5));
    release();
    w.send('{"jsonrpc":"2.0","id":6,"method":"tools/list"}');
    await expect.poll(() => w.lines().some((line) => line.id === 6)).toBe(true);
    expect(w.lines().map((line) => line.id)).toEqual([0, '5', 6]);
    expect(w.logger.find('dropped a cancellation of no request in flight')).toHaveLength(2);
  });

  it('answers a line over the cap and goes on', async () => {
    const w = await wire({ maxLineBytes: 200 });
    w.send(initialize);
    w.send(JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/list', params: { pad: 'x'.repeat(500) } }));
    w.send('{"jsonrpc":"2.0","id":10,"method":"tools/list"}');
    await expect.poll(() => w.lines().length).toBe(3);
    expect(w.lines().find((line) => line.id === 9)).toMatchObject({ error: { code: -32600 } });
    expect(w.lines().find((line) => line.id === 10)).toMatchObject({ result: { tools: [] } });
  });

  it('passes outgoing messages through its filters, and answers a reply a filter refuses with -32603', async () => {
    const seen: string[] = [];
    const filter: OutgoingMessageFilter = (message: JSONRPCMessage) => {
      seen.push('id' in message ? String(message.id) : 'notification');
      if ('id' in message && message.id === 2) throw new Error('too large to send');
      return message;
    };
    const w = await wire({ outgoing: [filter] });
    w.send(initialize);
    w.send('{"jsonrpc":"2.0","id":1,"method":"tools/list"}');
    w.send('{"jsonrpc":"2.0","id":2,"method":"tools/list"}');
    await expect.poll(() => w.lines().length).toBe(3);
    expect(seen).toEqual(['0', '1', '2']);
    expect(w.lines().find((line) => line.id === 2)).toEqual({
      jsonrpc: '2.0',
      id: 2,
      error: { code: -32603, message: 'The reply could not be sent: too large to send' },
    });
  });

  it('never writes a message over the size limit: an answer becomes an error to its id, a notification is dropped', async () => {
    const w = await wire({ maxMessageBytes: 1000 });
    w.server.setRequestHandler(ListToolsRequestSchema, async (_request, extra) => {
      await extra.sendNotification({
        method: 'notifications/progress',
        params: { progressToken: 1, progress: 1, message: 'y'.repeat(2000) },
      });
      return { tools: [{ name: 'x'.repeat(2000), inputSchema: { type: 'object' } }] };
    });
    w.send(initialize);
    w.send('{"jsonrpc":"2.0","id":"big","method":"tools/list"}');
    w.send('{"jsonrpc":"2.0","id":2,"method":"ping"}');
    await expect.poll(() => w.lines().length).toBe(3);
    const big = w.lines().find((line) => line.id === 'big');
    expect(big?.error).toMatchObject({ code: -32603 });
    expect((big?.error as { message?: string } | undefined)?.message).toMatch(
      /^The answer is \d+ bytes \(0 MiB\), over the 1000-byte \(0 MiB\) limit of one MCP message, so it was not sent\./,
    );
    expect(w.lines().find((line) => line.id === 2)).toMatchObject({ result: {} });
    expect(w.lines().some((line) => line.method === 'notifications/progress')).toBe(false);
    expect(w.logger.records.map((record) => record.message)).toEqual(
      expect.arrayContaining([
        'dropped a message over the message size limit',
        'replaced an answer over the message size limit by an error',
      ]),
    );
  });

  it('closes when its stdout fails under a write (the reader went away), instead of throwing', async () => {
    const stdin = new PassThrough();
    const stdout = new PassThrough();
    const transport = new GuardedStdioTransport({ stdin, stdout });
    let closed = 0;
    transport.onclose = () => {
      closed += 1;
    };
    await transport.start();
    stdout.emit('error', Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }));
    expect(closed).toBe(1);
    await transport.close();
    expect(stdout.listenerCount('error')).toBe(0);
  });

  it('never waits on a stdout whose reader went away: the write under way, later ones and close() all settle', async () => {
    const stdin = new PassThrough();
    // Takes one chunk and never finishes it (the pipe is full), until the reader goes: then EPIPE.
    const unfinished: ((error?: Error | null) => void)[] = [];
    const stdout = new Writable({
      highWaterMark: 1,
      write: (_chunk, _encoding, done) => {
        unfinished.push(done);
      },
    });
    const transport = new GuardedStdioTransport({ stdin, stdout });
    let closed = 0;
    transport.onclose = () => {
      closed += 1;
    };
    await transport.start();
    const notification: JSONRPCMessage = { jsonrpc: '2.0', method: 'notifications/tools/list_changed' };
    const waiting = transport.send({ jsonrpc: '2.0', id: 2, result: {} });
    expect(unfinished).toHaveLength(1);
    unfinished[0]?.(Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }));
    await expect(waiting).resolves.toBeUndefined();
    expect(closed).toBe(1);
    // A stream ended at close (the native era's listen streams) is written after that: dropped.
    await expect(transport.send(notification)).resolves.toBeUndefined();
    await expect(transport.close()).resolves.toBeUndefined();
    expect(unfinished).toHaveLength(1);
  });

  it('drops a message nested too deeply to handle, and goes on', async () => {
    const w = await wire();
    w.send(initialize);
    const deep = `${'{"a":'.repeat(20_000)}1${'}'.repeat(20_000)}`;
    // A response to nothing we asked: the SDK's own error text for it would overflow the stack.
    w.send(`{"jsonrpc":"2.0","id":"r","result":${deep}}`);
    w.send('{"jsonrpc":"2.0","id":6,"method":"tools/list"}');
    await expect.poll(() => w.lines().length).toBe(2);
    expect(w.lines().find((line) => line.id === 6)).toMatchObject({ result: { tools: [] } });
    expect(w.logger.find('dropped an incoming message that could not be checked')).toHaveLength(1);
  });
});
