import { CoreError, ProtocolAdmission, ProtocolEraGate } from '@nteract-mcp/core';
import { createTestContainer } from '@nteract-mcp/core/testing';
import { describe, expect, it } from 'vitest';
import { createLegacyTransportPlugin } from './create-legacy-transport-plugin.js';

function admission(plugin = createLegacyTransportPlugin()): ProtocolAdmission {
  const [only] = createTestContainer({ plugins: [plugin] })
    .build()
    .getAll(ProtocolAdmission);
  if (!only) throw new Error('no admission contributed');
  return only;
}

describe(createLegacyTransportPlugin, () => {
  it('opens on initialize with the requested version when served, capturing the client', () => {
    expect(
      admission().admit({
        method: 'initialize',
        params: {
          protocolVersion: '2025-06-18',
          clientInfo: { name: 'claude-code', title: 'Claude Code', version: '2.1' },
        },
      }),
    ).toEqual({
      kind: 'open',
      protocolVersion: '2025-06-18',
      client: { name: 'claude-code', version: '2.1', title: 'Claude Code' },
    });
  });

  it('answers an unknown requested version with the newest served one', () => {
    const decision = admission(createLegacyTransportPlugin({ protocolVersions: ['2025-03-26', '2024-11-05'] })).admit({
      method: 'initialize',
      params: { protocolVersion: '2099-01-01', clientInfo: { version: 'no name' } },
    });
    expect(decision).toEqual({ kind: 'open', protocolVersion: '2025-03-26', client: undefined });
  });

  it('rejects initialize without a protocol version, and passes everything else', () => {
    expect(admission().admit({ method: 'initialize', params: {} })).toMatchObject({ kind: 'reject', code: -32602 });
    expect(
      admission().admit({
        method: 'tools/list',
        params: { _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28' } },
      }),
    ).toEqual({ kind: 'pass' });
    const empty = (() => {
      try {
        createLegacyTransportPlugin({ protocolVersions: [] });
      } catch (error) {
        return error;
      }
    })();
    expect(CoreError.is(empty, 'invalidPluginOptions')).toBe(true);
  });

  it('refuses any other first request -32600 until initialize opens the connection', () => {
    expect(admission().refuseUnadmitted({ method: 'tools/list' })).toMatchObject({ kind: 'reject', code: -32600 });
    expect(admission().refuseUnadmitted({ method: 'initialize' })).toBeUndefined();
    expect(admission().refuseUnadmitted({ method: `a\n${'x'.repeat(100_000)}` })).toMatchObject({
      message: `Send initialize first (got "a\\n${'x'.repeat(78)}…").`,
    });
  });

  it('answers initialize itself, serves after it, refuses a second one and a modern envelope, replays the handshake', () => {
    const gate = new ProtocolEraGate([admission()], server);
    const init = { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'c' } };
    expect(gate.receive({ method: 'initialize', params: init })).toMatchObject({
      kind: 'answer',
      result: {
        protocolVersion: '2025-06-18',
        capabilities: server.capabilities,
        serverInfo: { name: 'nteract', version: '1.2.3', title: 'nteract (daemon 1.0.0)' },
        instructions: 'use it',
      },
    });
    const connection = gate.connection;
    expect(connection).toMatchObject({ era: 'legacy', readyOn: 'notifications/initialized', client: { name: 'c' } });
    expect(gate.receive({ method: 'tools/list', params: {} })).toEqual({ kind: 'serve' });
    expect(gate.receive({ method: 'initialize', params: init })).toMatchObject({
      kind: 'refuse',
      error: { code: -32600, message: 'Already initialized.' },
    });
    expect(
      gate.receive({
        method: 'tools/list',
        params: { _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28' } },
      }),
    ).toMatchObject({ kind: 'refuse', error: { code: -32600 } });
    const result = { tools: [] };
    // Every result itself, and it says so: a relay may pass the answer's bytes on unread.
    expect(gate.shapeResult(result)).toBe(result);
    expect(connection?.resultsAsIs).toBe(true);
    expect(connection?.requestParams({ name: 'x' })).toEqual({ name: 'x' });
    expect(connection?.replay()).toEqual([
      { request: true, method: 'initialize', params: init },
      { request: false, method: 'notifications/initialized' },
    ]);
    // The client's resource subscriptions go to a server behind as one resources/subscribe each.
    expect(connection?.subscriptionReplay?.(['nb://a', 'nb://b'], { mark: true })).toEqual([
      { request: true, method: 'resources/subscribe', params: { uri: 'nb://a', _meta: { mark: true } } },
      { request: true, method: 'resources/subscribe', params: { uri: 'nb://b', _meta: { mark: true } } },
    ]);
    expect(connection?.watchedResources).toBeUndefined();
  });
});

const modernEnvelope = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {},
};
const legacyInitialize = { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'c' } };

/** A gate over the legacy era alone, opened by a plain `initialize`. */
function legacyOpened(): ProtocolEraGate {
  const gate = new ProtocolEraGate([admission()], server);
  gate.receive({ method: 'initialize', params: legacyInitialize });
  return gate;
}

