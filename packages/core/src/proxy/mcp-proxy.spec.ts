import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { ContainerModule } from 'inversify';
import { afterEach, describe, expect, it } from 'vitest';
import { idempotencyMetaKey } from '../child-server/child-tool-registry.js';
import { definePlugin } from '../container/mcp-plugin.js';
import { ExitClassifier } from '../contributions/exit-classifier.js';
import { ChildProcessPort } from '../ports/child-process-port.js';
import { Clock } from '../ports/clock.js';
import { Logger } from '../ports/logger.js';
import { createTestContainer } from '../testing/create-test-container.js';
import { type FakeChildProcess, FakeChildProcessPort } from '../testing/fake-child-process.js';
import { ManualClock } from '../testing/manual-clock.js';
import { RecordingLogger } from '../testing/recording-logger.js';
import { ChildSupervisor } from './child-supervisor.js';
import { McpProxy } from './mcp-proxy.js';
import { RejoinTargetTracker } from './rejoin-target-tracker.js';
import { ToolListCache } from './tool-list-cache.js';

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
];

const handoff = definePlugin({
  id: 'test.handoff',
  module: new ContainerModule(({ bind }) => {
    bind(ExitClassifier).toConstantValue({
      id: 'test.75',
      specificationVersion: 'v1',
      classify: (exit) => (exit.code === 75 ? 'handoff' : undefined),
    } satisfies ExitClassifier);
  }),
});

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** The idempotency key in a request's `_meta`, if any. */
const metaKey = (params: Record<string, unknown> | undefined): unknown =>
  (params?._meta as Record<string, unknown> | undefined)?.[idempotencyMetaKey];

/**
 * Lets I/O (the tool cache's file writes) and continuations run until `check` holds, or for about
 * a second when it never does (used to give a wrong event every chance to show up).
 */
async function eventually(check: () => boolean): Promise<void> {
  for (let round = 0; round < 500 && !check(); round++) await new Promise((resolve) => setTimeout(resolve, 2));
}

const settle = async () => {
  for (let i = 0; i < 20; i++) await new Promise<void>((resolve) => setImmediate(resolve));
};

/**
 * The proxy over fake children that answer the handshake and tools/list by themselves; tool calls
 * are answered by `answer` (return undefined to leave a call unanswered).
 */
async function setup(
  answer: (
    child: FakeChildProcess,
    request: { id: number; method: string; params?: Record<string, unknown> },
  ) => unknown,
) {
  tools = [...allTools];
  const dir = mkdtempSync(join(tmpdir(), 'proxy-unit-'));
  dirs.push(dir);
  const clock = new ManualClock(0);
  const port = new FakeChildProcessPort();
  const logger = new RecordingLogger();
  const container = createTestContainer({ plugins: [handoff] })
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
        if (message.method === 'initialize')
          child.send({
            jsonrpc: '2.0',
            id: message.id,
            result: {
              protocolVersion: '2025-06-18',
              capabilities: {},
              serverInfo: { name: 'runt', version: '1', title: 'nteract (daemon 1.0.0)' },
            },
          });
        else if (message.method === 'tools/list') child.send({ jsonrpc: '2.0', id: message.id, result: { tools } });
        else {
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
  const proxy = new McpProxy({
    input,
    output,
    supervisor: container.get(ChildSupervisor),
    tracker: new RejoinTargetTracker(),
    tools: new ToolListCache({ builtInTools: [], filePath: join(dir, 'tools.json'), logger }),
    clock,
    logger,
    version: '9.9.9',
    resolveChild: () => ({ command: 'runt-mcp', args: [], env: {} }),
    childWaitMs: 60_000,
    onExit: (code) => exits.push(code),
  });
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
          },
      );
  const answerTo = (id: number) => lines().find((line) => line.id === id);
  await send({
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'claude-code', version: '1' } },
  });
  await send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  await settle();
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
  return { port, clock, send, rawLine, lines, answerTo, received, crash, proxy, exits, logger };
}

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
        { type: 'text', text: '[nteract] MCP server restarted\n' },
        { type: 'text', text: 'done create_cell' },
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
    await eventually(() => false);
    await t.send({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'create_notebook', arguments: {} } });
    expect(t.answerTo(7)).toBeUndefined();
    t.clock.advance(250);
    await eventually(() => t.answerTo(7) !== undefined);
    expect(t.answerTo(7)?.result?.content).toEqual([
      { type: 'text', text: '[nteract] MCP server restarted\n' },
      { type: 'text', text: 'ok' },
    ]);
  });

  it('seeds the rejoin target on restarts only, preferring the canonical path', async () => {
    const t = await setup((_child, request) =>
      (request.params as { name?: string })?.name === 'connect_notebook'
        ? {
            content: [
              {
                type: 'text',
                text: JSON.stringify({ notebook_id: '0b9f2c44-5d1e-4a7b-9c3d-2e8f6a1b7c90', path: '/n/a.ipynb' }),
              },
            ],
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

  it('answers malformed lines with -32700 and id null, and serves the cached tool list with reconnect', async () => {
    const t = await setup(() => ({ content: [] }));
    await t.rawLine('not json');
    await t.rawLine('"a string"');
    expect(t.lines().find((line) => line.error?.code === -32700)?.id).toBeNull();
    expect(t.lines().find((line) => line.error?.code === -32600)?.id).toBeNull();
    await t.send({ jsonrpc: '2.0', id: 5, method: 'tools/list' });
    const listed = ((t.answerTo(5)?.result?.tools ?? []) as { name: string }[]).map((tool) => tool.name);
    expect(listed).toEqual(['connect_notebook', 'create_notebook', 'create_cell', 'reconnect']);
  });

  it('tells the client list_changed only when the tool list really changed, and exits when an upgrade removed a tool', async () => {
    const t = await setup(() => undefined);
    const changes = () => t.lines().filter((line) => line.method === 'notifications/tools/list_changed').length;
    await eventually(() => changes() === 1);
    expect(changes()).toBe(1);
    await t.crash();
    await eventually(() => changes() > 1);
    expect(changes()).toBe(1);
    tools = allTools.filter((tool) => (tool as { name: string }).name !== 'create_cell');
    await t.send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'create_notebook', arguments: {} } });
    await t.crash();
    expect(t.answerTo(2)?.error?.message).toBe(
      'Tool list changed incompatibly after daemon upgrade. The MCP server will exit so your client can reconnect with the updated tools. You may need to reinstall the nteract extension.',
    );
    expect(t.exits).toEqual([]);
    t.clock.advance(200);
    await settle();
    expect(t.exits).toEqual([0]);
  });

  it('fails calls fast with a typed error once the breaker is open', async () => {
    const t = await setup(() => undefined);
    for (let crash = 0; crash < 6; crash++) {
      t.port.latest.exit(1);
      await settle();
      t.clock.advance(2500);
      await settle();
    }
    await t.send({ jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'create_notebook', arguments: {} } });
    expect(t.answerTo(9)?.error?.message).toMatch(/restart/i);
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
      "The answer was too large to deliver: runt-mcp wrote a message over the proxy's 16777216-byte (16 MiB) limit, so it was dropped. Ask for less at once: a window of cells (get_all_cells with start/count), one cell (get_cell), or outputs without full_output.",
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
