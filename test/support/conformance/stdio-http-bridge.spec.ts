import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { request as httpRequest } from 'node:http';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isAlive } from '../process-tree.js';
import { waitFor } from '../wait-for.js';
import { stdioHttpBridge } from './start-conformance-target.js';

const scriptedServer = fileURLToPath(new URL('./scripted-stdio-server.mjs', import.meta.url));
const VERSION_KEY = 'io.modelcontextprotocol/protocolVersion';
const CAPABILITIES_KEY = 'io.modelcontextprotocol/clientCapabilities';
const SUBSCRIPTION_KEY = 'io.modelcontextprotocol/subscriptionId';
const envelope = { [VERSION_KEY]: '2026-07-28', [CAPABILITIES_KEY]: {} };

interface JsonRpcAnswer {
  id?: unknown;
  result?: Record<string, unknown>;
  error?: { code: number; message: string };
  method?: string;
  params?: Record<string, unknown>;
}

interface Bridge {
  readonly process: ChildProcessWithoutNullStreams;
  readonly url: string;
  exit(): string | undefined;
}

let bridge: Bridge;

beforeEach(async () => {
  const child = spawn(
    process.execPath,
    [stdioHttpBridge, '--port', '0', '--warm-up', 'tools/list', '--', process.execPath, scriptedServer],
    {
      stdio: ['pipe', 'pipe', 'pipe'],
    },
  );
  let stdout = '';
  let exit: string | undefined;
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr.resume();
  child.once('exit', (code, signal) => {
    exit = signal ? `signal ${signal}` : `code ${code}`;
  });
  const url = await waitFor('the bridge to listen', () => /^listening (\S+)$/m.exec(stdout)?.[1]);
  bridge = { process: child, url, exit: () => exit };
});

afterEach(async () => {
  if (bridge.exit() === undefined) bridge.process.kill('SIGTERM');
  await waitFor('the bridge to exit', () => bridge.exit() !== undefined);
});

/** A modern POST: the headers the HTTP binding asks for, unless `headers` overrides them. */
async function post(
  method: string,
  params: Record<string, unknown> = {},
  options: { id?: unknown; headers?: Record<string, string | undefined>; meta?: Record<string, unknown> | null } = {},
): Promise<{ status: number; body: JsonRpcAnswer }> {
  const meta = options.meta === null ? undefined : (options.meta ?? envelope);
  const headers: Record<string, string | undefined> = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': '2026-07-28',
    'mcp-method': method,
    ...(typeof params.name === 'string' ? { 'mcp-name': params.name } : {}),
    ...options.headers,
  };
  const response = await fetch(bridge.url, {
    method: 'POST',
    headers: Object.fromEntries(
      Object.entries(headers).filter((entry): entry is [string, string] => entry[1] !== undefined),
    ),
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: options.id ?? 1,
      method,
      params: meta ? { ...params, _meta: meta } : params,
    }),
  });
  return { status: response.status, body: (await response.json()) as JsonRpcAnswer };
}

/** What the scripted server has read so far. */
async function journal(): Promise<JsonRpcAnswer[]> {
  const { body } = await post('journal');
  return body.result?.received as JsonRpcAnswer[];
}

/** Reads `count` SSE `data:` events from an open response. */
async function readEvents(response: Response, count: number): Promise<JsonRpcAnswer[]> {
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  const events: JsonRpcAnswer[] = [];
  let buffered = '';
  while (events.length < count) {
    const { value, done } = await reader.read();
    if (done) break;
    buffered += decoder.decode(value, { stream: true });
    let end = buffered.indexOf('\n\n');
    while (end !== -1) {
      const data = buffered
        .slice(0, end)
        .split('\n')
        .find((line) => line.startsWith('data:'));
      if (data) events.push(JSON.parse(data.slice(5)) as JsonRpcAnswer);
      buffered = buffered.slice(end + 2);
      end = buffered.indexOf('\n\n');
    }
  }
  reader.releaseLock();
  return events;
}

/** A raw request (fetch cannot set Host). */
function rawPost(headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(bridge.url, { method: 'POST', headers }, (response) => {
      response.resume();
      resolve(response.statusCode ?? 0);
    });
    request.once('error', reject);
    request.end(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'whoami', params: { _meta: envelope } }));
  });
}

