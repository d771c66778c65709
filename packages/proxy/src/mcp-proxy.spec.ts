import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import {
  ChildProcessPort,
  Clock,
  ContributionProvider,
  idempotencyMetaKey,
  Logger,
  type McpPlugin,
  ProtocolAdmission,
  restoredSubscriptionMetaKey,
} from '@nteract-mcp/core';
import { createTestContainer, type FakeChildProcess, FakeChildProcessPort } from '@nteract-mcp/core/testing';
import { ManualClock, RecordingLogger } from '@nteract-mcp/foundation/testing';
import { createLegacyTransportPlugin } from '@nteract-mcp/plugin-transport-legacy';
import { createNativeTransportPlugin } from '@nteract-mcp/plugin-transport-native';
import { afterEach, describe, expect, it } from 'vitest';
import { ChildSupervisor } from './child-supervisor.js';
import { createProxyPlugin } from './create-proxy-plugin.js';
import { McpProxy } from './mcp-proxy.js';
import { RejoinTargetTracker } from './rejoin-target-tracker.js';
import { ToolListCache } from './tool-list-cache.js';
import { proxyInstructions } from './upstream-handshake.js';

let tools: object[] = [];
const allTools = [
  { name: 'connect_notebook', inputSchema: { type: 'object' }, annotations: { idempotentHint: true } },
  { name: 'create_notebook', inputSchema: { type: 'object' }, annotations: { idempotentHint: false } },
  {
    name: 'create_cell',
    inputSchema: { type: 'object' },
    annotations: { idempotentHint: false },
    _meta: { [idempotencyMetaKey]: 'honored' },
  },
  {
    name: 'get_all_cells',
    inputSchema: { type: 'object' },
    annotations: { readOnlyHint: true },
    _meta: { [idempotencyMetaKey]: 'honored' },
  },
  {
    name: 'session_status',
    inputSchema: { type: 'object' },
    annotations: { readOnlyHint: true },
    _meta: { 'nteract/supervision-status': true },
  },
];

/** What every fake child declares in its `initialize` answer: more than the proxy's built-in description. */
const childCapabilities = {
  tools: { listChanged: false },
  resources: { listChanged: true, subscribe: true },
  prompts: {},
  logging: {},
  completions: {},
};
const childInstructions = 'Fake child: prompts and logging are served too.';
/** What every fake child says of itself to a `server/discover` (the native era): not what it says to `initialize`. */
const discoveredInstructions = 'Fake child, discovered: prompts and logging are served too.';

const dirs: string[] = [];
const proxies: McpProxy[] = [];
afterEach(async () => {
  for (const proxy of proxies.splice(0)) await proxy.close(0);
  // A tool-cache write of the last handshake may still be renaming its file: retry until it is done.
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true, maxRetries: 20, retryDelay: 10 });
});

/** The idempotency key in a request's `_meta`, if any. */
const metaKey = (params: Record<string, unknown> | undefined): unknown =>
  (params?._meta as Record<string, unknown> | undefined)?.[idempotencyMetaKey];

/**
 * Lets I/O (the tool cache's file writes) and continuations run until `check` holds, or for about
 * a second when it never does (used to give a wrong event every chance to show up).
 */
/** The tool names in the cache file, joined; `undefined` while it is absent or half-written. */
function cachedToolNames(file: string): string | undefined {
  try {
    const stored = JSON.parse(readFileSync(file, 'utf8')) as { tools?: { name: string }[] };
    return stored.tools?.map((tool) => tool.name).join();
  } catch {
    return undefined;
  }
}

/** Waits until `check()` holds; fails the test (instead of going on) if it never does within 20 s. */
async function eventually(check: () => boolean): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`condition never held: ${check.toString()}`);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

const settle = async () => {
  for (let i = 0; i < 20; i++) await new Promise<void>((resolve) => setImmediate(resolve));
};

interface SetupOptions {
  /**
   * `serverInfo.title` of every child, or of the n-th child (0-based); `null` for none (a child
   * that could not reach a daemon).
   */
  readonly title?: string | null | ((child: number) => string | null);
  /** Children keep `initialize` unanswered until `releaseInitialize()`. */
  readonly holdInitialize?: boolean;
  /** Tools written to the cache file before the proxy starts; default none (a cold start). */
  readonly cachedTools?: readonly object[];
  /** The cache file's text before the proxy starts (wins over `cachedTools`). */
  readonly cacheFile?: string;
  /** `McpProxyOptions.toolListWaitMs`. */
  readonly toolListWaitMs?: number;
  /** The first spawn fails as a missing binary does. */
  readonly failFirstSpawn?: boolean;
  /** The protocol era plugins of the proxy's composition; default legacy and native, as shipped. */
  readonly eras?: readonly McpPlugin[];
  /** Skip the legacy handshake the setup does by default (the test opens the connection itself). */
  readonly noHandshake?: boolean;
  /** `McpProxyOptions.startNotebook`. */
  readonly startNotebook?: string;
  /** While it returns true, children leave `tools/list` unanswered. */
  readonly holdToolsList?: () => boolean;
}

/**
 * The proxy over fake children that answer the handshake and tools/list by themselves; tool calls
 * are answered by `answer` (return undefined to leave a call unanswered).
 */
async function setup(
  answer: (
    child: FakeChildProcess,
    request: { id: number; method: string; params?: Record<string, unknown> },
  ) => unknown,
  options: SetupOptions = {},
) {
  tools = [...allTools];
  const dir = mkdtempSync(join(tmpdir(), 'proxy-unit-'));
  dirs.push(dir);
  if (options.cachedTools) writeFileSync(join(dir, 'tools.json'), JSON.stringify(options.cachedTools));
  if (options.cacheFile !== undefined) writeFileSync(join(dir, 'tools.json'), options.cacheFile);
  const titleOf = (child: FakeChildProcess): string | null => {
    const title = options.title === undefined ? 'nteract (daemon 1.0.0)' : options.title;
    return typeof title === 'function' ? title(port.spawned.indexOf(child)) : title;
  };
  const heldInitialize: (() => void)[] = [];
  const clock = new ManualClock(0);
  const port = new FakeChildProcessPort();
  if (options.failFirstSpawn) port.failNextSpawn();
  const logger = new RecordingLogger();
  const container = createTestContainer({
    plugins: [createProxyPlugin(), ...(options.eras ?? [createLegacyTransportPlugin(), createNativeTransportPlugin()])],
  })
    .override(ChildProcessPort, port)
    .override(Clock, clock)
    .override(Logger, logger)
    .build();
  const received = new Map<FakeChildProcess, { id?: number; method?: string; params?: Record<string, unknown> }[]>();
  port.onSpawn((child) => {
    const seen: { id?: number; method?: string; params?: Record<string, unknown> }[] = [];
    received.set(child, seen);
    let buffer = '';
    child.stdin.on('data', (chunk: Buffer | string) => {
      buffer += chunk.toString();
      const lines = buffer.split('\n');
      buffer = lines.pop() ?? '';
      for (const line of lines.filter(Boolean)) {
        const message = JSON.parse(line);
        seen.push(message);
        if (message.id === undefined || child.hasExited) continue;
        if (message.method === 'initialize') {
          const reply = () =>
            child.send({
              jsonrpc: '2.0',
              id: message.id,
              result: {
                protocolVersion: '2025-06-18',
                capabilities: childCapabilities,
                instructions: childInstructions,
                serverInfo: {
                  name: 'runt',
                  version: '1',
                  ...(titleOf(child) === null ? {} : { title: titleOf(child) }),
                },
              },
            });
          if (options.holdInitialize) heldInitialize.push(reply);
          else reply();
        } else if (message.method === 'server/discover') {
          child.send({
            jsonrpc: '2.0',
            id: message.id,
            result: {
              supportedVersions: ['2026-07-28'],
              capabilities: childCapabilities,
              instructions: discoveredInstructions,
              _meta: {
                'io.modelcontextprotocol/serverInfo': {
                  name: 'runt',
                  version: '1',
                  ...(titleOf(child) === null ? {} : { title: titleOf(child) }),
                },
              },
            },
          });
        } else if (message.method === 'tools/list') {
          if (!options.holdToolsList?.()) child.send({ jsonrpc: '2.0', id: message.id, result: { tools } });
        } else {
          const result = answer(child, message);
          if (result !== undefined) child.send({ jsonrpc: '2.0', id: message.id, result });
        }
      }
    });
  });
  const input = new PassThrough();
  const output = new PassThrough();
  let out = '';
  output.setEncoding('utf8').on('data', (chunk: string) => {
    out += chunk;
  });
  const exits: number[] = [];
  const toolNames = (tools as { name: string }[]).map((tool) => tool.name).join();
  const proxy = new McpProxy({
    input,
    output,
    supervisor: container.get(ChildSupervisor),
    eras: container.get<ContributionProvider<ProtocolAdmission>>(ContributionProvider, { name: ProtocolAdmission }),
    tracker: new RejoinTargetTracker(),
    tools: new ToolListCache({ builtInTools: [], filePath: join(dir, 'tools.json'), logger }),
    clock,
    logger,
    version: '9.9.9',
    resolveChild: () => ({ command: 'runt-mcp', args: [], env: {} }),
    childWaitMs: 60_000,
    ...(options.toolListWaitMs === undefined ? {} : { toolListWaitMs: options.toolListWaitMs }),
    ...(options.startNotebook === undefined ? {} : { startNotebook: options.startNotebook }),
    onExit: (code) => exits.push(code),
  });
  proxies.push(proxy);
  await proxy.start();
  const send = async (message: object) => {
    input.write(`${JSON.stringify(message)}\n`);
    await settle();
  };
  const lines = () =>
    out
      .split('\n')
      .filter(Boolean)
      .map(
        (line) =>
          JSON.parse(line) as {
            id?: unknown;
            result?: Record<string, unknown>;
            error?: { code: number; message: string; data?: unknown };
            method?: string;
            params?: Record<string, unknown>;
          },
      );
  const answerTo = (id: unknown) => lines().find((line) => line.id === id);
  if (!options.noHandshake) {
    await send({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'claude-code', version: '1' } },
    });
    await send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    await settle();
  }
  if (!options.holdInitialize && !options.failFirstSpawn && !options.noHandshake) {
    // The first handshake ends with the tool cache's file write (and its list_changed): let that
    // I/O finish, so no test counts lines while it may still come.
    await eventually(() => cachedToolNames(join(dir, 'tools.json')) === toolNames);
    await settle();
  }
  /** Kills the child and lets the supervisor's delay (at most 5 s) pass. */
  const crash = async () => {
    const before = port.spawned.length;
    port.latest.exit(null, 'SIGKILL');
    await settle();
    clock.advance(5000);
    await eventually(() => port.spawned.length > before || exits.length > 0);
    await settle();
  };
  const rawLine = async (text: string) => {
    input.write(`${text}\n`);
    await settle();
  };
  /** Answers the `initialize` every held child is waiting for. */
  const releaseInitialize = async () => {
    for (const reply of heldInitialize.splice(0)) reply();
    await settle();
  };
  /** Calls a tool and returns its answer line. */
  const call = async (id: number | string, name: string, args: Record<string, unknown> = {}) => {
    await t.send({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } });
    await eventually(() => answerTo(id) !== undefined);
    return answerTo(id);
  };
  const supervisor = container.get(ChildSupervisor);
  const t = {
    port,
    clock,
    supervisor,
    /** The tool cache file's text now. */
    cacheFileText: () => readFileSync(join(dir, 'tools.json'), 'utf8'),
    /** Resolves once the tool cache on disk holds the child's list (the last step of a handshake). */
    toolsCached: () => eventually(() => cachedToolNames(join(dir, 'tools.json')) === toolNames),
    send,
    rawLine,
    lines,
    /** Everything written to the client so far, as written. */
    written: () => out,
    answerTo,
    received,
    crash,
    proxy,
    exits,
    logger,
    releaseInitialize,
    call,
  };
  return t;
}

