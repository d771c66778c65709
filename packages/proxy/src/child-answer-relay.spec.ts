import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import {
  ChildProcessPort,
  Clock,
  type JsonRpcRequest,
  Logger,
  type SessionReport,
  serializeJsonRpcLine,
} from '@nteract-mcp/core';
import {
  createTestContainer,
  FakeChildProcess,
  FakeChildProcessPort,
  ManualClock,
  RecordingLogger,
} from '@nteract-mcp/core/testing';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ChildAnswerRelay } from './child-answer-relay.js';
import { ChildConnection } from './child-connection.js';
import { ChildSupervisor } from './child-supervisor.js';
import { createProxyPlugin } from './create-proxy-plugin.js';
import { type InFlightRequest, InFlightRequests } from './in-flight-requests.js';
import { ProxyStatus } from './proxy-status.js';
import { RejoinTargetTracker } from './rejoin-target-tracker.js';
import { ToolListCache } from './tool-list-cache.js';
import { WriteTurn } from './turn-writer.js';
import { UpstreamWriter } from './upstream-writer.js';
import { BannerQueue } from './version-banner.js';

const settle = async () => {
  for (let i = 0; i < 5; i++) await new Promise<void>((resolve) => setImmediate(resolve));
};

afterEach(() => {
  vi.restoreAllMocks();
});

interface SetupOptions {
  /** What the upstream era does with results (default: sends them as they are). */
  readonly shapeResult?: (result: Record<string, unknown>) => Record<string, unknown>;
}

/**
 * The relay between real parts: a {@link ChildConnection} over a {@link FakeChildProcess}, the
 * ledger, an {@link UpstreamWriter} over an in-memory stream, the banner, the status and the tool
 * cache, as the proxy wires them.
 */
function setup(options: SetupOptions = {}) {
  const clock = new ManualClock(0);
  const logger = new RecordingLogger();
  const port = new FakeChildProcessPort();
  const container = createTestContainer({ plugins: [createProxyPlugin()] })
    .override(ChildProcessPort, port)
    .override(Clock, clock)
    .override(Logger, logger)
    .build();
  const output = new PassThrough();
  let out = '';
  output.setEncoding('utf8').on('data', (chunk: string) => {
    out += chunk;
  });
  const turn = new WriteTurn();
  const requests = new InFlightRequests<ChildConnection>();
  const banner = new BannerQueue();
  const tools = new ToolListCache({
    builtInTools: [{ name: 'known_tool', inputSchema: { type: 'object' } }],
    filePath: join(tmpdir(), `child-answer-relay-${process.pid}-never-written.json`),
    logger,
  });
  const reports: SessionReport[] = [];
  const relay = new ChildAnswerRelay({
    requests,
    writer: new UpstreamWriter({
      output,
      limit: 1024 * 1024,
      logger,
      shapeResult: options.shapeResult ?? ((result) => result),
      turn,
    }),
    turn,
    banner,
    status: new ProxyStatus(container.get(ChildSupervisor), new RejoinTargetTracker(), clock),
    tools,
    clock,
    logger,
    resultsAsIs: () => options.shapeResult === undefined,
    onReport: (_child, report) => reports.push(report),
    onAnswered: () => undefined,
  });
  const fake = new FakeChildProcess({ command: 'runt-mcp', args: [], env: {} }, 4242);
  let nextId = 100;
  const child: ChildConnection = new ChildConnection({
    handle: fake,
    handedOff: undefined,
    nextId: () => nextId++,
    clock,
    logger,
    onMessage: (message, line) => relay.relayParsed(child, message, line),
    onAnswer: (answer) => relay.relayScanned(child, answer),
    turn,
  });
  // As the handshake sets it from the child's list: its session_status declares the status document.
  child.statusTools = new Set(['session_status']);
  /** Forwards a client request to the child; resolves with the id it went out under there. */
  const forward = async (
    request: JsonRpcRequest,
  ): Promise<{ pending: InFlightRequest<ChildConnection>; childId: number }> => {
    const params = request.params as { name?: unknown } | undefined;
    const toolName = request.method === 'tools/call' && typeof params?.name === 'string' ? params.name : undefined;
    const pending = requests.add(request, toolName, clock.now());
    child.forward(pending, (childId) => requests.markSent(pending, child, childId));
    await settle();
    const sent = fake.receivedMessages().at(-1) as { id: number };
    return { pending, childId: sent.id };
  };
  const call = (id: string | number, name: string) =>
    forward({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: {} } });
  /** What the client got, line by line, as written. */
  const written = () => out.split('\n').filter(Boolean);
  const answersTo = (id: unknown) => written().filter((line) => (JSON.parse(line) as { id?: unknown }).id === id);
  return { relay, fake, child, requests, banner, tools, logger, reports, forward, call, written, answersTo };
}

