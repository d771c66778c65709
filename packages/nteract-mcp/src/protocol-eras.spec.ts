import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import {
  ChildProcessPort,
  ChildToolContribution,
  Clock,
  ContributionProvider,
  createChildMcpServer,
  DaemonPort,
  defineChildTool,
  definePlugin,
  Logger,
  type McpPlugin,
  ProtocolAdmission,
  restoredSubscriptionMetaKey,
  SessionActivation,
  textResult,
} from '@nteract-mcp/core';
import {
  createTestContainer,
  FakeChildProcessPort,
  FakeDaemonPort,
  FakeNotebookHandle,
} from '@nteract-mcp/core/testing';
import { ManualClock, RecordingLogger } from '@nteract-mcp/foundation/testing';
import { createLegacyTransportPlugin } from '@nteract-mcp/plugin-transport-legacy';
import { createNativeTransportPlugin } from '@nteract-mcp/plugin-transport-native';
import { ChildSupervisor, McpProxy, ToolListCache } from '@nteract-mcp/proxy';
import { ContainerModule } from 'inversify';
import { afterEach, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { proxyPlugins } from './distribution-plugins.js';
import { runtimedEntry } from './run-runt-mcp.js';

const plainInitialize = {
  jsonrpc: '2.0' as const,
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'claude-code', version: '1' } },
};
const envelope = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name: 'v2-client', version: '2.4.0' },
};
/** What a plain `initialize` gets where the native era is the only one (decision 4: -32022, naming the versions). */
const nativeOnlyRefusal = {
  code: -32022,
  message: expect.stringContaining('per-request negotiation only'),
  data: { supported: ['2026-07-28'], requested: '2025-06-18' },
};

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** The child's server over a real container with exactly `eras` (and a fake daemon), reached raw over a linked pair. */
async function childServer(eras: readonly McpPlugin[]) {
  const container = createTestContainer({ plugins: eras })
    .override(Logger, new RecordingLogger())
    .override(DaemonPort, new FakeDaemonPort())
    .build();
  const child = createChildMcpServer(container, { version: '1.2.3', daemonVersion: '2.0.0', cwd: '/' });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await child.connect(serverSide);
  cleanups.push(() => child.close());
  const received: JSONRPCMessage[] = [];
  clientSide.onmessage = (message) => received.push(message);
  await clientSide.start();
  const ask = async (message: JSONRPCMessage & { id: number }) => {
    await clientSide.send(message);
    await expect.poll(() => received.some((answer) => 'id' in answer && answer.id === message.id)).toBe(true);
    return received.find((answer) => 'id' in answer && answer.id === message.id) as {
      result?: Record<string, unknown>;
      error?: { code: number; message: string; data?: unknown };
    };
  };
  return { child, container, ask, received, send: (message: JSONRPCMessage) => clientSide.send(message) };
}

/** The proxy over a real container with `plugins` (fake child processes); raw JSON-RPC lines in and out. */
async function proxy(plugins: readonly McpPlugin[]) {
  const dir = mkdtempSync(join(tmpdir(), 'proxy-eras-'));
  const port = new FakeChildProcessPort();
  const logger = new RecordingLogger();
  const container = createTestContainer({ plugins })
    .override(ChildProcessPort, port)
    .override(Clock, new ManualClock(0))
    .override(Logger, logger)
    .build();
  const input = new PassThrough();
  const output = new PassThrough();
  let out = '';
  output.setEncoding('utf8').on('data', (chunk: string) => {
    out += chunk;
  });
  const instance = new McpProxy({
    input,
    output,
    supervisor: container.get(ChildSupervisor),
    eras: container.get<ContributionProvider<ProtocolAdmission>>(ContributionProvider, { name: ProtocolAdmission }),
    tools: new ToolListCache({ builtInTools: [], filePath: join(dir, 'tools.json'), logger }),
    clock: container.get(Clock),
    logger,
    version: '9.9.9',
    resolveChild: () => ({ command: 'runt-mcp', args: [], env: {} }),
    onExit: () => undefined,
  });
  await instance.start();
  cleanups.push(async () => {
    await instance.close(0);
    rmSync(dir, { recursive: true, force: true });
  });
  const answers = () =>
    out
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { id?: unknown; result?: Record<string, unknown>; error?: unknown });
  const ask = async (message: object & { id: number }) => {
    input.write(`${JSON.stringify(message)}\n`);
    await expect.poll(() => answers().some((answer) => answer.id === message.id)).toBe(true);
    return answers().find((answer) => answer.id === message.id);
  };
  return { ask, port };
}