type FakeRequest = { id: number; method: string; params?: Record<string, unknown> };

/** The rejoin outcome a reporting fake child states for the target it was handed. */
interface ReportedRejoin {
  outcome: 'rejoined' | 'pending' | 'failed';
  reason?: string;
}

/**
 * A child that sends session reports (`_meta['nteract/session']`) with every tool result:
 * `create_notebook` makes `/n/new.ipynb` its target (its text names another path, so a test can
 * tell the report from the text), `disconnect_notebook` clears it, and a child started with a
 * rejoin target reports `rejoin` as `rejoin()` says; while that is `failed`, calls fail as the
 * real child does.
 */
function reportingChild(rejoin: () => ReportedRejoin = () => ({ outcome: 'rejoined' })) {
  const targets = new Map<FakeChildProcess, string | null>();
  return (child: FakeChildProcess, request: FakeRequest) => {
    const handed = child.spec.env.NTERACT_MCP_REJOIN_NOTEBOOK;
    if (!targets.has(child)) targets.set(child, handed ?? null);
    const name = (request.params as { name?: string } | undefined)?.name;
    if (name === 'create_notebook') targets.set(child, '/n/new.ipynb');
    if (name === 'disconnect_notebook') targets.set(child, null);
    const state = handed === undefined ? undefined : rejoin();
    const failed = state?.outcome === 'failed' && name !== 'session_status';
    const text = failed
      ? `No active notebook session (${state?.reason ?? 'unknown'}).`
      : name === 'create_notebook'
        ? JSON.stringify({ notebook_id: 'nb-new', path: '/n/text-only.ipynb' })
        : name === 'session_status'
          ? JSON.stringify({ active: null })
          : 'ok';
    return {
      content: [{ type: 'text', text }],
      ...(failed ? { isError: true } : {}),
      _meta: {
        'nteract/session': {
          target: targets.get(child) ?? null,
          ...(state === undefined ? {} : { rejoin: { requested: handed, ...state } }),
        },
      },
    };
  };
}

/** The text items of a tool result, in order. */
const texts = (line: { result?: Record<string, unknown> } | undefined): string[] =>
  ((line?.result?.content ?? []) as { text: string }[]).map((item) => item.text);

