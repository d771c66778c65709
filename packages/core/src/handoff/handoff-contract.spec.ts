import { describe, expect, it } from 'vitest';
import { credentialChannelFd } from './credential-channel.js';
import {
  childExitCodes,
  formatServerTitle,
  handoffEnvironment,
  handoffFromEnvironment,
  handoffToEnvironment,
  honorsIdempotency,
  idempotencyHonoredMeta,
  idempotencyMetaKey,
  rejoinTargetWithoutCredentials,
} from './handoff-contract.js';

describe('the proxy↔child handoff contract', () => {
  it('pins the names both processes depend on (changing one breaks a running proxy or child)', () => {
    expect(handoffEnvironment).toEqual({
      rejoinNotebook: 'NTERACT_MCP_REJOIN_NOTEBOOK',
      agentSession: 'NTERACT_MCP_AGENT_SESSION',
      peerLabel: 'NTERACT_MCP_PEER_LABEL',
      changeCursor: 'NTERACT_MCP_CHANGE_CURSOR',
      credentialFd: 'NTERACT_MCP_CREDENTIAL_FD',
      knownTasks: 'NTERACT_MCP_KNOWN_TASKS',
    });
    expect(credentialChannelFd).toBe(3);
    expect(idempotencyMetaKey).toBe('nteract/idempotencyKey');
    expect(childExitCodes.upgradeHandoff).toBe(75);
  });

  it('round-trips a handoff through the environment, leaving blank values out', () => {
    const handoff = {
      rejoinNotebook: '/w/a b.ipynb',
      agentSession: 'cafe0001',
      peerLabel: 'Claude agent:claude:cafe0001',
    };
    const env = handoffToEnvironment(handoff);
    expect(env).toEqual({
      NTERACT_MCP_REJOIN_NOTEBOOK: '/w/a b.ipynb',
      NTERACT_MCP_AGENT_SESSION: 'cafe0001',
      NTERACT_MCP_PEER_LABEL: 'Claude agent:claude:cafe0001',
    });
    expect(handoffFromEnvironment({ ...env, PATH: '/bin' })).toEqual(handoff);
    expect(handoffToEnvironment({ rejoinNotebook: '  ', agentSession: 'cafe0001' })).toEqual({
      NTERACT_MCP_AGENT_SESSION: 'cafe0001',
    });
    expect(handoffFromEnvironment({ NTERACT_MCP_REJOIN_NOTEBOOK: ' ', NTERACT_MCP_PEER_LABEL: undefined })).toEqual({});
  });

  it('hands the known task ids over as a JSON array, in order; anything else reads as none', () => {
    const knownTasks = ['exec-1', 'run_all_cells:exec-2,exec-3', 'odd "id"'];
    const env = handoffToEnvironment({ knownTasks: [...knownTasks, ' '] });
    expect(env).toEqual({ NTERACT_MCP_KNOWN_TASKS: JSON.stringify(knownTasks) });
    expect(handoffFromEnvironment(env)).toEqual({ knownTasks });
    expect(handoffToEnvironment({ knownTasks: [] })).toEqual({});
    for (const value of ['exec-1', '{"a":1}', '["a",2]', '[]', ' ', '[" "]']) {
      expect(handoffFromEnvironment({ NTERACT_MCP_KNOWN_TASKS: value }), value).toEqual({});
    }
  });

  it('says a tool honours the idempotency key only for the exact contract value', () => {
    expect(honorsIdempotency(idempotencyHonoredMeta)).toBe(true);
    expect(honorsIdempotency({ [idempotencyMetaKey]: 'honoured' })).toBe(false);
    expect(honorsIdempotency({ [idempotencyMetaKey]: true })).toBe(false);
    expect(honorsIdempotency(undefined)).toBe(false);
    expect(honorsIdempotency('honored')).toBe(false);
  });

  it('titles the child server with its daemon version', () => {
    expect(formatServerTitle('2.3.2+abc1234')).toBe('nteract (daemon 2.3.2+abc1234)');
  });

  it('lets a rejoin target cross the boundary without credentials, and leaves other targets as they are', () => {
    expect(
      rejoinTargetWithoutCredentials(' https://ada:pw@hub.example/user/a/lab/tree/x.ipynb?token=s3cret&v=2 '),
    ).toBe('https://hub.example/user/a/lab/tree/x.ipynb?v=2');
    expect(rejoinTargetWithoutCredentials('http://localhost:8888/lab/tree/a.ipynb')).toBe(
      'http://localhost:8888/lab/tree/a.ipynb',
    );
    expect(rejoinTargetWithoutCredentials(' /w/a b.ipynb ')).toBe('/w/a b.ipynb');
    expect(rejoinTargetWithoutCredentials('archive:report.ipynb')).toBe('archive:report.ipynb');
    expect(rejoinTargetWithoutCredentials('https://[bad')).toBe('https://[bad');
  });
});
