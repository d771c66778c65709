import { type ClientExtension, childServerCapabilities } from '@nteract-mcp/core';
import { FakeInitializeEra, RecordingLogger } from '@nteract-mcp/core/testing';
import { describe, expect, it } from 'vitest';
import { ClientAttribution } from './client-attribution.js';
import { UpstreamHandshake } from './upstream-handshake.js';

const ui: ClientExtension = {
  id: 'test.ui',
  specificationVersion: 'v1',
  extension: 'io.example/ui',
  settings: { mimeTypes: ['text/html'] },
  resources: [],
  toolMeta: () => undefined,
  structuredContent: async () => undefined,
};

function handshake(): UpstreamHandshake {
  return new UpstreamHandshake(
    [new FakeInitializeEra()],
    '1.0.0',
    new ClientAttribution(),
    new RecordingLogger(),
    () => undefined,
    [ui],
  );
}

const initialize = (capabilities: Record<string, unknown>) => ({
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities, clientInfo: { name: 'c', version: '1' } },
});

describe(UpstreamHandshake, () => {
  it('announces a client extension it loads to a client that declared it, beside the extensions every client is shown', () => {
    const upstream = handshake();
    const verdict = upstream.receive(initialize({ extensions: { 'io.example/ui': {} } }));
    expect(verdict.kind).toBe('answer');
    const capabilities = (verdict as unknown as { result: { capabilities: Record<string, unknown> } }).result
      .capabilities;
    expect(capabilities.extensions).toEqual({
      ...(childServerCapabilities.extensions as object),
      'io.example/ui': { mimeTypes: ['text/html'] },
    });
    expect(upstream.declaresExtension({ method: 'tools/list' })).toBe(true);
  });

  it('shows a client that declared none (or only extensions it does not load) the description as it was', () => {
    for (const declared of [{}, { extensions: { 'io.other/x': {} } }]) {
      const upstream = handshake();
      const verdict = upstream.receive(initialize(declared));
      expect((verdict as unknown as { result: { capabilities: unknown } }).result.capabilities).toEqual(
        childServerCapabilities,
      );
      expect(upstream.declaresExtension({ method: 'tools/list' })).toBe(false);
    }
  });
});