describe(McpProxy, () => {
  it('answers initialize itself and replays it to every child before anything else; the upstream sees one handshake', async () => {
    const t = await setup(() => ({ content: [{ type: 'text', text: 'ok' }] }));
    expect(t.answerTo(1)?.result).toMatchObject({ serverInfo: { name: 'nteract', version: '9.9.9' } });
    await t.crash();
    expect(t.port.spawned).toHaveLength(2);
    for (const child of t.port.spawned) {
      const methods = (t.received.get(child) ?? []).map((message) => message.method);
      expect(methods.slice(0, 2)).toEqual(['initialize', 'notifications/initialized']);
      expect((t.received.get(child) ?? [])[0]?.params?.clientInfo).toEqual({ name: 'claude-code', version: '1' });
    }
    expect(t.lines().filter((line) => line.result?.serverInfo !== undefined)).toHaveLength(1);
  });

  it("passes an answer it changes nothing in on as the child's own bytes, only the id rewritten; logs one line per call without its arguments", async () => {
    // As the MCP SDK writes an answer: the id last.
    const childLine = (id: number) =>
      `{"result":{"content":[{"type":"text","text":"f\u00fcr \u2713 \\n"}],"_meta":{"z":1,"a":[2,1]}},"jsonrpc":"2.0","id":${id}}`;
    const t = await setup((child, request) => {
      if (request.method === 'tools/call') child.writeStdout(`${childLine(request.id)}\n`);
      return undefined;
    });
    await t.send({
      jsonrpc: '2.0',
      id: 'call-7',
      method: 'tools/call',
      params: { name: 'create_cell', arguments: { source: 'password = "hunter2"' } },
    });
    await eventually(() => t.answerTo('call-7') !== undefined);
    const sent = (t.received.get(t.port.latest) ?? []).find((message) => message.method === 'tools/call');
    const expected = childLine(sent?.id as number).replace(/"id":\d+\}$/, '"id":"call-7"}');
    expect(t.written().split('\n')).toContain(expected);
    const forwarded = t.logger.records.filter((record) => record.message === 'forwarded');
    expect(forwarded).toEqual([
      {
        level: 'debug',
        scope: undefined,
        message: 'forwarded',
        fields: { method: 'tools/call', tool: 'create_cell', id: 'call-7', ms: 0, outcome: 'ok' },
      },
    ]);
    expect(JSON.stringify(t.logger.records)).not.toContain('hunter2');
  });

  it("relays a child's request to the client under an id of its own, each time a new one, and the answer back under the child's id, once", async () => {
    const t = await setup(() => undefined);
    const child = t.port.latest;
    for (const id of [5, 5]) child.send({ jsonrpc: '2.0', id, method: 'roots/list', params: {} });
    await eventually(() => t.lines().filter((line) => line.method === 'roots/list').length === 2);
    const upstream = t.lines().filter((line) => line.method === 'roots/list');
    const [first, second] = upstream.map((line) => line.id as string);
    expect(first).toMatch(/^child-[0-9a-f]{32}:\d+$/);
    expect(second).not.toBe(first);
    await t.send({ jsonrpc: '2.0', id: first, result: { roots: [{ uri: 'file:///w' }] } });
    await t.send({ jsonrpc: '2.0', id: first, result: { roots: [] } });
    await eventually(() => (t.received.get(child) ?? []).some((message) => 'result' in message));
    const answers = (t.received.get(child) ?? []).filter((message) => 'result' in message);
    expect(answers).toEqual([{ jsonrpc: '2.0', id: 5, result: { roots: [{ uri: 'file:///w' }] } }]);
  });

  it('writes an answer anew when its id is not where the SDK puts it; relays one that is under an id of any JSON form', async () => {
    const t = await setup((child, request) => {
      const name = (request.params as { name?: string }).name;
      // The id first: the bytes cannot be relayed, the answer is serialized again.
      if (name === 'create_cell')
        child.writeStdout(`{"jsonrpc":"2.0","id":${request.id},"result":{"content":[{"type":"text","text":"a"}]}}\n`);
      else
        child.writeStdout(
          `{"result":{"content":[{"type":"text","text":"b"}],"isError":true},"jsonrpc":"2.0","id":${request.id}}\n`,
        );
      return undefined;
    });
    expect(await t.call(5, 'create_cell')).toEqual({
      jsonrpc: '2.0',
      id: 5,
      result: { content: [{ type: 'text', text: 'a' }] },
    });
    expect(await t.call(6, 'connect_notebook')).toEqual({
      jsonrpc: '2.0',
      id: 6,
      result: { content: [{ type: 'text', text: 'b' }], isError: true },
    });
    const upstreamId = 'quote " backslash \\ ✓';
    await t.send({
      jsonrpc: '2.0',
      id: upstreamId,
      method: 'tools/call',
      params: { name: 'connect_notebook', arguments: {} },
    });
    await eventually(() => t.answerTo(upstreamId) !== undefined);
    const sent = (t.received.get(t.port.latest) ?? []).filter((message) => message.method === 'tools/call').at(-1);
    expect(t.written().split('\n')).toContain(
      `{"result":{"content":[{"type":"text","text":"b"}],"isError":true},"jsonrpc":"2.0","id":${JSON.stringify(upstreamId)}}`,
    );
    expect(sent?.id).not.toBe(upstreamId);
    const outcomes = t.logger.records
      .filter((record) => record.message === 'forwarded')
      .map((record) => `${record.fields.id} ${record.fields.outcome}`);
    expect(outcomes).toEqual(['5 ok', '6 isError', `${upstreamId} isError`]);
  });

  it('stamps an idempotency key on tool calls and keeps one the client sent', async () => {
    const t = await setup(() => ({ content: [{ type: 'text', text: 'ok' }] }));
    await t.send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'create_cell', arguments: {} } });
    await t.send({
      jsonrpc: '2.0',
      id: 3,
      method: 'tools/call',
      params: { name: 'create_cell', arguments: {}, _meta: { [idempotencyMetaKey]: 'mine' } },
    });
    const calls = (t.received.get(t.port.latest) ?? []).filter((message) => message.method === 'tools/call');
    const keys = calls.map((call) => metaKey(call.params));
    expect(typeof keys[0]).toBe('string');
    expect(keys[1]).toBe('mine');
  });

  it('stamps no key on a call to a tool the known list declares read-only, and sends it again after a death', async () => {
    let hold = true;
    const t = await setup(() => (hold ? undefined : { content: [{ type: 'text', text: 'cells' }] }));
    await t.send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'get_all_cells', arguments: {} } });
    const first = (t.received.get(t.port.latest) ?? []).find((m) => m.method === 'tools/call');
    expect(first?.params).toEqual({ name: 'get_all_cells', arguments: {} });
    hold = false;
    await t.crash();
    const sentAgain = (t.received.get(t.port.latest) ?? []).find((m) => m.method === 'tools/call');
    expect(sentAgain?.params).toEqual({ name: 'get_all_cells', arguments: {} });
    expect((t.answerTo(2)?.result as { content: unknown[] } | undefined)?.content[0]).toEqual({
      type: 'text',
      text: 'cells',
    });
  });

  it('does not send again a call without a key to a tool that honours keys', async () => {
    const t = await setup(() => undefined);
    // A `_meta` that is not an object goes on as it came: no key in it.
    await t.send({
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/call',
      params: { name: 'create_cell', arguments: {}, _meta: 'not an object' },
    });
    await t.crash();
    expect(t.answerTo(2)?.error?.data).toMatchObject({ kind: 'outcome_unknown', tool: 'create_cell' });
    const resent = (t.received.get(t.port.latest) ?? []).filter((m) => m.method === 'tools/call');
    expect(resent).toEqual([]);
  });

  it('sends again, once and with the same key, a call to a tool that honours keys; answers outcome unknown for one that does not', async () => {
    let hold = true;
    const t = await setup((_child, request) =>
      hold
        ? undefined
        : { content: [{ type: 'text', text: `done ${String((request.params as { name: string }).name)}` }] },
    );
    await t.send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'create_cell', arguments: {} } });
    await t.send({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'create_notebook', arguments: {} } });
    await t.send({ jsonrpc: '2.0', id: 4, method: 'resources/read', params: { uri: 'nteract://notebook/x' } });
    const firstKey = metaKey((t.received.get(t.port.latest) ?? []).find((m) => m.method === 'tools/call')?.params);
    hold = false;
    await t.crash();
    expect(t.answerTo(2)?.result).toEqual({
      content: [
        { type: 'text', text: 'done create_cell' },
        { type: 'text', text: '[nteract] MCP server restarted\n' },
      ],
    });
    expect(t.answerTo(3)?.error).toMatchObject({ data: { kind: 'outcome_unknown', tool: 'create_notebook' } });
    expect(t.answerTo(3)?.error?.message).toContain("the tool 'create_notebook'");
    expect(t.answerTo(4)?.result).toBeDefined();
    const second = (t.received.get(t.port.latest) ?? []).filter((m) => m.method === 'tools/call');
    expect(second.map((m) => (m.params as { name: string }).name)).toEqual(['create_cell']);
    expect(metaKey(second[0]?.params)).toBe(firstKey);
  });

  it('sends a request again only once: a second crash makes it outcome unknown', async () => {
    const t = await setup(() => undefined);
    await t.send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'create_cell', arguments: {} } });
    await t.crash();
    expect(t.answerTo(2)).toBeUndefined();
    await t.crash();
    expect(t.answerTo(2)?.error?.data).toMatchObject({ kind: 'outcome_unknown' });
    expect(t.lines().filter((line) => line.id === 2)).toHaveLength(1);
  });

  it('holds a request that arrives while the child restarts and delivers it to the new child', async () => {
    const t = await setup(() => ({ content: [{ type: 'text', text: 'ok' }] }));
    await t.crash();
    // The second crash in a row waits 250 ms before the restart.
    t.port.latest.exit(1);
    await eventually(() => t.supervisor.status().restarting);
    await t.send({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'create_notebook', arguments: {} } });
    expect(t.answerTo(7)).toBeUndefined();
    t.clock.advance(250);
    await eventually(() => t.answerTo(7) !== undefined);
    expect(t.answerTo(7)?.result?.content).toEqual([
      { type: 'text', text: 'ok' },
      { type: 'text', text: '[nteract] MCP server restarted\n' },
    ]);
  });

  it('seeds the rejoin target the child reported, on restarts only', async () => {
    const t = await setup((_child, request) =>
      (request.params as { name?: string })?.name === 'connect_notebook'
        ? {
            // The text names another notebook: only the structured report is the child's word.
            content: [{ type: 'text', text: JSON.stringify({ path: '/n/text-says.ipynb' }) }],
            _meta: { 'nteract/session': { target: '/n/a.ipynb', notebookId: '0b9f2c44-5d1e-4a7b-9c3d-2e8f6a1b7c90' } },
          }
        : { content: [{ type: 'text', text: 'ok' }] },
    );
    expect(t.port.spawned[0]?.spec.env.NTERACT_MCP_REJOIN_NOTEBOOK).toBeUndefined();
    await t.send({
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/call',
      params: { name: 'connect_notebook', arguments: { path: 'a.ipynb' } },
    });
    await t.crash();
    expect(t.port.latest.spec.env.NTERACT_MCP_REJOIN_NOTEBOOK).toBe('/n/a.ipynb');
    expect(t.port.latest.spec.env.NTERACT_MCP_AGENT_SESSION).toBe(
      t.port.spawned[0]?.spec.env.NTERACT_MCP_AGENT_SESSION,
    );
  });

  it("hands every new child the tasks the client created, read from the children's answers, oldest first", async () => {
    let next = 0;
    const t = await setup((_child, request) => {
      if (request.params?.task === undefined) return { content: [{ type: 'text', text: 'ok' }] };
      next += 1;
      return { task: { taskId: `exec-${next}`, status: 'working', ttl: null, pollInterval: 1000 } };
    });
    const asTask = (id: number) =>
      t.send({
        jsonrpc: '2.0',
        id,
        method: 'tools/call',
        params: { name: 'create_cell', arguments: {}, task: { ttl: 60_000 } },
      });
    await asTask(2);
    await t.call(3, 'get_all_cells');
    await asTask(4);
    // The client gets the child's answer as it came.
    expect(t.answerTo(2)?.result).toEqual({
      task: { taskId: 'exec-1', status: 'working', ttl: null, pollInterval: 1000 },
    });
    expect(t.port.spawned[0]?.spec.env.NTERACT_MCP_KNOWN_TASKS).toBeUndefined();
    await t.crash();
    expect(JSON.parse(t.port.latest.spec.env.NTERACT_MCP_KNOWN_TASKS ?? '[]')).toEqual(['exec-1', 'exec-2']);
    await asTask(5);
    await t.crash();
    expect(JSON.parse(t.port.latest.spec.env.NTERACT_MCP_KNOWN_TASKS ?? '[]')).toEqual(['exec-1', 'exec-2', 'exec-3']);
  });

  it('answers malformed lines with -32700 and id null, and serves the cached tool list with reconnect', async () => {
    const t = await setup(() => ({ content: [] }));
    await t.rawLine('not json');
    await t.rawLine('"a string"');
    expect(t.lines().find((line) => line.error?.code === -32700)?.id).toBeNull();
    expect(t.lines().find((line) => line.error?.code === -32700)?.error?.data).toEqual({ kind: 'unreadable_line' });
    expect(t.lines().find((line) => line.error?.code === -32600)?.id).toBeNull();
    await t.send({ jsonrpc: '2.0', id: 5, method: 'tools/list' });
    const listed = ((t.answerTo(5)?.result?.tools ?? []) as { name: string }[]).map((tool) => tool.name);
    expect(listed).toEqual([
      'connect_notebook',
      'create_notebook',
      'create_cell',
      'get_all_cells',
      'session_status',
      'reconnect',
    ]);
  });

  it('tells the client list_changed only when the tool list really changed, and exits when an upgrade removed a tool', async () => {
    const t = await setup(() => undefined);
    const changes = () => t.lines().filter((line) => line.method === 'notifications/tools/list_changed').length;
    await eventually(() => changes() === 1);
    expect(changes()).toBe(1);
    await t.crash();
    // The new child has been asked for its list (and answered it, as the fake does at once).
    await eventually(() => (t.received.get(t.port.latest) ?? []).some((request) => request.method === 'tools/list'));
    await settle();
    expect(changes()).toBe(1);
    tools = allTools.filter((tool) => (tool as { name: string }).name !== 'create_cell');
    await t.send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'create_notebook', arguments: {} } });
    await t.crash();
    expect(t.answerTo(2)?.error?.message).toBe(
      'Tool list changed incompatibly after daemon upgrade. The MCP server will exit so your client can reconnect with the updated tools. You may need to reinstall the nteract extension.',
    );
    expect(t.exits).toEqual([]);
    t.clock.advance(200);
    // Closing waits for the tool cache's file writes: real I/O, so wait for the exit itself.
    await eventually(() => t.exits.length > 0);
    expect(t.exits).toEqual([0]);
  });

  it('hands the start notebook (--notebook) to the first child only; a restart hands what the session holds', async () => {
    const t = await setup(reportingChild(), { startNotebook: 'analysis/start.ipynb' });
    expect(t.port.latest.spec.env.NTERACT_MCP_REJOIN_NOTEBOOK).toBe('analysis/start.ipynb');
    // The child reports no notebook now (say the agent disconnected): a restart hands none.
    await t.send({
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/call',
      params: { name: 'disconnect_notebook', arguments: {} },
    });
    await eventually(() => t.answerTo(2) !== undefined);
    await t.crash();
    expect(t.port.latest.spec.env.NTERACT_MCP_REJOIN_NOTEBOOK).toBeUndefined();
  });

  it('serves a known tool list itself at once, while the child is up and while it is down, never asking the child', async () => {
    const t = await setup(() => undefined);
    const asked = () => (t.received.get(t.port.latest) ?? []).filter((m) => m.method === 'tools/list').length;
    const before = asked();
    const names = (id: string) =>
      ((t.answerTo(id)?.result?.tools ?? []) as { name: string }[]).map((tool) => tool.name);
    const expected = [...allTools.map((tool) => tool.name), 'reconnect'];
    await t.send({ jsonrpc: '2.0', id: 'up', method: 'tools/list' });
    expect(names('up')).toEqual(expected);
    expect(asked()).toBe(before);
    t.port.latest.exit(null, 'SIGKILL');
    await t.send({ jsonrpc: '2.0', id: 'down', method: 'tools/list' });
    expect(names('down')).toEqual(expected);
  });

  it('answers a request held for a child that never comes up within its bound, not at shutdown', async () => {
    // The child never finishes its handshake: nothing can be sent to it.
    const t = await setup(() => undefined, { holdInitialize: true });
    await t.send({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'create_notebook', arguments: {} } });
    t.clock.advance(59_999);
    await settle();
    expect(t.answerTo(7)).toBeUndefined();
    t.clock.advance(1);
    await settle();
    expect(t.answerTo(7)?.error?.message).toBe(
      'The nteract MCP server is not running (it did not come back in time). Call reconnect to try again.',
    );
    expect(t.exits).toEqual([]);
  });

  it('fails calls fast with a typed error once the breaker is open', async () => {
    const t = await setup(() => undefined);
    for (let crash = 0; crash < 6; crash++) {
      const spawned = t.port.spawned.length;
      t.port.latest.exit(1);
      await eventually(
        () =>
          t.port.spawned.length > spawned ||
          t.supervisor.status().restarting ||
          t.supervisor.status().breaker === 'open',
      );
      t.clock.advance(2500);
      await eventually(() => t.port.spawned.length > spawned || t.supervisor.status().breaker === 'open');
    }
    expect(t.supervisor.status().breaker).toBe('open');
    await t.send({ jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'create_notebook', arguments: {} } });
    expect(t.answerTo(9)?.error?.message).toMatch(/restart/i);
    // The typed error of decision 1: it names the last exit and when the next attempt happens.
    expect(t.answerTo(9)?.error).toMatchObject({
      code: -32000,
      data: { kind: 'breaker_open', last_exit: 'exit code 1', next_attempt_at: expect.any(String) },
    });
  });
  describe('restart handoff and banner', () => {
    it('hands the notebook to the child after the very first crash, with no daemon version ever known', async () => {
      const t = await setup(reportingChild(), { title: null });
      expect(t.port.spawned[0]?.spec.env.NTERACT_MCP_REJOIN_NOTEBOOK).toBeUndefined();
      await t.call(2, 'create_notebook');
      await t.crash();
      expect(t.port.spawned).toHaveLength(2);
      expect(t.port.latest.spec.env.NTERACT_MCP_REJOIN_NOTEBOOK).toBe('/n/new.ipynb');
    });

    it('hands the hosted tokens a child kept to every later child, on its credential channel only', async () => {
      const t = await setup(reportingChild(), { title: null });
      const first = t.port.latest;
      expect(first.spec.credentialChannel).toBe(true);
      expect(first.spec.env.NTERACT_MCP_CREDENTIAL_FD).toBe('3');
      await eventually(() => first.credentialLines().length === 1);
      expect(first.credentialLines()).toEqual([JSON.stringify({ kind: 'handed', credentials: [] })]);
      first.sendCredential({ kind: 'keep', scope: 'http://h:8888/', token: 's3cret' });
      first.sendCredential({ kind: 'keep', scope: 'http://h:8888/', token: 'n3wer' });
      await t.call(2, 'create_notebook');
      await t.crash();
      const second = t.port.latest;
      await eventually(() => second.credentialLines().length === 1);
      expect(JSON.parse(second.credentialLines()[0] as string)).toEqual({
        kind: 'handed',
        credentials: [{ scope: 'http://h:8888/', token: 'n3wer' }],
      });
      expect(JSON.stringify([second.spec, t.written(), t.cacheFileText(), t.logger.records])).not.toMatch(
        /s3cret|n3wer/,
      );
    });

    it('names both versions of a daemon upgrade although the first child started before its daemon', async () => {
      const children: FakeChildProcess[] = [];
      const t = await setup(
        (child) => {
          if (!children.includes(child)) children.push(child);
          const daemonVersion = children.indexOf(child) === 0 ? '1.0.0' : '2.0.0';
          return {
            content: [{ type: 'text', text: 'ok' }],
            _meta: { 'nteract/session': { target: null, daemonVersion } },
          };
        },
        // The first child answered initialize before any daemon ran: no version in its title.
        { title: (child) => (child === 0 ? null : 'nteract (daemon 2.0.0)') },
      );
      await t.call(2, 'create_cell');
      t.port.latest.exit(75);
      await eventually(() => t.port.spawned.length === 2);
      await settle();
      expect(texts(await t.call(3, 'create_cell')).at(-1)).toBe('[nteract] Daemon upgraded (1.0.0 → 2.0.0)\n');
    });

    it('learns the daemon version from the session reports alone, never from serverInfo.title', async () => {
      // Titles that name an upgrade, children whose reports name no version: nothing to say about the daemon.
      const t = await setup(
        () => ({ content: [{ type: 'text', text: 'ok' }], _meta: { 'nteract/session': { target: null } } }),
        {
          title: (child) => (child === 0 ? 'nteract (daemon 1.0.0)' : 'nteract (daemon 2.0.0)'),
        },
      );
      await t.call(2, 'create_cell');
      t.port.latest.exit(75);
      await eventually(() => t.port.spawned.length === 2);
      await settle();
      expect(texts(await t.call(3, 'create_cell')).at(-1)).toBe('[nteract] MCP server restarted\n');
    });

    it('hands nothing off for a child that sends no report, whatever its text says', async () => {
      const t = await setup(
        (_child, request) =>
          (request.params as { name?: string }).name === 'create_notebook'
            ? { content: [{ type: 'text', text: JSON.stringify({ notebook_id: 'nb-1', path: '/n/from-text.ipynb' }) }] }
            : { content: [{ type: 'text', text: 'ok' }] },
        { title: null },
      );
      await t.call(2, 'create_notebook');
      await t.crash();
      expect(t.port.latest.spec.env.NTERACT_MCP_REJOIN_NOTEBOOK).toBeUndefined();
      // Without a report the banner says nothing about the session.
      expect(texts(await t.call(3, 'create_cell')).at(-1)).toBe('[nteract] MCP server restarted\n');
    });

    it('takes the target from the report, clears it on a null target, and never reads it from text', async () => {
      let withReport = true;
      const reporting = reportingChild();
      const t = await setup((child, request) => {
        const answer = reporting(child, request);
        if (withReport) return answer;
        // The same child, one result without a report, whose text names a notebook.
        return { content: [{ type: 'text', text: JSON.stringify({ notebook_id: 'nb-x', path: '/n/text.ipynb' }) }] };
      });
      await t.call(2, 'create_notebook');
      await t.call(3, 'disconnect_notebook');
      withReport = false;
      await t.call(4, 'connect_notebook', { path: '/n/text.ipynb' });
      await t.crash();
      expect(t.port.latest.spec.env.NTERACT_MCP_REJOIN_NOTEBOOK).toBeUndefined();
      withReport = true;
      await t.call(5, 'create_notebook');
      await t.crash();
      expect(t.port.latest.spec.env.NTERACT_MCP_REJOIN_NOTEBOOK).toBe('/n/new.ipynb');
    });

    it.each([
      [
        { outcome: 'rejoined' } as ReportedRejoin,
        '[nteract] MCP server restarted, session reconnected to /n/new.ipynb\n',
      ],
      [
        { outcome: 'pending' } as ReportedRejoin,
        '[nteract] MCP server restarted; the session is not reconnected yet: rejoining /n/new.ipynb is still in progress. If this call needed the notebook, retry it in a moment (session_status shows the progress)\n',
      ],
      [
        { outcome: 'failed', reason: 'the notebook was deleted' } as ReportedRejoin,
        '[nteract] MCP server restarted; the session could not be reconnected to /n/new.ipynb: the notebook was deleted\n',
      ],
    ])('after a crash, banners the rejoin exactly as the answer itself reports it: %j', async (rejoin, banner) => {
      const t = await setup(
        reportingChild(() => rejoin),
        { title: null },
      );
      await t.call(2, 'create_notebook');
      await t.crash();
      const answer = await t.call(3, 'create_cell', { source: 'x' });
      expect(texts(answer)).toHaveLength(2);
      expect(texts(answer)[0]).not.toMatch(/^\[nteract\]/);
      expect(texts(answer)[1]).toBe(banner);
      expect(answer?.result?.isError === true).toBe(rejoin.outcome === 'failed');
      expect(texts(await t.call(4, 'create_cell'))).toHaveLength(1);
    });

    it('follows a pending rejoin up once it settles', async () => {
      let rejoin: ReportedRejoin = { outcome: 'pending' };
      const t = await setup(reportingChild(() => rejoin));
      await t.call(2, 'create_notebook');
      await t.crash();
      expect(texts(await t.call(3, 'create_cell')).at(-1)).toContain('still in progress');
      rejoin = { outcome: 'rejoined' };
      expect(texts(await t.call(4, 'create_cell'))).toEqual(['ok', '[nteract] Session reconnected to /n/new.ipynb\n']);
      expect(texts(await t.call(5, 'create_cell'))).toEqual(['ok']);
    });

    it('says only "MCP server restarted" when nothing was handed off, or when the new child sends no report', async () => {
      const t = await setup(reportingChild());
      await t.crash();
      expect(t.port.latest.spec.env.NTERACT_MCP_REJOIN_NOTEBOOK).toBeUndefined();
      expect(texts(await t.call(2, 'create_cell')).at(-1)).toBe('[nteract] MCP server restarted\n');

      const reporting = reportingChild();
      const u = await setup((child, request) =>
        child === u.port.spawned[0] ? reporting(child, request) : { content: [{ type: 'text', text: 'ok' }] },
      );
      await u.call(2, 'create_notebook');
      await u.crash();
      expect(u.port.latest.spec.env.NTERACT_MCP_REJOIN_NOTEBOOK).toBe('/n/new.ipynb');
      expect(texts(await u.call(3, 'create_cell'))).toEqual(['ok', '[nteract] MCP server restarted\n']);
    });

    it("passes a third-party child's results on unchanged in shape: the notice goes last, and only where it fits", async () => {
      // A child that is not the nteract server: no session reports, JSON in content[0], a
      // structuredContent-only tool, and a tool of its own that happens to be called session_status.
      const sum = { content: [{ type: 'text', text: '{"sum":3}' }], structuredContent: { sum: 3 } };
      const t = await setup(
        (_child, request) => {
          const name = (request.params as { name: string }).name;
          if (name === 'get_sum') return sum;
          if (name === 'structured_only') return { content: [], structuredContent: { sum: 3 } };
          if (name === 'session_status') return { content: [{ type: 'text', text: '{"mine":true}' }] };
          return undefined;
        },
        { title: null },
      );
      expect(t.answerTo(1)?.error).toBeUndefined();
      expect((await t.call(2, 'session_status'))?.result).toEqual({
        content: [{ type: 'text', text: '{"mine":true}' }],
      });
      await t.crash();
      // No content item to put the notice after: passed on as it is; the notice waits.
      expect((await t.call(3, 'structured_only'))?.result).toEqual({ content: [], structuredContent: { sum: 3 } });
      const next = (await t.call(4, 'get_sum'))?.result;
      expect(next?.content).toEqual([...sum.content, { type: 'text', text: '[nteract] MCP server restarted\n' }]);
      expect(next?.structuredContent).toEqual(sum.structuredContent);
      expect(JSON.parse(texts(t.answerTo(4))[0] ?? '')).toEqual({ sum: 3 });
      expect((await t.call(5, 'get_sum'))?.result).toEqual(sum);
      expect((await t.call(6, 'session_status'))?.result).toEqual({
        content: [{ type: 'text', text: '{"mine":true}' }],
      });
    });

    it('shows the last report and the handoff in the proxy section of session_status', async () => {
      const t = await setup(reportingChild());
      await t.call(2, 'create_notebook');
      await t.crash();
      const status = texts(await t.call(3, 'session_status'));
      expect(status.at(-1)).toContain('session reconnected to /n/new.ipynb');
      const json = JSON.parse(status.find((text) => text.startsWith('{')) ?? '{}') as { proxy?: unknown };
      expect(json.proxy).toMatchObject({
        restart_count: 1,
        child_pid: t.port.latest.pid,
        handoff_target: '/n/new.ipynb',
        handed_off_to_child: '/n/new.ipynb',
        last_report: {
          target: '/n/new.ipynb',
          rejoin: { requested: '/n/new.ipynb', outcome: 'rejoined', reason: null },
          child_pid: t.port.latest.pid,
        },
      });
    });
  });

  describe('reconnect', () => {
    it('waits for the new child to be ready, asks it for its report and answers with the same banner, once', async () => {
      const t = await setup(reportingChild(), { holdInitialize: true });
      await t.releaseInitialize();
      await t.call(2, 'create_notebook');
      await t.send({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'reconnect', arguments: {} } });
      await eventually(() => t.port.spawned.length === 2);
      await settle();
      expect(t.port.latest.spec.env.NTERACT_MCP_REJOIN_NOTEBOOK).toBe('/n/new.ipynb');
      expect(t.answerTo(3)).toBeUndefined();
      await t.releaseInitialize();
      await eventually(() => t.answerTo(3) !== undefined);
      expect(texts(t.answerTo(3))).toEqual([
        'MCP server restarted, session reconnected to /n/new.ipynb\n\nRestart #1 (was #0).',
      ]);
      const asked = (t.received.get(t.port.latest) ?? []).filter((message) => message.method === 'tools/call');
      expect(asked.map((message) => (message.params as { name: string }).name)).toEqual(['session_status']);
      expect(texts(await t.call(4, 'create_cell'))).toEqual(['ok']);
      expect(t.lines().filter((line) => line.id === 3)).toHaveLength(1);
    });

    it('reports a pending or failed rejoin as the new child states it', async () => {
      let rejoin: ReportedRejoin = { outcome: 'pending' };
      const t = await setup(reportingChild(() => rejoin));
      await t.call(2, 'create_notebook');
      expect(texts(await t.call(3, 'reconnect'))[0]).toMatch(
        /^MCP server restarted; the session is not reconnected yet: rejoining \/n\/new.ipynb is still in progress/,
      );
      rejoin = { outcome: 'failed', reason: 'gone' };
      expect(texts(await t.call(4, 'reconnect'))[0]).toBe(
        'MCP server restarted; the session could not be reconnected to /n/new.ipynb: gone\n\nRestart #2 (was #1).',
      );
    });

    it('says the new child is not ready when it does not finish its handshake in time', async () => {
      const t = await setup(reportingChild(), { holdInitialize: true });
      await t.releaseInitialize();
      await t.send({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'reconnect', arguments: {} } });
      await eventually(() => t.port.spawned.length === 2);
      t.clock.advance(30_000);
      await eventually(() => t.answerTo(3) !== undefined);
      expect(t.answerTo(3)?.result?.isError).toBe(true);
      expect(texts(t.answerTo(3))[0]).toContain('not ready');
    });
  });

  describe('reconnect before the first child is up, or while none can come up', () => {
    const reconnect = (id: number, meta?: Record<string, unknown>) => ({
      jsonrpc: '2.0',
      id,
      method: 'tools/call',
      params: { name: 'reconnect', arguments: {}, ...(meta ? { _meta: meta } : {}) },
    });

    it('while the first child never finishes its handshake: a tool error saying it is not ready, at the bound, once', async () => {
      const t = await setup(reportingChild(), { holdInitialize: true });
      await t.send(reconnect(3));
      await eventually(() => t.port.spawned.length === 2);
      expect(t.answerTo(3)).toBeUndefined();
      t.clock.advance(30_000);
      await eventually(() => t.answerTo(3) !== undefined);
      expect(t.answerTo(3)?.error).toBeUndefined();
      expect(t.answerTo(3)?.result?.isError).toBe(true);
      expect(texts(t.answerTo(3))[0]).toMatch(/^The MCP server was restarted but is not ready: .*Call reconnect again/);
      t.clock.advance(60_000);
      await settle();
      expect(t.lines().filter((line) => line.id === 3)).toHaveLength(1);
    });

    it('while no child can start (every spawn fails): a tool error with the cause and what to do, not a JSON-RPC error', async () => {
      const t = await setup(reportingChild(), { failFirstSpawn: true });
      t.port.failNextSpawn('spawn runt-mcp ENOENT');
      await t.send(reconnect(3));
      await eventually(() => t.answerTo(3) !== undefined);
      expect(t.answerTo(3)?.error).toBeUndefined();
      expect(t.answerTo(3)?.result?.isError).toBe(true);
      const [text] = texts(t.answerTo(3));
      expect(text).toMatch(/^Reconnect failed: the MCP server could not be started\. /);
      expect(text).toContain('spawn runt-mcp ENOENT');
      expect(text).toContain('Call reconnect again once the cause is fixed');
      expect(t.port.failedSpawns).toHaveLength(2);
      // The cause fixed, the next reconnect starts it.
      expect(texts(await t.call(4, 'reconnect'))).toEqual([
        'The MCP server is up and ready; it had not been running before, so there was no notebook session to reconnect. Use connect_notebook or create_notebook to start one.\n\nRestart #0 (was #0).',
      ]);
      expect(t.port.spawned).toHaveLength(1);
    });

    it('as the first request of the native era: starts the child and answers a tool result', async () => {
      const t = await setup(reportingChild(), { noHandshake: true });
      await t.send(reconnect(3, nativeEnvelope));
      await eventually(() => t.answerTo(3) !== undefined);
      expect(t.answerTo(3)?.result?.isError).toBeUndefined();
      expect(texts(t.answerTo(3))[0]).toMatch(/^MCP server restarted\n\nRestart #1 \(was #0\)\.$/);
      expect(t.port.latest.hasExited).toBe(false);
    });

    it('when the old child does not go away: a tool error at the bound; the restart goes on and the next reconnect joins it', async () => {
      const t = await setup(reportingChild());
      const stuck = t.port.latest;
      stuck.ignoreSignals = true;
      await t.send(reconnect(3));
      expect(t.answerTo(3)).toBeUndefined();
      t.clock.advance(30_000);
      await eventually(() => t.answerTo(3) !== undefined);
      expect(t.answerTo(3)?.result?.isError).toBe(true);
      expect(texts(t.answerTo(3))[0]).toMatch(
        /^Reconnect did not finish within 30 s: starting the MCP server is still under way .*call reconnect again in a moment/,
      );
      expect(stuck.signals).toEqual(['SIGTERM', 'SIGKILL']);
      await t.send(reconnect(4));
      stuck.exit(null, 'SIGKILL');
      await eventually(() => t.answerTo(4) !== undefined);
      expect(t.answerTo(4)?.result?.isError).toBeUndefined();
      expect(t.port.spawned).toHaveLength(2);
      expect(t.lines().filter((line) => line.id === 3)).toHaveLength(1);
    });
  });

  describe('every request gets its own answer', () => {
    it('refuses array params with -32602 (MCP params are objects) and drops such notifications', async () => {
      const t = await setup(() => ({ content: [{ type: 'text', text: 'ok' }] }));
      await t.send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: ['create_cell', {}] });
      expect(t.answerTo(2)?.error?.code).toBe(-32602);
      expect(t.answerTo(2)?.error?.message).toMatch(/must be a JSON object/);
      await t.send({ jsonrpc: '2.0', id: 3, method: 'resources/list', params: [] });
      expect(t.answerTo(3)?.error?.code).toBe(-32602);
      const method = `m${'x'.repeat(150_000)}`;
      await t.send({ jsonrpc: '2.0', id: 5, method, params: [] });
      expect(t.answerTo(5)?.error?.message).toBe(
        `Invalid params: MCP request params must be a JSON object (named parameters), not an array ("m${'x'.repeat(79)}…").`,
      );
      const before = t.lines().length;
      await t.send({ jsonrpc: '2.0', method: 'notifications/progress', params: [1] });
      expect(t.lines()).toHaveLength(before);
      const forwarded = (t.received.get(t.port.latest) ?? []).map((message) => message.method);
      expect(forwarded).not.toContain('tools/call');
      expect(forwarded).not.toContain('resources/list');
      expect(forwarded).not.toContain('notifications/progress');
    });

    it('tells ids 7 and "7" apart: each gets its own answer, and a cancel reaches only its own request', async () => {
      const calls: FakeRequest[] = [];
      const t = await setup((_child, request) => {
        calls.push(request);
        return undefined;
      });
      await t.send({
        jsonrpc: '2.0',
        id: 7,
        method: 'tools/call',
        params: { name: 'create_cell', arguments: { tag: 'number' } },
      });
      await t.send({
        jsonrpc: '2.0',
        id: '7',
        method: 'tools/call',
        params: { name: 'create_cell', arguments: { tag: 'string' } },
      });
      await t.send({
        jsonrpc: '2.0',
        id: 8,
        method: 'tools/call',
        params: { name: 'create_cell', arguments: { tag: 'cancelled' } },
      });
      await t.send({
        jsonrpc: '2.0',
        id: '8',
        method: 'tools/call',
        params: { name: 'create_cell', arguments: { tag: 'kept' } },
      });
      expect(calls).toHaveLength(4);
      await t.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 8 } });
      const cancels = (t.received.get(t.port.latest) ?? []).filter((m) => m.method === 'notifications/cancelled');
      expect(cancels.map((m) => m.params?.requestId)).toEqual([calls[2]?.id]);
      for (const call of [...calls].reverse()) {
        const tag = (call.params?.arguments as { tag?: string } | undefined)?.tag ?? '';
        t.port.latest.send({ jsonrpc: '2.0', id: call.id, result: { content: [{ type: 'text', text: tag }] } });
      }
      await eventually(() => t.answerTo('8') !== undefined);
      expect(texts(t.answerTo(7))).toEqual(['number']);
      expect(texts(t.answerTo('7'))).toEqual(['string']);
      expect(texts(t.answerTo('8'))).toEqual(['kept']);
      expect(t.answerTo(8)).toBeUndefined();
    });

    it('refuses a second request with an id still in progress, and still answers the first', async () => {
      const calls: FakeRequest[] = [];
      const t = await setup((_child, request) => {
        calls.push(request);
        return undefined;
      });
      await t.send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'create_cell', arguments: {} } });
      await t.send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'create_cell', arguments: {} } });
      expect(calls).toHaveLength(1);
      expect(t.answerTo(2)?.error).toMatchObject({ code: -32600 });
      expect(t.answerTo(2)?.error?.message).toContain('already used');
      t.port.latest.send({ jsonrpc: '2.0', id: calls[0]?.id, result: { content: [{ type: 'text', text: 'first' }] } });
      await eventually(() => t.lines().filter((line) => line.id === 2).length === 2);
      expect(
        t
          .lines()
          .filter((line) => line.id === 2)
          .map((line) => line.result !== undefined),
      ).toEqual([false, true]);
    });

    it('refuses tools/call without params or without a string name with -32602, forwarding nothing', async () => {
      const t = await setup(() => ({ content: [{ type: 'text', text: 'ok' }] }));
      await t.send({ jsonrpc: '2.0', id: 2, method: 'tools/call' });
      await t.send({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { arguments: {} } });
      await t.send({ jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 42 } });
      await t.send({ jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: '' } });
      expect(t.answerTo(2)?.error?.code).toBe(-32602);
      expect(t.answerTo(2)?.error?.message).toContain('params is missing');
      for (const id of [3, 4, 5]) {
        expect(t.answerTo(id)?.error?.code).toBe(-32602);
        expect(t.answerTo(id)?.error?.message).toContain('params.name');
      }
      expect((t.received.get(t.port.latest) ?? []).some((message) => message.method === 'tools/call')).toBe(false);
    });

    it('answers bad ids, a missing jsonrpc and a batch with -32600, and keeps serving', async () => {
      const t = await setup(() => ({ content: [{ type: 'text', text: 'ok' }] }));
      await t.rawLine('{"jsonrpc":"2.0","id":null,"method":"tools/list"}');
      await t.rawLine('{"jsonrpc":"2.0","id":{"a":1},"method":"tools/list"}');
      await t.rawLine('{"jsonrpc":"2.0","id":true,"method":"tools/list"}');
      await t.rawLine('{"id":11,"method":"tools/list"}');
      await t.rawLine('{"jsonrpc":"1.0","id":12,"method":"tools/list"}');
      await t.rawLine('[{"jsonrpc":"2.0","id":13,"method":"tools/list"}]');
      const errors = t.lines().filter((line) => line.error?.code === -32600);
      expect(errors.map((line) => line.id)).toEqual([null, null, null, 11, 12, null]);
      expect(errors.at(-1)?.error?.message).toContain('batch');
      expect(texts(await t.call(14, 'create_cell'))).toEqual(['ok']);
    });

    it('ignores an upstream response to an unknown id, with a debug log', async () => {
      const t = await setup(() => ({ content: [{ type: 'text', text: 'ok' }] }));
      const before = t.lines().length;
      await t.send({ jsonrpc: '2.0', id: 'nobody-asked', result: {} });
      await t.send({ jsonrpc: '2.0', id: null, error: { code: -1, message: 'x' } });
      expect(t.lines()).toHaveLength(before);
      expect(t.logger.find('ignoring an upstream response', 'debug')).toHaveLength(2);
      expect(texts(await t.call(2, 'create_cell'))).toEqual(['ok']);
    });
  });

  describe('cold start tools/list', () => {
    const names = (line: { result?: Record<string, unknown> } | undefined) =>
      ((line?.result?.tools ?? []) as { name: string }[]).map((tool) => tool.name);

    it('with no tool list known, waits for the child and answers with its full list', async () => {
      const t = await setup(() => undefined, { holdInitialize: true });
      await t.send({ jsonrpc: '2.0', id: 5, method: 'tools/list' });
      expect(t.answerTo(5)).toBeUndefined();
      await t.releaseInitialize();
      await eventually(() => t.answerTo(5) !== undefined);
      expect(names(t.answerTo(5))).toEqual([
        'connect_notebook',
        'create_notebook',
        'create_cell',
        'get_all_cells',
        'session_status',
        'reconnect',
      ]);
    });

    it('falls back to what it knows (reconnect alone) when the child does not list in time; the bound is configurable', async () => {
      const t = await setup(() => undefined, { holdInitialize: true, toolListWaitMs: 2000 });
      await t.send({ jsonrpc: '2.0', id: 5, method: 'tools/list' });
      t.clock.advance(1999);
      await settle();
      expect(t.answerTo(5)).toBeUndefined();
      t.clock.advance(1);
      await settle();
      expect(names(t.answerTo(5))).toEqual(['reconnect']);
      expect(t.logger.find('did not list its tools in time', 'warn')).toHaveLength(1);
      await t.releaseInitialize();
      // The child's list arrives later (it lands in the cache); it must not answer 5 a second time.
      await t.toolsCached();
      expect(t.lines().filter((line) => line.id === 5)).toHaveLength(1);
    });

    it('answers with the known list at once, not an error, when the child cannot start at all', async () => {
      const t = await setup(() => undefined, { failFirstSpawn: true });
      expect(t.port.spawned).toHaveLength(0);
      await t.send({ jsonrpc: '2.0', id: 5, method: 'tools/list' });
      expect(names(t.answerTo(5))).toEqual(['reconnect']);
      await t.send({ jsonrpc: '2.0', id: 6, method: 'tools/call', params: { name: 'create_cell', arguments: {} } });
      expect(t.answerTo(6)?.error?.code).toBe(-32000);
    });

    it('between initialize and notifications/initialized, starts the child for it and answers with its list, never waiting for the fallback', async () => {
      const t = await setup(() => undefined, { noHandshake: true });
      await t.send(initializeRequest);
      // A ping is answered by the proxy itself: it starts nothing.
      await t.send({ jsonrpc: '2.0', id: 'p', method: 'ping' });
      expect(t.answerTo('p')?.result).toEqual({});
      expect(t.port.spawned).toHaveLength(0);
      await t.send({ jsonrpc: '2.0', id: 5, method: 'tools/list' });
      expect(t.port.spawned).toHaveLength(1);
      await eventually(() => t.answerTo(5) !== undefined);
      expect(t.clock.now()).toBe(0);
      expect(names(t.answerTo(5))).toEqual([
        'connect_notebook',
        'create_notebook',
        'create_cell',
        'get_all_cells',
        'session_status',
        'reconnect',
      ]);
      // The client's own notifications/initialized then starts nothing more and reaches no child again.
      await t.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
      expect(t.port.spawned).toHaveLength(1);
      const methods = (t.received.get(t.port.latest) ?? []).map((message) => message.method);
      expect(methods.filter((method) => method === 'notifications/initialized')).toHaveLength(1);
      expect(methods.slice(0, 2)).toEqual(['initialize', 'notifications/initialized']);
      expect(t.logger.find('did not list its tools in time', 'warn')).toHaveLength(0);
    });

    it('with a cached list, answers at once from the cache while the child starts', async () => {
      const t = await setup(() => undefined, { holdInitialize: true, cachedTools: [allTools[0] as object] });
      await t.send({ jsonrpc: '2.0', id: 5, method: 'tools/list' });
      expect(names(t.answerTo(5))).toEqual(['connect_notebook', 'reconnect']);
    });
  });
});

