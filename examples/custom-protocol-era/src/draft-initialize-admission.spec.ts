import type { ServerDescription } from '@nteract-mcp/core';
import { describe, expect, it } from 'vitest';
import { DraftInitializeAdmission } from './draft-initialize-admission.js';

const server: ServerDescription = {
  name: 'outline',
  version: '2.0.0',
  capabilities: { tools: {}, tasks: { list: {} }, extensions: { 'io.modelcontextprotocol/tasks': {}, 'acme/x': {} } },
  instructions: 'Use the outline.',
};
const params = {
  protocolVersion: 'DRAFT-2027-01',
  capabilities: { elicitation: {} },
  clientInfo: { name: 'acme-agent', version: '0.9.0' },
};

describe(DraftInitializeAdmission, () => {
  const era = new DraftInitializeAdmission();

  it('opens on an initialize of the draft version only; anything else is for the other eras', () => {
    expect(era.admit({ method: 'initialize', params })).toEqual({
      kind: 'open',
      protocolVersion: 'DRAFT-2027-01',
      client: { name: 'acme-agent', version: '0.9.0' },
    });
    expect(era.admit({ method: 'initialize', params: { ...params, protocolVersion: '2025-11-25' } })).toEqual({
      kind: 'pass',
    });
    expect(era.admit({ method: 'initialize' })).toEqual({ kind: 'pass' });
    expect(era.admit({ method: 'tools/list', params })).toEqual({ kind: 'pass' });
  });

  it('refuses only an initialize nobody admitted, naming the draft version', () => {
    expect(era.refuseUnadmitted({ method: 'tools/list' })).toBeUndefined();
    expect(era.refuseUnadmitted({ method: 'initialize', params: { protocolVersion: 7 } })).toMatchObject({
      code: -32602,
      data: { supported: ['DRAFT-2027-01'], requested: null },
    });
  });

  it('opens a connection that answers the handshake without tasks and replays its initialize to a later server', () => {
    const request = { method: 'initialize', params };
    const connection = era.open(request, { kind: 'open', protocolVersion: 'DRAFT-2027-01', client: undefined }, server);
    expect(connection.handshake).toEqual({
      protocolVersion: 'DRAFT-2027-01',
      capabilities: { tools: {}, extensions: { 'acme/x': {} } },
      serverInfo: { name: 'outline', version: '2.0.0' },
      instructions: 'Use the outline.',
    });
    expect(connection.readyOn).toBe('notifications/initialized');
    expect(connection.clientCapabilities?.({ method: 'tools/call' })).toEqual({ elicitation: {} });
    expect(connection.replay()).toEqual([
      { request: true, method: 'initialize', params },
      { request: false, method: 'notifications/initialized' },
    ]);
    const result = { content: [] };
    expect(connection.shapeResult(result, server)).toBe(result);
    expect(connection.check({ method: 'tools/call', params: { name: 'x' } })).toEqual({ kind: 'serve' });
    expect(connection.check({ method: 'initialize', params })).toMatchObject({ kind: 'reject', code: -32600 });
  });
});
