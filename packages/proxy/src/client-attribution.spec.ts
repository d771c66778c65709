import { describe, expect, it } from 'vitest';
import { ClientAttribution } from './client-attribution.js';

describe(ClientAttribution, () => {
  it('creates one stable 8-hex agent session per proxy, or keeps the one it is given', () => {
    const attribution = new ClientAttribution();
    expect(attribution.agentSession()).toMatch(/^[0-9a-f]{8}$/);
    expect(attribution.agentSession()).toBe(attribution.agentSession());
    expect(new ClientAttribution({ agentSession: ' cafe0001 ' }).agentSession()).toBe('cafe0001');
    expect(new ClientAttribution({ agentSession: '  ' }).agentSession()).toMatch(/^[0-9a-f]{8}$/);
  });

  it('builds the peer label from the last valid client identity', () => {
    const attribution = new ClientAttribution({ agentSession: 'cafe0001' });
    expect(attribution.peerLabel()).toBe('Inkwell agent:agent:cafe0001');
    attribution.observeClientInfo({ name: 'Claude Code', title: 'Claude Code', version: '2.0' });
    attribution.observeClientInfo({ version: 'no name' });
    attribution.observeClientInfo(null);
    expect(attribution.clientIdentity()).toEqual({ name: 'Claude Code', title: 'Claude Code', version: '2.0' });
    expect(attribution.peerLabel()).toBe('Claude Code agent:claude-code:cafe0001');
  });
});