describe('McpProxy and error messages', () => {
  it("sends a child's error with its plain message: the MCP SDK's `MCP error <code>: ` taken off, code and data kept", async () => {
    const t = await setup((child, request) => {
      const message = 'MCP error -32602: MCP error -32602: Task not found: t-1';
      child.send({ jsonrpc: '2.0', id: request.id, error: { code: -32602, message, data: { taskId: 't-1' } } });
      return undefined;
    });
    await t.send({ jsonrpc: '2.0', id: 2, method: 'tasks/get', params: { taskId: 't-1' } });
    await eventually(() => t.answerTo(2) !== undefined);
    expect(t.answerTo(2)?.error).toEqual({ code: -32602, message: 'Task not found: t-1', data: { taskId: 't-1' } });
  });
});

describe('McpProxy with answers too large to carry', () => {
  it('answers a call whose reply is over the child line cap, or over the client limit, with an error to its id', async () => {
    const t = await setup((child, request) => {
      const name = (request.params as { name: string }).name;
      const text = (bytes: number) => ({ content: [{ type: 'text', text: 'x'.repeat(bytes) }] });
      // The MCP SDK writes the id last: {"result":…,"jsonrpc":"2.0","id":N}.
      if (name === 'create_notebook') {
        child.writeStdout(`${JSON.stringify({ result: text(17 * 1024 * 1024), jsonrpc: '2.0', id: request.id })}\n`);
        return undefined;
      }
      if (name === 'create_cell') return text(11 * 1024 * 1024);
      return text(10);
    });
    await t.send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'create_notebook', arguments: {} } });
    await eventually(() => t.answerTo(2) !== undefined);
    expect(t.answerTo(2)?.error?.code).toBe(-32000);
    expect(t.answerTo(2)?.error?.message).toBe(
      "The answer was too large to deliver: runt-mcp wrote a message over the proxy's 16777216-byte (16 MiB) limit, so it was dropped. Ask for less at once: a window of cells (get_all_cells with start/count), one cell (get_cell), or outputs in pages (get_cell or get_results with offset and length).",
    );
    await t.send({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'create_cell', arguments: {} } });
    await eventually(() => t.answerTo(3) !== undefined);
    expect(t.answerTo(3)?.error?.code).toBe(-32000);
    expect(t.answerTo(3)?.error?.message).toMatch(
      /^The answer was too large to deliver: it is \d+ bytes \(11 MiB\), over the 10223616-byte \(9\.75 MiB\) limit of one message to the MCP client, so it was dropped\./,
    );
    await t.send({ jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'connect_notebook', arguments: {} } });
    await eventually(() => t.answerTo(4) !== undefined);
    expect(t.answerTo(4)?.result?.content).toEqual([{ type: 'text', text: 'x'.repeat(10) }]);
    expect(t.lines().filter((line) => line.id === 2 || line.id === 3)).toHaveLength(2);
  });
});