describe('a composition without the legacy protocol plugin', () => {
  it('makes initialize unknown to the proxy: a plain initialize is refused -32022 and no child starts', async () => {
    const plugins = proxyPlugins().filter((plugin) => plugin.id !== 'transport-legacy');
    expect(plugins.map((plugin) => plugin.id)).toEqual(['proxy', 'transport-native', 'app-view']);
    const { ask, port } = await proxy(plugins);
    expect((await ask(plainInitialize))?.error).toEqual(nativeOnlyRefusal);
    expect(port.spawned).toHaveLength(0);
  });

  it('makes initialize unknown to the child server: refused -32022, while an enveloped request is served and shaped', async () => {
    const { child, ask } = await childServer([createNativeTransportPlugin()]);
    expect((await ask(plainInitialize)).error).toEqual(nativeOnlyRefusal);
    expect(child.client()).toBeUndefined();
    const listed = await ask({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: { _meta: envelope } });
    expect(Array.isArray(listed.result?.tools)).toBe(true);
    expect(listed.result).toMatchObject({
      resultType: 'complete',
      _meta: {
        'io.modelcontextprotocol/serverInfo': { name: 'nteract', version: '1.2.3', title: 'nteract (daemon 2.0.0)' },
      },
    });
    expect(child.client()).toEqual({ name: 'v2-client', version: '2.4.0' });
    expect(child.peerLabel()).toMatch(/^v2-client agent:v2-client:/);
  });
});

describe('a composition with the legacy protocol plugin', () => {
  it('lets the proxy handshake as before', async () => {
    const { ask } = await proxy(proxyPlugins());
    expect((await ask(plainInitialize))?.result).toMatchObject({
      protocolVersion: '2025-06-18',
      serverInfo: { name: 'nteract', version: '9.9.9' },
    });
  });

  it('lets an SDK client connect to the child server; the era answers initialize, not the SDK', async () => {
    const container = createTestContainer({ plugins: [createLegacyTransportPlugin(), createNativeTransportPlugin()] })
      .override(Logger, new RecordingLogger())
      .override(DaemonPort, new FakeDaemonPort())
      .build();
    const child = createChildMcpServer(container, { version: '1.2.3', daemonVersion: '2.0.0', cwd: '/' });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await child.connect(serverSide);
    const client = new Client({ name: 'claude-code', title: 'Claude Code', version: '1' });
    await client.connect(clientSide);
    cleanups.push(async () => {
      await client.close();
      await child.close();
    });
    expect(client.getServerVersion()).toEqual({ name: 'nteract', version: '1.2.3', title: 'nteract (daemon 2.0.0)' });
    expect(client.getInstructions()).toContain('nteract MCP server');
    expect((await client.listTools()).tools.map((tool) => tool.name)).toContain('session_status');
    expect(child.server.getClientVersion()).toBeUndefined();
    expect(child.peerLabel()).toMatch(/^Claude Code agent:claude-code:/);
  });
});

describe('the shipped child composition (legacy, then native)', () => {
  it('refuses an enveloped initialize -32601 as the native era does, opening nothing (even with legacy params)', async () => {
    const { child, ask } = await childServer([createLegacyTransportPlugin(), createNativeTransportPlugin()]);
    const enveloped = await ask({ ...plainInitialize, params: { ...plainInitialize.params, _meta: envelope } });
    expect(enveloped.error).toMatchObject({ code: -32601 });
    expect(child.client()).toBeUndefined();
    // Nothing opened: a plain initialize still opens legacy.
    expect((await ask({ ...plainInitialize, id: 2 })).result).toMatchObject({ protocolVersion: '2025-06-18' });
    expect(child.client()).toEqual({ name: 'claude-code', version: '1' });
  });

  it('native-opened: a notification needs no envelope (no answer, nothing refused) and the next request is served', async () => {
    const { ask, send, received } = await childServer([createLegacyTransportPlugin(), createNativeTransportPlugin()]);
    expect(
      (await ask({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: envelope } })).result,
    ).toBeDefined();
    await send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 99 } });
    await send({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 1, progress: 1 } });
    expect(
      (await ask({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: { _meta: envelope } })).result,
    ).toBeDefined();
    expect(received.map((message) => ('id' in message ? message.id : 'no id'))).toEqual([1, 2]);
    expect(received.every((message) => !('error' in message))).toBe(true);
  });
});

