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
    expect(gate.shapeResult({ tools: [] })).toEqual({ tools: [] });
    expect(connection?.requestParams({ name: 'x' })).toEqual({ name: 'x' });
    expect(connection?.replay()).toEqual([
      { request: true, method: 'initialize', params: init },
      { request: false, method: 'notifications/initialized' },
    ]);
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