const nativeEnvelope = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name: 'v2-client', version: '2.4.0' },
};
const initializeRequest = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'claude-code', version: '1' } },
};

describe('McpProxy and the contributed protocol eras', () => {
  it('without the legacy plugin, answers a plain initialize -32022 naming the native versions, and starts no child', async () => {
    const t = await setup(() => undefined, { eras: [createNativeTransportPlugin()], noHandshake: true });
    await t.send(initializeRequest);
    expect(t.answerTo(1)?.error).toEqual({
      code: -32022,
      message: expect.stringContaining('per-request negotiation only'),
      data: { supported: ['2026-07-28'], requested: '2025-06-18' },
    });
    await t.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    await t.send({ jsonrpc: '2.0', id: 2, method: 'tools/list' });
    expect(t.answerTo(2)?.error?.code).toBe(-32602);
    expect(t.port.spawned).toHaveLength(0);
  });

  it('with no era at all, initialize is a method nobody serves (-32601)', async () => {
    const t = await setup(() => undefined, { eras: [], noHandshake: true });
    await t.send(initializeRequest);
    expect(t.answerTo(1)?.error?.code).toBe(-32601);
    expect(t.port.spawned).toHaveLength(0);
  });

  it('with the legacy plugin alone, handshakes as before and refuses a modern envelope in place (-32600)', async () => {
    const t = await setup(() => ({ content: [{ type: 'text', text: 'ok' }] }), {
      eras: [createLegacyTransportPlugin()],
    });
    expect(t.answerTo(1)?.result).toMatchObject({
      protocolVersion: '2025-06-18',
      serverInfo: { name: 'nteract', version: '9.9.9' },
      capabilities: { tools: { listChanged: true } },
    });
    expect(t.port.spawned).toHaveLength(1);
    await t.send({
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/call',
      params: { name: 'connect_notebook', arguments: {}, _meta: nativeEnvelope },
    });
    expect(t.answerTo(2)?.error?.code).toBe(-32600);
    await t.send(initializeRequest);
    expect(t.lines().filter((line) => line.id === 1)).toHaveLength(2);
    expect(t.lines().filter((line) => line.id === 1)[1]?.error?.message).toBe('Already initialized.');
  });

  it('opens a native connection on the first enveloped request: no handshake to the child, envelopes on its own requests, shaped results', async () => {
    const t = await setup(() => ({ content: [{ type: 'text', text: 'ok' }] }), { noHandshake: true });
    await t.send({ jsonrpc: '2.0', id: 'd', method: 'server/discover', params: { _meta: nativeEnvelope } });
    expect(t.answerTo('d')?.result).toMatchObject({
      supportedVersions: ['2026-07-28'],
      resultType: 'complete',
      _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'nteract', version: '9.9.9' } },
    });
    expect(t.port.spawned).toHaveLength(0);
    await t.send({
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/call',
      params: { name: 'connect_notebook', arguments: {}, _meta: nativeEnvelope },
    });
    await eventually(() => t.answerTo(2) !== undefined);
    expect(t.answerTo(2)?.result).toEqual({
      content: [{ type: 'text', text: 'ok' }],
      resultType: 'complete',
      _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'runt', version: '1', title: 'nteract (daemon 1.0.0)' } },
    });
    const seen = t.received.get(t.port.latest) ?? [];
    // The proxy's own stream on the child comes first, so the child's list changes reach the client's streams.
    // The proxy's own requests come first: how the child describes itself, and a stream so the
    // child's list changes reach the client's streams.
    expect(seen.map((message) => message.method)).toEqual([
      'server/discover',
      'subscriptions/listen',
      'tools/list',
      'tools/call',
    ]);
    expect(seen[0]?.params).toEqual({ _meta: nativeEnvelope });
    expect(seen[1]?.params).toEqual({
      notifications: { toolsListChanged: true, promptsListChanged: true, resourcesListChanged: true },
      _meta: nativeEnvelope,
    });
    // Its own tools/list asks for the list of a client that declared no extension (what it caches).
    expect(seen[2]?.params?._meta).toEqual({ ...nativeEnvelope, 'nteract/plainToolList': true });
    expect(seen[3]?.params?._meta).toMatchObject({ 'io.modelcontextprotocol/protocolVersion': '2026-07-28' });
    // Learned in the native era too: the client is now shown the child's own description.
    await t.send({ jsonrpc: '2.0', id: 'd2', method: 'server/discover', params: { _meta: nativeEnvelope } });
    expect(t.answerTo('d2')?.result).toMatchObject({
      capabilities: { ...childCapabilities, tools: { listChanged: true } },
      instructions: discoveredInstructions,
      _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'runt', version: '1', title: 'nteract (daemon 1.0.0)' } },
    });
    // The children are attributed to the client the envelope names.
    expect(t.port.latest.spec.env.NTERACT_MCP_PEER_LABEL).toMatch(/^v2-client agent:v2-client:/);
    await t.send({ jsonrpc: '2.0', id: 3, method: 'initialize', params: initializeRequest.params });
    expect(t.answerTo(3)?.error?.code).toBe(-32022);
    await t.crash();
    expect(t.port.spawned).toHaveLength(2);
    expect((t.received.get(t.port.latest) ?? []).map((message) => message.method)).not.toContain('initialize');
  });

  it('holds native subscriptions/listen streams itself: acknowledged and tagged, fed by the child, closed by cancel, ended on shutdown', async () => {
    const t = await setup(() => undefined, { noHandshake: true });
    const listen = (id: string, notifications: object) =>
      t.send({ jsonrpc: '2.0', id, method: 'subscriptions/listen', params: { notifications, _meta: nativeEnvelope } });
    // The listen request opens the connection; the proxy answers it with the acknowledgement, never a result.
    await listen('tools', { toolsListChanged: true });
    const tag = (id: string) => ({ 'io.modelcontextprotocol/subscriptionId': id });
    const ack = t.lines().find((line) => line.method === 'notifications/subscriptions/acknowledged');
    expect(ack?.params).toEqual({ notifications: { toolsListChanged: true }, _meta: tag('tools') });
    expect(t.answerTo('tools')).toBeUndefined();
    // prompts.listChanged is not announced by the server: not honoured.
    await listen('resources', { resourcesListChanged: true, promptsListChanged: true });
    expect(t.lines().filter((line) => line.method === 'notifications/subscriptions/acknowledged')[1]?.params).toEqual({
      notifications: { resourcesListChanged: true },
      _meta: tag('resources'),
    });
    await eventually(() => t.port.spawned.length === 1 && (t.received.get(t.port.latest) ?? []).length >= 2);
    // The first child's tools are new to the proxy: it announces them, on the stream that asked only.
    await eventually(() => t.lines().some((line) => line.method === 'notifications/tools/list_changed'));
    const child = t.port.latest;
    const childStream = (t.received.get(child) ?? []).find((message) => message.method === 'subscriptions/listen');
    expect(childStream?.id).toBeTypeOf('number');
    // A change the child reports on the proxy's stream reaches only the client stream that asked, under its id.
    child.send({
      jsonrpc: '2.0',
      method: 'notifications/resources/list_changed',
      params: { _meta: { 'io.modelcontextprotocol/subscriptionId': childStream?.id } },
    });
    // The child's acknowledgement of the proxy's own stream is not the client's business.
    child.send({
      jsonrpc: '2.0',
      method: 'notifications/subscriptions/acknowledged',
      params: { notifications: {}, _meta: { 'io.modelcontextprotocol/subscriptionId': childStream?.id } },
    });
    // No request asked for a log level: a log message is not sent.
    child.send({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'error', data: 'x' } });
    await eventually(() => t.lines().some((line) => line.method === 'notifications/resources/list_changed'));
    await settle();
    const delivered = t.lines().filter((line) => line.method?.endsWith('/list_changed') ?? false);
    expect(t.lines().filter((line) => line.method === 'notifications/subscriptions/acknowledged')).toHaveLength(2);
    expect(t.lines().filter((line) => line.method === 'notifications/message')).toEqual([]);
    expect(delivered.map((line) => [line.method, (line.params as { _meta?: unknown } | undefined)?._meta])).toEqual([
      ['notifications/tools/list_changed', tag('tools')],
      ['notifications/resources/list_changed', tag('resources')],
    ]);
    // A second stream under an id in use is refused; so is a listen without a filter.
    await listen('tools', { toolsListChanged: true });
    expect(t.answerTo('tools')?.error?.code).toBe(-32600);
    await t.send({ jsonrpc: '2.0', id: 'bare', method: 'subscriptions/listen', params: { _meta: nativeEnvelope } });
    expect(t.answerTo('bare')?.error?.code).toBe(-32602);
    // Cancelled: nothing more on that stream, and its id is free again.
    await t.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'resources' } });
    child.send({ jsonrpc: '2.0', method: 'notifications/resources/list_changed' });
    await settle();
    expect(t.lines().filter((line) => line.method === 'notifications/resources/list_changed')).toHaveLength(1);
    // On shutdown the open stream gets its listen result.
    await t.proxy.close(0);
    const ending = t.lines().find((line) => line.id === 'tools' && line.result !== undefined);
    expect(ending?.result).toMatchObject({ _meta: tag('tools'), resultType: 'complete' });
  });

  it("presents to each era the child's own capabilities, serverInfo and instructions as the child described itself to that era, kept in the cache file for the next start", async () => {
    const first = await setup(() => ({ content: [{ type: 'text', text: 'ok' }] }));
    // Nothing known on the first start: the built-in description, tools.listChanged advertised.
    expect(first.answerTo(1)?.result).toMatchObject({
      serverInfo: { name: 'nteract', version: '9.9.9' },
      capabilities: { tools: { listChanged: true } },
    });
    type Stored = { tools: { name: string }[]; servers?: Record<string, unknown> };
    const stored = (t: { cacheFileText: () => string }) => JSON.parse(t.cacheFileText()) as Stored;
    await eventually(() => stored(first).servers?.legacy !== undefined);
    expect(stored(first).tools.map((tool) => tool.name)).toEqual(allTools.map((tool) => tool.name));
    const described = { name: 'runt', version: '1', title: 'nteract (daemon 1.0.0)', capabilities: childCapabilities };
    expect(stored(first).servers).toEqual({ legacy: { ...described, instructions: childInstructions } });
    // A later start answers from the cache file at once, before any child is up; a client of the
    // era no child described itself to yet gets the built-in description.
    const second = await setup(() => undefined, { cacheFile: first.cacheFileText(), noHandshake: true });
    const advertised = { ...childCapabilities, tools: { listChanged: true } };
    await second.send({ jsonrpc: '2.0', id: 'd', method: 'server/discover', params: { _meta: nativeEnvelope } });
    expect(second.answerTo('d')?.result).toMatchObject({
      instructions: proxyInstructions,
      _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'nteract', version: '9.9.9' } },
    });
    await second.send(initializeRequest);
    expect(second.answerTo(1)?.result).toEqual({
      protocolVersion: '2025-06-18',
      capabilities: advertised,
      serverInfo: { name: 'runt', version: '1', title: 'nteract (daemon 1.0.0)' },
      instructions: childInstructions,
    });
    expect(second.port.spawned).toHaveLength(0);

    // A native client's child describes itself to that era (its server/discover answer): kept beside the other.
    const third = await setup(() => undefined, { cacheFile: first.cacheFileText(), noHandshake: true });
    await third.send({ jsonrpc: '2.0', id: 'l', method: 'tools/list', params: { _meta: nativeEnvelope } });
    await eventually(() => stored(third).servers?.native !== undefined);
    expect(stored(third).servers).toEqual({
      legacy: { ...described, instructions: childInstructions },
      native: { ...described, instructions: discoveredInstructions },
    });
    const fourth = await setup(() => undefined, { cacheFile: third.cacheFileText(), noHandshake: true });
    await fourth.send({ jsonrpc: '2.0', id: 'd', method: 'server/discover', params: { _meta: nativeEnvelope } });
    expect(fourth.answerTo('d')?.result).toMatchObject({
      capabilities: advertised,
      instructions: discoveredInstructions,
      _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'runt', version: '1', title: 'nteract (daemon 1.0.0)' } },
    });
    await fourth.send(initializeRequest);
    expect(fourth.answerTo(1)?.result).toMatchObject({ instructions: childInstructions });
  });

  it('still loads an old-format cache file (a bare tool list): the built-in description, the cached tools at once', async () => {
    const t = await setup(() => undefined, { cachedTools: [allTools[0]], noHandshake: true });
    await t.send(initializeRequest);
    expect(t.answerTo(1)?.result).toMatchObject({
      serverInfo: { name: 'nteract', version: '9.9.9' },
      capabilities: { tools: { listChanged: true } },
    });
    await t.send({ jsonrpc: '2.0', id: 2, method: 'tools/list' });
    expect(((t.answerTo(2)?.result?.tools ?? []) as { name: string }[]).map((tool) => tool.name)).toEqual([
      'connect_notebook',
      'reconnect',
    ]);
  });
});