describe("the shipped child composition's protocol errors", () => {
  const eras = () => [createLegacyTransportPlugin(), createNativeTransportPlugin()];
  /** Opens `era` on a child server; `params` then gives a request's params in that era. */
  const opened = async (era: 'legacy' | 'native') => {
    const server = await childServer(eras());
    if (era === 'legacy') {
      await server.ask(plainInitialize);
      await server.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    }
    const meta = {
      ...envelope,
      'io.modelcontextprotocol/clientCapabilities': { extensions: { 'io.modelcontextprotocol/tasks': {} } },
    };
    const params = (given: Record<string, unknown>) => (era === 'native' ? { ...given, _meta: meta } : given);
    return { ...server, params };
  };

  for (const era of ['legacy', 'native'] as const) {
    // -32002 up to 2025-11-25; -32602 from 2026-07-28 on (SEP-2164). The URI in data.uri either way.
    const code = era === 'legacy' ? -32002 : -32602;
    it(`${era}: resources/read of an unknown resource is the era's resource-not-found error, ${code} with data.uri`, async () => {
      const { ask, params } = await opened(era);
      const uris = ['nteract://notebook/00000000-0000-4000-8000-000000000000', 'file:///nowhere.txt'];
      for (const [index, uri] of uris.entries()) {
        const refused = await ask({
          jsonrpc: '2.0',
          id: 10 + index,
          method: 'resources/read',
          params: params({ uri }),
        });
        expect(refused.error).toEqual({ code, message: `Unknown resource: ${uri}`, data: { uri } });
      }
    });

    it(`${era}: an McpError goes out with its plain message, not the SDK's "MCP error <code>: " in front`, async () => {
      const { ask, params } = await opened(era);
      const refused = await ask({ jsonrpc: '2.0', id: 10, method: 'tasks/get', params: params({ taskId: 'nope' }) });
      expect(refused.error).toEqual({ code: -32602, message: expect.stringMatching(/^Task not found: nope /) });
    });
  }
});

/** A plugin contributing one tool that cannot work without the client's `sampling` capability. */
const samplingToolPlugin = definePlugin({
  id: 'test.sampling-tool',
  module: new ContainerModule(({ bind }) => {
    bind(ChildToolContribution).toConstantValue({
      id: 'test.sampling-tool',
      specificationVersion: 'v1',
      tools: () => [
        defineChildTool({
          name: 'summarize_with_model',
          description: 'Asks the client model to summarize (needs sampling).',
          inputSchema: z.object({}),
          annotations: { readOnlyHint: true },
          requiredClientCapabilities: { sampling: {} },
          handler: async () => textResult('summarized'),
        }),
      ],
    });
  }),
});