describe('the admission rules of the legacy era', () => {
  it('unopened: initialize opens legacy', () => {
    const gate = new ProtocolEraGate([admission()], server);
    expect(gate.receive({ method: 'initialize', params: legacyInitialize })).toMatchObject({
      kind: 'answer',
      opened: { era: 'legacy', protocolVersion: '2025-06-18' },
    });
    expect(gate.connection?.era).toBe('legacy');
  });

  it('unopened: initialize without a protocol version is -32602 and opens nothing; a later valid initialize still opens', () => {
    const gate = new ProtocolEraGate([admission()], server);
    expect(gate.receive({ method: 'initialize', params: { capabilities: {} } })).toMatchObject({
      kind: 'refuse',
      error: { code: -32602 },
    });
    expect(gate.connection).toBeUndefined();
    expect(gate.receive({ method: 'initialize', params: legacyInitialize })).toMatchObject({ kind: 'answer' });
    expect(gate.connection?.era).toBe('legacy');
  });

  it('unopened: an initialize carrying a native envelope is not legacy (passed to the native era), even with legacy params', () => {
    expect(admission().admit({ method: 'initialize', params: { _meta: modernEnvelope } })).toEqual({ kind: 'pass' });
    expect(admission().admit({ method: 'initialize', params: { ...legacyInitialize, _meta: modernEnvelope } })).toEqual(
      { kind: 'pass' },
    );
    expect(
      admission().admit({
        method: 'initialize',
        params: { ...legacyInitialize, _meta: { 'io.modelcontextprotocol/clientCapabilities': {} } },
      }),
    ).toEqual({ kind: 'pass' });
    expect(
      admission().admit({ method: 'initialize', params: { ...legacyInitialize, _meta: { progressToken: 1 } } }),
    ).toMatchObject({ kind: 'open' });
  });

  it('unopened: any other request is -32600 and opens nothing', () => {
    const gate = new ProtocolEraGate([admission()], server);
    expect(gate.receive({ method: 'tools/list' })).toMatchObject({ kind: 'refuse', error: { code: -32600 } });
    expect(gate.receive({ method: 'ping' })).toMatchObject({ kind: 'refuse', error: { code: -32600 } });
    expect(gate.connection).toBeUndefined();
  });

  it('legacy-opened: an enveloped request is -32600 and never switches the era', () => {
    const gate = legacyOpened();
    const opened = gate.connection;
    for (const meta of [
      modernEnvelope,
      { 'io.modelcontextprotocol/protocolVersion': '2026-07-28' },
      { 'io.modelcontextprotocol/clientCapabilities': {} },
    ]) {
      expect(gate.receive({ method: 'tools/list', params: { _meta: meta } })).toMatchObject({
        kind: 'refuse',
        error: { code: -32600, message: expect.stringContaining('Cannot switch protocol era in place') },
      });
    }
    expect(gate.connection).toBe(opened);
    expect(gate.receive({ method: 'tools/list', params: { _meta: { progressToken: 1 } } })).toEqual({ kind: 'serve' });
  });

  it('legacy-opened: a second initialize is -32600', () => {
    const gate = legacyOpened();
    expect(gate.receive({ method: 'initialize', params: legacyInitialize })).toMatchObject({
      kind: 'refuse',
      error: { code: -32600, message: 'Already initialized.' },
    });
    expect(gate.connection?.protocolVersion).toBe('2025-06-18');
  });

  it("legacy-opened: reads the server's description from its initialize answer, and the client's capabilities from initialize", () => {
    const connection = legacyOpened().connection;
    const [initialize, initialized] = connection?.replay() ?? [];
    if (!initialize || !initialized) throw new Error('no replay');
    const result = {
      protocolVersion: '2025-06-18',
      capabilities: { tools: {}, prompts: {} },
      serverInfo: { name: 'runt', version: '2', title: 'nteract (daemon 3.0.0)' },
      instructions: 'child',
    };
    expect(connection?.describedBy?.(initialize, result)).toEqual({
      name: 'runt',
      version: '2',
      title: 'nteract (daemon 3.0.0)',
      capabilities: { tools: {}, prompts: {} },
      instructions: 'child',
    });
    expect(connection?.describedBy?.(initialize, { serverInfo: { name: 'runt' }, capabilities: {} })).toBeUndefined();
    expect(connection?.describedBy?.(initialized, result)).toBeUndefined();
    expect(connection?.clientCapabilities?.({ method: 'tools/call' })).toEqual({});
  });

  it('legacy-opened: a plain request is served', () => {
    expect(legacyOpened().receive({ method: 'tools/call', params: { name: 'x' } })).toEqual({ kind: 'serve' });
  });
});

const server = {
  name: 'nteract',
  version: '1.2.3',
  title: 'nteract (daemon 1.0.0)',
  capabilities: { tools: { listChanged: true } },
  instructions: 'use it',
};

describe('the tsup build of @nteract-mcp/plugin-transport-legacy', () => {
  it('resolves its @inject-ed admission from the built output', async () => {
    const built = (await import(
      /* @vite-ignore */ new URL('../dist/index.js', import.meta.url).href
    )) as typeof import('./index.js');
    const { createMcpContainer } = await import('@nteract-mcp/core');
    const [item] = createMcpContainer({ plugins: [built.createLegacyTransportPlugin()] }).getAll(ProtocolAdmission);
    expect(item?.id).toBe('transport-legacy.initialize');
    expect(item?.admit({ method: 'initialize', params: { protocolVersion: '2024-11-05' } })).toMatchObject({
      kind: 'open',
      protocolVersion: '2024-11-05',
    });
  });
});
