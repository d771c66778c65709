import { ProtocolAdmission } from '@nteract-mcp/core';
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
    expect(() => createLegacyTransportPlugin({ protocolVersions: [] })).toThrow(RangeError);
  });
});

describe('the tsup build of @nteract-mcp/plugin-transport-legacy', () => {
  it('resolves its @inject-ed admission from the built output', async () => {
    const built = (await import(
      /* @vite-ignore */ new URL('../dist/index.js', import.meta.url).href
    )) as typeof import('./index.js');
    const { createMcpContainer } = await import('@nteract-mcp/core');
    const [item] = createMcpContainer({ plugins: [built.createLegacyTransportPlugin()] }).getAll(ProtocolAdmission);
    expect(item).toBeInstanceOf(built.InitializeAdmission);
    expect(item?.admit({ method: 'initialize', params: { protocolVersion: '2024-11-05' } })).toMatchObject({
      kind: 'open',
      protocolVersion: '2024-11-05',
    });
  });
});