describe('the child server with a contributed tool and the shipped eras', () => {
  const eras = () => [createLegacyTransportPlugin(), createNativeTransportPlugin(), samplingToolPlugin];
  const callMeta = (capabilities: object) => ({
    ...envelope,
    'io.modelcontextprotocol/clientCapabilities': capabilities,
  });

  it('lists the contributed tool and refuses it -32021 to a request that did not declare the capability it needs', async () => {
    const { ask } = await childServer(eras());
    const listed = await ask({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: envelope } });
    expect(((listed.result?.tools ?? []) as { name: string }[]).map((tool) => tool.name)).toContain(
      'summarize_with_model',
    );
    const refused = await ask({
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/call',
      params: { name: 'summarize_with_model', arguments: {}, _meta: callMeta({}) },
    });
    expect(refused.error).toEqual({
      code: -32021,
      // The plain message: the MCP SDK's McpError would write `MCP error -32021: ` in front of it.
      message: expect.stringMatching(/^Missing required client capability: summarize_with_model needs sampling/),
      data: { requiredCapabilities: { sampling: {} } },
    });
    // Declared on this request: served (nothing is inferred from earlier requests).
    const served = await ask({
      jsonrpc: '2.0',
      id: 3,
      method: 'tools/call',
      params: { name: 'summarize_with_model', arguments: {}, _meta: callMeta({ sampling: {} }) },
    });
    expect(served.result?.content).toEqual([{ type: 'text', text: 'summarized' }]);
  });

  it('legacy: the capabilities of initialize decide', async () => {
    const { ask, send } = await childServer(eras());
    await ask(plainInitialize);
    await send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    const refused = await ask({
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/call',
      params: { name: 'summarize_with_model', arguments: {} },
    });
    expect(refused.error?.code).toBe(-32021);
  });

  it('native: holds subscriptions/listen itself; its slot changes reach the stream, tagged, and nothing goes out unsolicited', async () => {
    const { ask, send, received, child } = await childServer(eras());
    await send({
      jsonrpc: '2.0',
      id: 'l',
      method: 'subscriptions/listen',
      params: { notifications: { resourcesListChanged: true }, _meta: envelope },
    });
    await expect.poll(() => received.length).toBe(1);
    expect(received[0]).toEqual({
      jsonrpc: '2.0',
      method: 'notifications/subscriptions/acknowledged',
      params: {
        notifications: { resourcesListChanged: true },
        _meta: { 'io.modelcontextprotocol/subscriptionId': 'l' },
      },
    });
    await child.server.sendToolListChanged();
    await child.server.sendResourceListChanged();
    // A request answered in order: whatever was sent before its answer has arrived by then.
    await ask({ jsonrpc: '2.0', id: 9, method: 'tools/list', params: { _meta: envelope } });
    const notifications = received.filter((message) => 'method' in message);
    expect(
      notifications.map((message) => [message.method, (message as { params?: { _meta?: unknown } }).params?._meta]),
    ).toEqual([
      ['notifications/subscriptions/acknowledged', { 'io.modelcontextprotocol/subscriptionId': 'l' }],
      ['notifications/resources/list_changed', { 'io.modelcontextprotocol/subscriptionId': 'l' }],
    ]);
    // Cancelled: closed, and not passed to the server (which never saw the request).
    await send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'l' } });
    await child.server.sendResourceListChanged();
    await ask({ jsonrpc: '2.0', id: 10, method: 'tools/list', params: { _meta: envelope } });
    expect(received.filter((message) => 'method' in message)).toHaveLength(2);
  });
});