describe("McpProxy and the client's resource subscriptions across child restarts", () => {
  const notebook = 'nteract://notebook/0b1e5a9c-2f4d-4c41-9e57-7d3f0a6b8c21';
  const cell = `${notebook}/cells/c1`;
  const other = `${notebook}/cells/c2`;
  const restored = { [restoredSubscriptionMetaKey]: true };
  /** A child that accepts every subscription but to `refused`, and leaves other requests unanswered. */
  const subscribing =
    (refused?: string) =>
    (child: FakeChildProcess, request: { id: number; method: string; params?: Record<string, unknown> }) => {
      if (request.method !== 'resources/subscribe' && request.method !== 'resources/unsubscribe') return undefined;
      if (request.params?.uri !== refused) return {};
      child.send({ jsonrpc: '2.0', id: request.id, error: { code: -32602, message: `Unknown resource: ${refused}` } });
      return undefined;
    };
  const subscriptionsSeenBy = (t: Awaited<ReturnType<typeof setup>>, child: FakeChildProcess) =>
    (t.received.get(child) ?? [])
      .filter((message) => message.method?.startsWith('resources/') === true)
      .map((message) => [message.method, message.params]);

  it('legacy: gives every new child the subscriptions a child accepted, restored, before the requests waiting for it', async () => {
    const t = await setup(subscribing('nteract://notebook/nope'));
    const ask = async (id: string, method: string, uri: string) => {
      await t.send({ jsonrpc: '2.0', id, method, params: { uri } });
      await eventually(() => t.answerTo(id) !== undefined);
      return t.answerTo(id);
    };
    expect((await ask('s1', 'resources/subscribe', cell))?.result).toEqual({});
    expect((await ask('s2', 'resources/subscribe', notebook))?.result).toEqual({});
    expect((await ask('s3', 'resources/subscribe', other))?.result).toEqual({});
    expect((await ask('s4', 'resources/subscribe', 'nteract://notebook/nope'))?.error?.code).toBe(-32602);
    expect((await ask('u1', 'resources/unsubscribe', other))?.result).toEqual({});
    // The child's notice reaches the client as it is.
    t.port.latest.send({ jsonrpc: '2.0', method: 'notifications/resources/updated', params: { uri: cell } });
    await eventually(() => t.lines().some((line) => line.method === 'notifications/resources/updated'));

    await t.crash();
    const second = t.port.latest;
    await eventually(() => subscriptionsSeenBy(t, second).length === 2);
    // What was accepted and not undone, nothing refused; marked restored.
    expect(subscriptionsSeenBy(t, second)).toEqual([
      ['resources/subscribe', { uri: notebook, _meta: restored }],
      ['resources/subscribe', { uri: cell, _meta: restored }],
    ]);
    const methods = (t.received.get(second) ?? []).map((message) => message.method);
    expect(methods.indexOf('resources/subscribe')).toBeGreaterThan(methods.indexOf('notifications/initialized'));

    // While no child runs, the client unsubscribes: the next child gets the subscription, then the unsubscribe.
    second.exit(null, 'SIGKILL');
    await settle();
    await t.send({ jsonrpc: '2.0', id: 'u2', method: 'resources/unsubscribe', params: { uri: cell } });
    t.clock.advance(5000);
    await eventually(() => t.port.spawned.length === 3);
    const third = t.port.latest;
    await eventually(() => t.answerTo('u2') !== undefined);
    expect(t.answerTo('u2')?.result).toEqual({});
    expect(subscriptionsSeenBy(t, third)).toEqual([
      ['resources/subscribe', { uri: notebook, _meta: restored }],
      ['resources/subscribe', { uri: cell, _meta: restored }],
      ['resources/unsubscribe', { uri: cell }],
    ]);
    await t.crash();
    await eventually(() => subscriptionsSeenBy(t, t.port.latest).length === 1);
    expect(subscriptionsSeenBy(t, t.port.latest)).toEqual([
      ['resources/subscribe', { uri: notebook, _meta: restored }],
    ]);
  });

  it('legacy: a subscribe the child died with unanswered is sent again to the next child, not answered "outcome unknown"', async () => {
    let answering = false;
    const t = await setup((child, request) => (answering ? subscribing()(child, request) : undefined));
    await t.send({ jsonrpc: '2.0', id: 's1', method: 'resources/subscribe', params: { uri: cell } });
    await eventually(() => subscriptionsSeenBy(t, t.port.latest).length === 1);
    answering = true;
    await t.crash();
    await eventually(() => t.answerTo('s1') !== undefined);
    expect(t.answerTo('s1')?.result).toEqual({});
    expect(subscriptionsSeenBy(t, t.port.latest)).toEqual([['resources/subscribe', { uri: cell }]]);
  });

  it("native: the resources the client's streams watch go to the child on one stream of the proxy's own, follow listens and cancels, and come back restored after a restart", async () => {
    const t = await setup(() => undefined, { noHandshake: true });
    const tag = (id: unknown) => ({ 'io.modelcontextprotocol/subscriptionId': id });
    const listen = (id: string, resourceSubscriptions: string[]) =>
      t.send({
        jsonrpc: '2.0',
        id,
        method: 'subscriptions/listen',
        params: { notifications: { resourceSubscriptions }, _meta: nativeEnvelope },
      });
    /** The proxy's streams on `child` naming resources, and its cancellations there. */
    const resourceStreams = (child: FakeChildProcess) =>
      (t.received.get(child) ?? []).filter(
        (message) =>
          (message.method === 'subscriptions/listen' &&
            (message.params?.notifications as { resourceSubscriptions?: unknown })?.resourceSubscriptions) ||
          message.method === 'notifications/cancelled',
      );
    await listen('w1', [cell]);
    expect(t.lines().find((line) => line.method === 'notifications/subscriptions/acknowledged')?.params).toEqual({
      notifications: { resourceSubscriptions: [cell] },
      _meta: tag('w1'),
    });
    await eventually(() => t.port.spawned.length === 1 && resourceStreams(t.port.latest).length === 1);
    const first = t.port.latest;
    const [stream] = resourceStreams(first);
    // The stream was acknowledged before this child watched anything: restored (told once by the child).
    expect(stream?.params).toEqual({
      notifications: { resourceSubscriptions: [cell] },
      _meta: { ...nativeEnvelope, ...restored },
    });
    // A notice on the proxy's stream reaches the client's stream that named the resource, under its id.
    first.send({
      jsonrpc: '2.0',
      method: 'notifications/resources/updated',
      params: { uri: cell, _meta: tag(stream?.id) },
    });
    await eventually(() => t.lines().some((line) => line.method === 'notifications/resources/updated'));
    expect(t.lines().find((line) => line.method === 'notifications/resources/updated')?.params).toEqual({
      uri: cell,
      _meta: tag('w1'),
    });

    // Another stream: the live child gets a stream naming both (not restored: it watched all along),
    // then the one it replaces is cancelled.
    await listen('w2', [notebook]);
    await eventually(() => resourceStreams(first).length === 3);
    const [, both, cancelled] = resourceStreams(first);
    expect(both?.params).toEqual({
      notifications: { resourceSubscriptions: [notebook, cell].sort() },
      _meta: nativeEnvelope,
    });
    expect(cancelled).toMatchObject({ method: 'notifications/cancelled', params: { requestId: stream?.id } });
    await t.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'w1' } });
    await eventually(() => resourceStreams(first).length === 5);
    expect(resourceStreams(first).slice(3)).toEqual([
      expect.objectContaining({
        params: { notifications: { resourceSubscriptions: [notebook] }, _meta: nativeEnvelope },
      }),
      expect.objectContaining({
        method: 'notifications/cancelled',
        params: expect.objectContaining({ requestId: both?.id }),
      }),
    ]);

    // An upgrade handoff (exit 75): the next child gets what the client's streams watch, restored.
    first.exit(75);
    await settle();
    await eventually(() => t.port.spawned.length === 2 && resourceStreams(t.port.latest).length === 1);
    expect(resourceStreams(t.port.latest)[0]?.params).toEqual({
      notifications: { resourceSubscriptions: [notebook] },
      _meta: { ...nativeEnvelope, ...restored },
    });
  });
});
