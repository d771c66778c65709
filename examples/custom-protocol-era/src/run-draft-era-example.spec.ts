import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createLegacyTransportPlugin } from '@nteract-mcp/plugin-transport-legacy';
import { afterEach, describe, expect, it } from 'vitest';
import { createAcmeDraftEraPlugin } from './create-acme-draft-era-plugin.js';
import { runDraftEraExample } from './run-draft-era-example.js';
import { type LineServer, startLineServer } from './start-line-server.js';

const clientInfo = { name: 'acme-agent', version: '0.9.0' };
const draftInitialize = { protocolVersion: 'DRAFT-2027-01', capabilities: {}, clientInfo };
const plainInitialize = { protocolVersion: '2025-11-25', capabilities: {}, clientInfo };

const servers: LineServer[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
});

async function serverWith(...plugins: Parameters<typeof startLineServer>[0]): Promise<LineServer> {
  const server = await startLineServer(plugins);
  servers.push(server);
  return server;
}

describe(runDraftEraExample, () => {
  it('alone, the draft era answers its initialize with DRAFT-2027-01 and no tasks, serves a tool, and refuses a task call, tasks/list, an unknown resource and a second initialize in its own terms', async () => {
    expect(await runDraftEraExample()).toEqual({
      handshake: {
        protocolVersion: 'DRAFT-2027-01',
        serverName: 'nteract',
        capabilities: { tools: { listChanged: true }, resources: { listChanged: true, subscribe: true } },
      },
      opened: { era: 'acme.draft', protocolVersion: 'DRAFT-2027-01' },
      toolAnswered: true,
      refused: { taskCall: -32602, tasksList: -32601, unknownResource: -32602, secondInitialize: -32600 },
      otherVersion: { code: -32602, data: { supported: ['DRAFT-2027-01'], requested: '2025-11-25' } },
    });
  });

  it('runs from its build and checks itself', () => {
    const main = fileURLToPath(new URL('../dist/main.js', import.meta.url));
    const result = spawnSync(process.execPath, [main], { encoding: 'utf8' });
    expect(result.status, result.stderr).toBe(0);
    expect(result.stderr).toContain('example check passed');
    expect(result.stdout).toBe('');
  });
});

describe('the draft era beside the legacy era (draft first)', () => {
  it('takes the DRAFT-2027-01 initialize: answered with that version, a tool call served after it, a task call refused with its error', async () => {
    const server = await serverWith(createAcmeDraftEraPlugin(), createLegacyTransportPlugin());
    const opened = await server.ask(1, 'initialize', draftInitialize);
    expect(opened.result).toMatchObject({ protocolVersion: 'DRAFT-2027-01', serverInfo: { name: 'nteract' } });
    expect(opened.result?.capabilities).not.toHaveProperty('tasks');
    expect(server.opened()).toEqual({ era: 'acme.draft', protocolVersion: 'DRAFT-2027-01' });
    await server.notify('notifications/initialized');

    const status = await server.ask(2, 'tools/call', { name: 'session_status', arguments: {} });
    expect(status.error).toBeUndefined();
    expect(status.result?.isError).not.toBe(true);
    // Core's tool, answered; the peer label is made from the client the draft's initialize named.
    const [item] = (status.result?.content ?? []) as { text: string }[];
    expect(JSON.parse(item?.text ?? '{}')).toMatchObject({
      active: null,
      peer_label: expect.stringMatching(/^acme-agent agent:acme-agent:/),
    });

    const taskCall = await server.ask(3, 'tools/call', { name: 'session_status', arguments: {}, task: { ttl: 1000 } });
    expect(taskCall.error).toEqual({
      code: -32602,
      message: 'DRAFT-2027-01 has no tasks: send tools/call without params.task.',
    });
  });

  it('leaves a plain 2025-11-25 initialize to the legacy era, which keeps its tasks', async () => {
    const server = await serverWith(createAcmeDraftEraPlugin(), createLegacyTransportPlugin());
    const opened = await server.ask(1, 'initialize', plainInitialize);
    expect(opened.result).toMatchObject({ protocolVersion: '2025-11-25', capabilities: { tasks: expect.any(Object) } });
    expect(server.opened()).toEqual({ era: 'legacy', protocolVersion: '2025-11-25' });
    await server.notify('notifications/initialized');
    expect(await server.ask(2, 'tasks/list')).toMatchObject({ result: { tasks: [] } });
    // And the draft's version on this legacy connection is no way back into the draft era.
    expect((await server.ask(3, 'initialize', draftInitialize)).error).toMatchObject({ code: -32600 });
  });

  it('needs to come first: listed after the legacy era, the draft initialize is legacy’s, negotiated down to 2025-11-25', async () => {
    const server = await serverWith(createLegacyTransportPlugin(), createAcmeDraftEraPlugin());
    const opened = await server.ask(1, 'initialize', draftInitialize);
    expect(opened.result).toMatchObject({ protocolVersion: '2025-11-25' });
    expect(server.opened()).toEqual({ era: 'legacy', protocolVersion: '2025-11-25' });
  });
});