describe('resource subscriptions of the child server in the native era', () => {
  const notebookId = '0b1e5a9c-2f4d-4c41-9e57-7d3f0a6b8c21';
  const cellUri = `nteract://notebook/${notebookId}/cells/cell-1`;
  const updates = (received: JSONRPCMessage[]) =>
    received
      .filter((message) => 'method' in message && message.method === 'notifications/resources/updated')
      .map((message) => (message as { params?: unknown }).params);

  it("tells a listen stream naming a cell of another peer's edit, tagged with the stream's id; refuses resources/subscribe; stops on cancel", async () => {
    const { ask, send, received, container } = await childServer([
      createLegacyTransportPlugin(),
      createNativeTransportPlugin(),
    ]);
    const handle = new FakeNotebookHandle({ notebookId, cells: [{ source: 'x = 1', cellType: 'code' }], peers: true });
    await container.get(SessionActivation).activate({
      key: notebookId,
      target: { kind: 'notebook-id', notebookId },
      origin: 'connect',
      connect: async () => handle,
    });
    await send({
      jsonrpc: '2.0',
      id: 'w',
      method: 'subscriptions/listen',
      params: { notifications: { resourceSubscriptions: [cellUri] }, _meta: envelope },
    });
    await expect.poll(() => received.length).toBe(1);
    expect(received[0]).toMatchObject({
      method: 'notifications/subscriptions/acknowledged',
      params: { notifications: { resourceSubscriptions: [cellUri] } },
    });
    // Legacy-only methods are not served in this era.
    const refused = await ask({
      jsonrpc: '2.0',
      id: 1,
      method: 'resources/subscribe',
      params: { uri: cellUri, _meta: envelope },
    });
    expect(refused.error?.code).toBe(-32601);

    handle.editAsPeer('human:ada', 'cell-1', 'x = 2');
    await ask({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: { _meta: envelope } });
    expect(updates(received)).toEqual([{ uri: cellUri, _meta: { 'io.modelcontextprotocol/subscriptionId': 'w' } }]);
    const read = await ask({
      jsonrpc: '2.0',
      id: 3,
      method: 'resources/read',
      params: { uri: cellUri, _meta: envelope },
    });
    const [content] = (read.result?.contents ?? []) as { text: string }[];
    expect(JSON.parse(String(content?.text))).toMatchObject({ source: 'x = 2', edited_by: 'human:ada' });

    await send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'w' } });
    handle.editAsPeer('human:ada', 'cell-1', 'x = 3');
    await ask({ jsonrpc: '2.0', id: 4, method: 'tools/list', params: { _meta: envelope } });
    expect(updates(received)).toHaveLength(1);
  });

  it('a stream the proxy restores for a new child gets one notice per open resource it names, after its acknowledgement', async () => {
    const { ask, send, received, container } = await childServer([
      createLegacyTransportPlugin(),
      createNativeTransportPlugin(),
    ]);
    const handle = new FakeNotebookHandle({ notebookId, cells: [{ source: 'x = 1', cellType: 'code' }] });
    await container.get(SessionActivation).activate({
      key: notebookId,
      target: { kind: 'notebook-id', notebookId },
      origin: 'rejoin',
      connect: async () => handle,
    });
    await send({
      jsonrpc: '2.0',
      id: 'p',
      method: 'subscriptions/listen',
      params: {
        notifications: { resourceSubscriptions: [cellUri, 'nteract://notebook/not-open-here'] },
        _meta: { ...envelope, [restoredSubscriptionMetaKey]: true },
      },
    });
    await ask({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: envelope } });
    const methods = received.flatMap((message) => ('method' in message ? [message.method] : []));
    expect(methods).toEqual(['notifications/subscriptions/acknowledged', 'notifications/resources/updated']);
    expect(updates(received)).toEqual([{ uri: cellUri, _meta: { 'io.modelcontextprotocol/subscriptionId': 'p' } }]);
  });
});

describe('the built runt-mcp bin', () => {
  it('serves a native request with its contributed native era (no initialize)', async () => {
    const home = mkdtempSync(join(tmpdir(), 'runt-eras-'));
    cleanups.push(() => rmSync(home, { recursive: true, force: true }));
    const bin = fileURLToPath(new URL('../dist/runt-mcp.js', import.meta.url));
    // Default options, as the proxy starts it: it may auto-start a daemon in this HOME, stopped below.
    const env = {
      PATH: process.env.PATH,
      HOME: home,
      XDG_RUNTIME_DIR: join(home, 'run'),
      XDG_CACHE_HOME: join(home, 'cache'),
      XDG_DATA_HOME: join(home, 'data'),
    };
    const child = spawn(process.execPath, [bin], { env, stdio: ['pipe', 'pipe', 'ignore'] });
    const exited = new Promise((resolve) => child.once('exit', resolve));
    cleanups.push(async () => {
      child.stdin.end();
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
      spawnSync(process.execPath, [runtimedEntry(), 'stop'], { env, encoding: 'utf8' });
    });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      out += chunk;
    });
    const answers = () =>
      out
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as Record<string, unknown>);
    child.stdin.write(
      `${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'server/discover', params: { _meta: envelope } })}\n`,
    );
    child.stdin.write(
      `${JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: { _meta: envelope } })}\n`,
    );
    child.stdin.write(`${JSON.stringify({ ...plainInitialize, id: 3 })}\n`);
    await expect.poll(() => answers().length, { timeout: 15_000 }).toBe(3);
    const byId = (id: number) => answers().find((answer) => answer.id === id);
    const [discover, listed, initialize] = [byId(1), byId(2), byId(3)];
    expect(discover).toMatchObject({ id: 1, result: { supportedVersions: ['2026-07-28'], resultType: 'complete' } });
    expect(listed).toMatchObject({ id: 2, result: { resultType: 'complete' } });
    expect(initialize).toMatchObject({ id: 3, error: { code: -32022 } });
  });
});