/** A tool result laid out as the MCP SDK writes it (the id last), with what a re-serialisation would change. */
const sdkLine = (id: number, report?: object) =>
  `{"result":{${report ? `"_meta":{"nteract/session":${JSON.stringify(report)}},` : ''}"content":[{"type":"text","text":"f\\u00fcr \u2713 \\n"}],"structuredContent":{"n": 1.50, "z":[2, 1]}},"jsonrpc":"2.0","id":${id}}`;

describe(ChildAnswerRelay, () => {
  describe('pass-through', () => {
    it("writes the child's own bytes with only the id replaced, never parsing or serialising the answer", async () => {
      const t = setup();
      const { childId } = await t.call('call-7', 'create_cell');
      const parse = vi.spyOn(JSON, 'parse');
      const stringify = vi.spyOn(JSON, 'stringify');
      t.fake.writeStdout(`${sdkLine(childId)}\n`);
      await settle();
      expect(parse).not.toHaveBeenCalled();
      // Only the client's id is written out as JSON.
      expect(stringify.mock.calls).toEqual([['call-7']]);
      vi.restoreAllMocks();
      // `\u00fc`, the spaces and `1.50` survive: a parse and serialise would have changed them.
      expect(t.written()).toEqual([sdkLine(childId).replace(`"id":${childId}}`, '"id":"call-7"}')]);
      expect(t.requests.size).toBe(0);
      expect(t.logger.find('forwarded', 'debug')[0]?.fields).toMatchObject({ id: 'call-7', outcome: 'ok' });
    });

    it('records the session report a passed-through answer carries, after its write, once per answer', async () => {
      const t = setup();
      const report = { target: '/n/a.ipynb', daemonVersion: '2.0.0' };
      for (const id of [1, 2]) {
        const { childId } = await t.call(id, 'get_all_cells');
        t.fake.writeStdout(`${sdkLine(childId, report)}\n`);
        await settle();
        expect(t.written().at(-1)).toBe(sdkLine(childId, report).replace(`"id":${childId}}`, `"id":${id}}`));
      }
      expect(t.reports).toEqual([report, report]);
    });

    it('does not pass through while the era shapes results: the answer is written anew, shaped', async () => {
      const t = setup({ shapeResult: (result) => ({ ...result, shaped: true }) });
      const { childId } = await t.call(3, 'create_cell');
      t.fake.writeStdout(`${sdkLine(childId)}\n`);
      await settle();
      expect(t.written()).toHaveLength(1);
      expect(JSON.parse(t.written()[0] as string)).toMatchObject({ id: 3, result: { shaped: true } });
    });
  });

  describe('decoration', () => {
    it('appends a due restart banner to a tool result, naming the version the answer reports', async () => {
      const t = setup();
      t.banner.queue({ previousVersion: '1.0.0', handedOff: undefined });
      const { childId } = await t.call(4, 'create_cell');
      t.fake.writeStdout(`${sdkLine(childId, { target: null, daemonVersion: '2.0.0' })}\n`);
      await settle();
      const answer = JSON.parse(t.written()[0] as string) as { result: { content: { text: string }[] } };
      expect(answer.result.content.map((item) => item.text)).toEqual([
        'f\u00fcr \u2713 \n',
        '[nteract] Daemon upgraded (1.0.0 → 2.0.0)\n',
      ]);
      expect(t.banner.idle).toBe(true);
    });

    it('passes on unchanged the answer of a tool the child did not declare as its status document, whatever its name', async () => {
      const t = setup();
      t.child.statusTools = new Set();
      const { childId } = await t.call(5, 'session_status');
      const line = sdkLine(childId, { target: null });
      t.fake.writeStdout(`${line}\n`);
      await settle();
      expect(t.written()).toEqual([line.replace(`"id":${childId}}`, '"id":5}')]);
    });

    it("adds the proxy's section to the nteract server's session_status", async () => {
      const t = setup();
      const { childId } = await t.call(5, 'session_status');
      t.fake.send({
        result: {
          content: [{ type: 'text', text: '{"active":null}' }],
          _meta: { 'nteract/session': { target: null } },
        },
        jsonrpc: '2.0',
        id: childId,
      });
      await settle();
      const answer = JSON.parse(t.written()[0] as string) as { result: { content: { text: string }[] } };
      expect(JSON.parse(answer.result.content[0]?.text ?? '')).toMatchObject({
        active: null,
        proxy: { restart_count: 0, last_report: null },
      });
    });

    it("adds reconnect to the child's tool list, and serves the known list for an empty one", async () => {
      const t = setup();
      const names = (line: string | undefined) =>
        (JSON.parse(line ?? '{}') as { result: { tools: { name: string }[] } }).result.tools.map((tool) => tool.name);
      const live = await t.forward({ jsonrpc: '2.0', id: 6, method: 'tools/list' });
      t.fake.send({ result: { tools: [{ name: 'live_tool', inputSchema: {} }] }, jsonrpc: '2.0', id: live.childId });
      const empty = await t.forward({ jsonrpc: '2.0', id: 7, method: 'tools/list' });
      t.fake.send({ result: { tools: [] }, jsonrpc: '2.0', id: empty.childId });
      await settle();
      expect(names(t.answersTo(6)[0])).toEqual(['live_tool', 'reconnect']);
      expect(names(t.answersTo(7)[0])).toEqual(['known_tool', 'reconnect']);
    });

    it('passes an error answer on, and answers a result that is not an object with an internal error', async () => {
      const t = setup();
      const failing = await t.call(8, 'create_cell');
      t.fake.send({ jsonrpc: '2.0', id: failing.childId, error: { code: -32602, message: 'bad cell' } });
      const odd = await t.call(9, 'create_cell');
      t.fake.send({ jsonrpc: '2.0', id: odd.childId, result: [1, 2] });
      await settle();
      expect(JSON.parse(t.answersTo(8)[0] as string)).toEqual({
        jsonrpc: '2.0',
        id: 8,
        error: { code: -32602, message: 'bad cell' },
      });
      expect(JSON.parse(t.answersTo(9)[0] as string)).toMatchObject({ id: 9, error: { code: -32603 } });
    });
  });

  describe('exactly one answer per request', () => {
    it('ignores a second answer of the child to the same request, on either path', async () => {
      const t = setup();
      const fast = await t.call(10, 'create_cell');
      t.fake.writeStdout(`${sdkLine(fast.childId)}\n${sdkLine(fast.childId)}\n`);
      const parsed = await t.call(11, 'create_cell');
      const line = serializeJsonRpcLine({ jsonrpc: '2.0', id: parsed.childId, result: { content: [] } });
      t.fake.writeStdout(`${line}${line}`);
      await settle();
      expect(t.answersTo(10)).toHaveLength(1);
      expect(t.answersTo(11)).toHaveLength(1);
      expect(t.logger.find('ignoring a child response to no pending request', 'debug')).toHaveLength(2);
    });

    it("leaves the child's late answer unwritten once the proxy answered the request itself, and the reverse", async () => {
      const t = setup();
      const answeredFirst = await t.call(12, 'create_cell');
      t.relay.fail(answeredFirst.pending, { code: -32000, message: 'outcome unknown' });
      t.fake.writeStdout(`${sdkLine(answeredFirst.childId)}\n`);
      const childFirst = await t.call(13, 'create_cell');
      t.fake.writeStdout(`${sdkLine(childFirst.childId)}\n`);
      await settle();
      t.relay.reply(childFirst.pending, undefined, { code: -32000, message: 'too late' });
      t.relay.serveKnownTools(childFirst.pending);
      await settle();
      expect(t.answersTo(12).map((line) => JSON.parse(line).error?.message)).toEqual(['outcome unknown']);
      expect(t.answersTo(13).map((line) => JSON.parse(line).result !== undefined)).toEqual([true]);
      expect(t.written()).toHaveLength(2);
    });

    it('answers with an internal error when relaying fails, and only once', async () => {
      const t = setup();
      const { childId } = await t.call(14, 'create_cell');
      vi.spyOn(t.banner, 'appendTo').mockImplementation(() => {
        throw new Error('boom');
      });
      t.banner.queue({ previousVersion: undefined, handedOff: undefined });
      t.fake.writeStdout(`${sdkLine(childId)}\n`);
      await settle();
      expect(t.answersTo(14)).toHaveLength(1);
      expect(JSON.parse(t.answersTo(14)[0] as string)).toMatchObject({ error: { code: -32603 } });
      expect(t.logger.find('handling a child message failed', 'error')).toHaveLength(1);
    });
  });
});