describe('stdio-http-bridge in front of a scripted stdio server', { timeout: 30_000 }, () => {
  it('with --warm-up tools/list, opens the shared child with one valid enveloped tools/list before anything it forwards', async () => {
    await post('whoami');
    const [first, second] = await journal();
    expect(first).toMatchObject({ method: 'tools/list', params: { _meta: envelope } });
    expect(second).toMatchObject({ method: 'whoami' });
  });

  it('rewrites JSON-RPC ids, so concurrent requests with one id each get their own answer back', async () => {
    const [one, two] = await Promise.all([post('whoami', {}, { id: 7 }), post('whoami', {}, { id: 7 })]);
    expect(one.body.id).toBe(7);
    expect(two.body.id).toBe(7);
    expect(one.body.result?.idSeen).not.toBe(7);
    expect(one.body.result?.idSeen).not.toBe(two.body.result?.idSeen);
  });

  it('maps the JSON-RPC error of a modern request to its HTTP status', async () => {
    const statusOf = async (code: number, meta?: Record<string, unknown>) => {
      const { status, body } = await post('fail', { code }, { id: `e${code}`, ...(meta ? { meta } : {}) });
      expect(body).toMatchObject({ id: `e${code}`, error: { code } });
      return status;
    };
    expect(await statusOf(-32601)).toBe(404);
    expect(await statusOf(-32020)).toBe(400);
    expect(await statusOf(-32021)).toBe(400);
    expect(await statusOf(-32022)).toBe(400);
    expect(await statusOf(-32602)).toBe(200);
    expect(await statusOf(-32602, { [VERSION_KEY]: '2026-07-28' })).toBe(400);
    expect(await statusOf(-32603)).toBe(200);
  });

  it('answers a header that disagrees with the body itself (400, -32020); the server never sees it', async () => {
    const mismatches = [
      { 'mcp-protocol-version': '2025-11-25' },
      { 'mcp-protocol-version': undefined },
      { 'mcp-method': undefined },
      { 'mcp-method': 'tools/list' },
    ];
    for (const [index, headers] of mismatches.entries()) {
      const { status, body } = await post('whoami', { marker: index }, { id: index, headers });
      expect({ status, body }, JSON.stringify(headers)).toMatchObject({
        status: 400,
        body: { id: index, error: { code: -32020 } },
      });
    }
    const missingName = await post('tools/call', { name: 'a_tool' }, { headers: { 'mcp-name': undefined } });
    expect(missingName).toMatchObject({ status: 400, body: { error: { code: -32020 } } });
    const encoded = `=?base64?${Buffer.from('a_tool').toString('base64')}?=`;
    expect((await post('tools/call', { name: 'a_tool' }, { headers: { 'mcp-name': encoded } })).status).toBe(200);
    const seen = await journal();
    expect(seen.filter((message) => message.method === 'whoami')).toEqual([]);
    expect(seen.filter((message) => message.method === 'tools/call')).toHaveLength(1);
  });

  it('streams an untagged log line on the one request in flight, and drops an untagged list_changed', async () => {
    const logged = await fetch(bridge.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'log' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 'g', method: 'log', params: { _meta: envelope } }),
    });
    expect(logged.headers.get('content-type')).toBe('text/event-stream');
    expect(await readEvents(logged, 2)).toMatchObject([{ method: 'notifications/message' }, { id: 'g', result: {} }]);
    // A list_changed names no request: the answer stays plain JSON with its own status.
    const announced = await post('announce', {}, { id: 'a' });
    expect(announced).toEqual({ status: 200, body: { jsonrpc: '2.0', id: 'a', result: {} } });
  });

  it('refuses a non-loopback Host or Origin (403)', async () => {
    const host = new URL(bridge.url).host;
    const base = { 'content-type': 'application/json', 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'whoami' };
    expect(await rawPost({ ...base, host })).toBe(200);
    expect(await rawPost({ ...base, host: 'attacker.example' })).toBe(403);
    expect(await rawPost({ ...base, host, origin: 'http://attacker.example' })).toBe(403);
  });

  it('streams a listen as SSE under the client id, and a client that goes away cancels it in the server', async () => {
    const abort = new AbortController();
    const listen = await fetch(bridge.url, {
      method: 'POST',
      signal: abort.signal,
      headers: {
        'content-type': 'application/json',
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': 'subscriptions/listen',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 'L1', method: 'subscriptions/listen', params: { _meta: envelope } }),
    });
    expect(listen.headers.get('content-type')).toBe('text/event-stream');
    const [ack] = await readEvents(listen, 1);
    expect(ack).toMatchObject({
      method: 'notifications/subscriptions/acknowledged',
      params: { _meta: { [SUBSCRIPTION_KEY]: 'L1' } },
    });
    expect((await post('poke')).status).toBe(200);
    const [changed] = await readEvents(listen, 1);
    expect(changed).toMatchObject({
      method: 'notifications/tools/list_changed',
      params: { _meta: { [SUBSCRIPTION_KEY]: 'L1' } },
    });
    abort.abort();
    const listenIdSeen = (await journal()).find((message) => message.method === 'subscriptions/listen')?.id;
    await waitFor('the server to get the cancellation', async () =>
      (await journal()).some(
        (message) => message.method === 'notifications/cancelled' && message.params?.requestId === listenIdSeen,
      ),
    );
  });

  it('gives a legacy initialize its own child and session; DELETE ends that child', async () => {
    const initialize = await fetch(bridge.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25' } }),
    });
    expect(initialize.status).toBe(200);
    const session = initialize.headers.get('mcp-session-id') as string;
    expect(session).toEqual(expect.any(String));
    const legacyWhoami = async () => {
      const response = await fetch(bridge.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'mcp-session-id': session },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'whoami' }),
      });
      return { status: response.status, body: (await response.json()) as JsonRpcAnswer };
    };
    const legacyPid = (await legacyWhoami()).body.result?.pid as number;
    const modernPid = (await post('whoami')).body.result?.pid as number;
    expect(legacyPid).not.toBe(modernPid);
    const ended = await fetch(bridge.url, { method: 'DELETE', headers: { 'mcp-session-id': session } });
    expect(ended.status).toBe(200);
    await waitFor('the legacy child to exit', () => !isAlive(legacyPid));
    expect((await legacyWhoami()).status).toBe(404);
    expect(isAlive(modernPid)).toBe(true);
  });

  it('stops its children on SIGTERM and exits with 0', async () => {
    const modernPid = (await post('whoami')).body.result?.pid as number;
    bridge.process.kill('SIGTERM');
    await waitFor('the bridge to exit', () => bridge.exit() !== undefined);
    expect(bridge.exit()).toBe('code 0');
    expect(isAlive(modernPid)).toBe(false);
  });
});
