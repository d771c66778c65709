import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ContributionProvider, ProtocolAdmission } from '@nteract-mcp/core';
import { createTestContainer, FakeChildProcess, ManualClock, RecordingLogger } from '@nteract-mcp/core/testing';
import { createLegacyTransportPlugin } from '@nteract-mcp/plugin-transport-legacy';
import { afterEach, describe, expect, it } from 'vitest';
import { ChildConnection } from './child-connection.js';
import { ChildHandshake } from './child-handshake.js';
import { ChildToolSync } from './child-tool-sync.js';
import { ClientAttribution } from './client-attribution.js';
import { ToolListCache } from './tool-list-cache.js';
import { UpstreamHandshake } from './upstream-handshake.js';
import { BannerQueue } from './version-banner.js';

const settle = async () => {
  for (let i = 0; i < 10; i++) await new Promise<void>((resolve) => setImmediate(resolve));
};

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true, maxRetries: 20, retryDelay: 10 });
});

const tools = [{ name: 'create_cell', inputSchema: { type: 'object' } }];

/**
 * A {@link ChildHandshake} for a legacy client that opened its connection, with a fake child that
 * answers `initialize` (unless `holdInitialize`) and `tools/list`.
 */
function setup(options: { readonly holdInitialize?: boolean } = {}) {
  const logger = new RecordingLogger();
  const clock = new ManualClock(0);
  const container = createTestContainer({ plugins: [createLegacyTransportPlugin()] }).build();
  const eras = container.get<ContributionProvider<ProtocolAdmission>>(ContributionProvider, {
    name: ProtocolAdmission,
  });
  const upstream = new UpstreamHandshake(eras.getContributions(), '9.9.9', new ClientAttribution(), logger);
  upstream.receive({
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'claude-code', version: '1' } },
  });
  upstream.notification('notifications/initialized');
  const dir = mkdtempSync(join(tmpdir(), 'child-handshake-'));
  dirs.push(dir);
  const cache = new ToolListCache({ builtInTools: [], filePath: join(dir, 'tools.json'), logger });
  const banner = new BannerQueue();
  let current: ChildConnection | undefined;
  const toolSync = new ChildToolSync<ChildConnection>({
    tools: cache,
    logger,
    request: (child, method, params) => child.request(method, params),
    isCurrent: (child) => child === current,
    announceListChanged: () => undefined,
    onIncompatible: () => undefined,
  });
  const readied: ChildConnection[] = [];
  let nextId = 1;
  let reported: string | undefined;
  const handshake = new ChildHandshake({
    upstream,
    tools: cache,
    toolSync,
    banner,
    isCurrent: (child) => child === current,
    nextId: () => nextId++,
    daemonVersion: () => reported,
    onReady: (child) => readied.push(child),
  });
  /** A new live child (its fake process answers on its own) and its handshake, under way. */
  const spawn = (handedOff?: string) => {
    const fake = new FakeChildProcess({ command: 'runt-mcp', args: [], env: {} }, 7);
    const answered = new Set<number>();
    fake.stdin.on('data', () => {
      for (const message of fake.receivedMessages() as { id?: number; method?: string }[]) {
        if (message.id === undefined || answered.has(message.id)) continue;
        if (message.method === 'initialize' && options.holdInitialize) continue;
        answered.add(message.id);
        const result =
          message.method === 'initialize'
            ? { protocolVersion: '2025-06-18', capabilities: {}, serverInfo: { name: 'runt', version: '1' } }
            : { tools };
        fake.send({ result, jsonrpc: '2.0', id: message.id });
      }
    });
    const child = new ChildConnection({
      handle: fake,
      handedOff,
      nextId: () => nextId++,
      clock,
      logger,
      onMessage: () => undefined,
      onAnswer: () => undefined,
    });
    current = child;
    return { fake, child };
  };
  return {
    handshake,
    banner,
    cache,
    readied,
    spawn,
    report: (version: string) => {
      reported = version;
    },
    retire: () => {
      current = undefined;
    },
  };
}

describe(ChildHandshake, () => {
  it("replays the client's handshake to the child, then readies it, sends it what is pending and publishes its tools", async () => {
    const t = setup();
    const { fake, child } = t.spawn();
    await t.handshake.run(child, false);
    const methods = (fake.receivedMessages() as { method?: string }[]).map((message) => message.method);
    expect(methods).toEqual(['initialize', 'notifications/initialized', 'tools/list']);
    expect(child.ready).toBe(true);
    expect(t.readied).toEqual([child]);
    expect(t.cache.current().map((tool) => tool.name)).toEqual(['create_cell']);
    await t.cache.settled();
    // The first child: no restart notice.
    expect(child.notice).toBeUndefined();
    expect(t.banner.idle).toBe(true);
  });

  it('queues the restart notice with the daemon version the children reported last, not one of its own', async () => {
    const t = setup();
    t.report('1.0.0');
    const { child } = t.spawn('/n/a.ipynb');
    await t.handshake.run(child, true);
    expect(child.notice).toEqual({ previousVersion: '1.0.0', handedOff: '/n/a.ipynb' });
    expect(t.banner.pending()).toBe(child.notice);
    await t.cache.settled();
  });

  it('never readies a child that stopped being the live one during its handshake', async () => {
    const t = setup({ holdInitialize: true });
    const { child } = t.spawn();
    const running = t.handshake.run(child, true);
    await settle();
    t.retire();
    child.markExited();
    await running;
    expect(child.ready).toBe(false);
    expect(await child.whenReady(0)).toBe(false);
    expect(child.notice).toBeUndefined();
    expect(t.readied).toEqual([]);
    expect(t.banner.idle).toBe(true);
  });
});
