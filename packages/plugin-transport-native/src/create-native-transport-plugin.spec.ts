import { ProtocolAdmission } from '@nteract-mcp/core';
import { createTestContainer } from '@nteract-mcp/core/testing';
import { describe, expect, it } from 'vitest';
import { createNativeTransportPlugin } from './create-native-transport-plugin.js';
import { envelopeKeys } from './per-request-admission.js';

const admission = (): ProtocolAdmission => {
  const [only] = createTestContainer({ plugins: [createNativeTransportPlugin()] })
    .build()
    .getAll(ProtocolAdmission);
  if (!only) throw new Error('no admission contributed');
  return only;
};

const envelope = (extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  [envelopeKeys.protocolVersion]: '2026-07-28',
  [envelopeKeys.clientCapabilities]: {},
  ...extra,
});

describe(createNativeTransportPlugin, () => {
  it('opens on a valid enveloped request and reads the client from the envelope', () => {
    expect(
      admission().admit({
        method: 'tools/list',
        params: { _meta: envelope({ [envelopeKeys.clientInfo]: { name: 'v2-client', version: '2.4.0' } }) },
      }),
    ).toEqual({ kind: 'open', protocolVersion: '2026-07-28', client: { name: 'v2-client', version: '2.4.0' } });
  });

  it('treats server/discover as a probe that locks nothing', () => {
    expect(admission().admit({ method: 'server/discover', params: { _meta: envelope() } })).toEqual({ kind: 'probe' });
  });

  it('passes requests without an envelope (legacy ones included)', () => {
    expect(admission().admit({ method: 'initialize', params: { protocolVersion: '2025-06-18' } })).toEqual({
      kind: 'pass',
    });
    expect(admission().admit({ method: 'tools/list' })).toEqual({ kind: 'pass' });
    expect(admission().admit({ method: 'tools/list', params: { _meta: { progressToken: 1 } } })).toEqual({
      kind: 'pass',
    });
  });

  it('answers -32602 for a missing required key, -32022 for an unserved version, -32601 for removed methods', () => {
    expect(
      admission().admit({ method: 'tools/list', params: { _meta: { [envelopeKeys.clientCapabilities]: {} } } }),
    ).toMatchObject({ kind: 'reject', code: -32602 });
    expect(
      admission().admit({ method: 'tools/list', params: { _meta: { [envelopeKeys.protocolVersion]: '2026-07-28' } } }),
    ).toMatchObject({ kind: 'reject', code: -32602 });
    expect(
      admission().admit({
        method: 'tools/list',
        params: { _meta: envelope({ [envelopeKeys.protocolVersion]: '2027-01-01' }) },
      }),
    ).toEqual({
      kind: 'reject',
      code: -32022,
      message: 'Unsupported protocol version: 2027-01-01',
      data: { supported: ['2026-07-28'], requested: '2027-01-01' },
    });
    expect(admission().admit({ method: 'initialize', params: { _meta: envelope() } })).toMatchObject({
      kind: 'reject',
      code: -32601,
    });
    expect(admission().admit({ method: 'ping', params: { _meta: envelope() } })).toMatchObject({
      kind: 'reject',
      code: -32601,
    });
  });
});

describe('the tsup build of @nteract-mcp/plugin-transport-native', () => {
  it('resolves its @inject-ed admission from the built output', async () => {
    const built = (await import(
      /* @vite-ignore */ new URL('../dist/index.js', import.meta.url).href
    )) as typeof import('./index.js');
    const { createMcpContainer } = await import('@nteract-mcp/core');
    const [item] = createMcpContainer({ plugins: [built.createNativeTransportPlugin()] }).getAll(ProtocolAdmission);
    expect(item).toBeInstanceOf(built.PerRequestAdmission);
    expect(item?.admit({ method: 'server/discover', params: { _meta: envelope() } })).toEqual({ kind: 'probe' });
  });
});
