import { CoreError, ProtocolAdmission, ProtocolEraGate, tasksExtension } from '@nteract-mcp/core';
import { createTestContainer } from '@nteract-mcp/core/testing';
import { describe, expect, it } from 'vitest';
import { createNativeTransportPlugin } from './create-native-transport-plugin.js';
import { envelopeKeys } from './native-envelope.js';

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
    ).toEqual({
      kind: 'open',
      protocolVersion: '2026-07-28',
      client: { name: 'v2-client', version: '2.4.0' },
      clientCapabilities: {},
    });
  });

  it('treats server/discover as a probe that locks nothing', () => {
    expect(admission().admit({ method: 'server/discover', params: { _meta: envelope() } })).toEqual({
      kind: 'probe',
      clientCapabilities: {},
    });
  });

  it('refuses -32602 a method only this era has when it comes without an envelope (not passed to another era)', () => {
    for (const method of ['server/discover', 'subscriptions/listen']) {
      expect(admission().admit({ method })).toMatchObject({ kind: 'reject', code: -32602 });
      expect(admission().admit({ method, params: { _meta: {} } })).toMatchObject({ kind: 'reject', code: -32602 });
    }
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

  it('bounds the client text its refusals quote (a method or version of any length or bytes)', () => {
    const long = `v\n${'9'.repeat(100_000)}`;
    const bounded = `"v\\n${'9'.repeat(78)}…"`;
    expect(
      admission().admit({
        method: 'tools/list',
        params: { _meta: envelope({ [envelopeKeys.protocolVersion]: long }) },
      }),
    ).toMatchObject({ message: `Unsupported protocol version: ${bounded}`, data: { requested: bounded } });
    expect(admission().refuseUnadmitted({ method: long })).toMatchObject({
      message: `Missing required _meta["${envelopeKeys.protocolVersion}"] envelope on ${bounded}`,
    });
  });
});

const server = {
  name: 'nteract',
  version: '1.2.3',
  capabilities: { tools: { listChanged: true } },
  instructions: 'use it',
};

describe('a connection of the native era', () => {
  it('discovers the tasks extension, never the 2025 era’s tasks capability', () => {
    const gate = new ProtocolEraGate([admission()], {
      ...server,
      capabilities: { tools: {}, tasks: { list: {} }, extensions: { [tasksExtension]: {} } },
    });
    const verdict = gate.receive({ method: 'server/discover', params: { _meta: envelope() } });
    expect(verdict).toMatchObject({
      kind: 'answer',
      result: { capabilities: { tools: {}, extensions: { [tasksExtension]: {} } } },
    });
    if (verdict.kind !== 'answer') throw new Error('server/discover was not answered');
    expect(verdict.result.capabilities).not.toHaveProperty('tasks');
  });

  it('answers server/discover without locking, then serves the opening request with no handshake', () => {
    const gate = new ProtocolEraGate([admission()], server);
    expect(gate.receive({ method: 'server/discover', params: { _meta: envelope() } })).toEqual({
      kind: 'answer',
      result: {
        supportedVersions: ['2026-07-28'],
        capabilities: server.capabilities,
        instructions: 'use it',
        ttlMs: 0,
        cacheScope: 'private',
        resultType: 'complete',
        _meta: { [envelopeKeys.serverInfo]: { name: 'nteract', version: '1.2.3' } },
      },
    });
    expect(gate.connection).toBeUndefined();
    const opening = gate.receive({
      method: 'tools/list',
      params: { _meta: envelope({ [envelopeKeys.clientInfo]: { name: 'v2' } }) },
    });
    expect(opening).toMatchObject({
      kind: 'serve',
      opened: { era: 'native', readyOn: undefined, client: { name: 'v2' } },
    });
    // Nothing to replay but a stream for every list change, so a new server's changes reach the client's streams.
    expect(gate.connection?.replay()).toEqual([
      { request: true, method: 'server/discover', params: {} },
      {
        request: true,
        stream: true,
        method: 'subscriptions/listen',
        params: { notifications: { toolsListChanged: true, promptsListChanged: true, resourcesListChanged: true } },
      },
    ]);
  });

  it('validates every later request again (decision 4) and shapes results', () => {
    const gate = new ProtocolEraGate([admission()], server);
    gate.receive({ method: 'tools/list', params: { _meta: envelope() } });
    expect(gate.receive({ method: 'tools/call', params: { name: 'x', _meta: envelope() } })).toEqual({ kind: 'serve' });
    expect(gate.receive({ method: 'initialize', params: { protocolVersion: '2025-06-18' } })).toMatchObject({
      kind: 'refuse',
      error: { code: -32022, data: { supported: ['2026-07-28'], requested: '2025-06-18' } },
    });
    expect(gate.receive({ method: 'tools/list', params: {} })).toMatchObject({
      kind: 'refuse',
      error: { code: -32602 },
    });
    expect(
      gate.receive({
        method: 'tools/list',
        params: { _meta: envelope({ [envelopeKeys.protocolVersion]: '2025-11-25' }) },
      }),
    ).toMatchObject({ kind: 'refuse', error: { code: -32022 } });
    expect(gate.receive({ method: 'ping', params: { _meta: envelope() } })).toMatchObject({
      kind: 'refuse',
      error: { code: -32601 },
    });
    expect(gate.shapeResult({ tools: [], _meta: { other: 1 } })).toEqual({
      tools: [],
      ttlMs: 0,
      cacheScope: 'private',
      resultType: 'complete',
      _meta: { other: 1, [envelopeKeys.serverInfo]: { name: 'nteract', version: '1.2.3' } },
    });
    expect(gate.connection?.requestParams({ name: 'session_status' })).toEqual({
      name: 'session_status',
      _meta: envelope(),
    });
  });

  it('gives list and read results the required cache fields, keeps given ones, and leaves other results without them', () => {
    const gate = new ProtocolEraGate([admission()], server);
    gate.receive({ method: 'tools/list', params: { _meta: envelope() } });
    for (const key of ['tools', 'prompts', 'resources', 'resourceTemplates', 'contents']) {
      expect(gate.shapeResult({ [key]: [] })).toMatchObject({ ttlMs: 0, cacheScope: 'private' });
    }
    expect(gate.shapeResult({ tools: [], ttlMs: 60_000, cacheScope: 'public' })).toMatchObject({
      ttlMs: 60_000,
      cacheScope: 'public',
    });
    const call = gate.shapeResult({ content: [{ type: 'text', text: 'ok' }] });
    expect(call).not.toHaveProperty('ttlMs');
    expect(call).not.toHaveProperty('cacheScope');
  });

  it('alone, refuses a plain initialize -32022 naming the served versions, and a bare request -32602', () => {
    const gate = new ProtocolEraGate([admission()], server);
    expect(gate.receive({ method: 'initialize', params: { protocolVersion: '2025-06-18' } })).toMatchObject({
      kind: 'refuse',
      error: { code: -32022, data: { supported: ['2026-07-28'], requested: '2025-06-18' } },
    });
    expect(gate.receive({ method: 'tools/list' })).toMatchObject({ kind: 'refuse', error: { code: -32602 } });
    expect(gate.connection).toBeUndefined();
  });

  it('refuses empty options with a CoreError', () => {
    const empty = (() => {
      try {
        createNativeTransportPlugin({ protocolVersions: [] });
      } catch (error) {
        return error;
      }
    })();
    expect(CoreError.is(empty, 'invalidPluginOptions')).toBe(true);
  });
});

/** A gate over the native era alone, opened by a valid enveloped `tools/list`. */
function nativeOpened(): ProtocolEraGate {
  const gate = new ProtocolEraGate([admission()], server);
  gate.receive({ method: 'tools/list', params: { _meta: envelope() } });
  return gate;
}

describe('the admission rules of the native era', () => {
  it('unopened: the first valid native request other than server/discover opens native', () => {
    const gate = new ProtocolEraGate([admission()], server);
    expect(gate.receive({ method: 'tools/call', params: { name: 'x', _meta: envelope() } })).toMatchObject({
      kind: 'serve',
      opened: { era: 'native', protocolVersion: '2026-07-28' },
    });
    expect(gate.connection?.era).toBe('native');
  });

  it('unopened: server/discover only probes, however often; the next valid request still opens', () => {
    const gate = new ProtocolEraGate([admission()], server);
    for (let probe = 0; probe < 3; probe += 1) {
      expect(gate.receive({ method: 'server/discover', params: { _meta: envelope() } })).toMatchObject({
        kind: 'answer',
        result: { supportedVersions: ['2026-07-28'] },
      });
      expect(gate.connection).toBeUndefined();
    }
    expect(gate.receive({ method: 'tools/list', params: { _meta: envelope() } })).toMatchObject({
      opened: { era: 'native' },
    });
  });

  it('unopened: a missing or malformed envelope key is -32602 and opens nothing; a later valid request still opens', () => {
    const gate = new ProtocolEraGate([admission()], server);
    for (const meta of [
      { [envelopeKeys.clientCapabilities]: {} },
      { [envelopeKeys.protocolVersion]: '2026-07-28' },
      envelope({ [envelopeKeys.protocolVersion]: 20260728 }),
      envelope({ [envelopeKeys.clientCapabilities]: [] }),
      envelope({ [envelopeKeys.clientCapabilities]: null }),
    ]) {
      expect(gate.receive({ method: 'tools/list', params: { _meta: meta } })).toMatchObject({
        kind: 'refuse',
        error: { code: -32602 },
      });
      expect(gate.connection).toBeUndefined();
    }
    expect(gate.receive({ method: 'tools/list', params: { _meta: envelope() } })).toMatchObject({
      opened: { era: 'native' },
    });
  });

  it('unopened: an unsupported version is -32022 with data.supported/data.requested and opens nothing; a later valid request still opens', () => {
    const gate = new ProtocolEraGate([admission()], server);
    expect(
      gate.receive({
        method: 'tools/list',
        params: { _meta: envelope({ [envelopeKeys.protocolVersion]: '2025-11-25' }) },
      }),
    ).toEqual({
      kind: 'refuse',
      error: {
        code: -32022,
        message: 'Unsupported protocol version: 2025-11-25',
        data: { supported: ['2026-07-28'], requested: '2025-11-25' },
      },
    });
    expect(gate.connection).toBeUndefined();
    expect(gate.receive({ method: 'tools/list', params: { _meta: envelope() } })).toMatchObject({
      opened: { era: 'native' },
    });
  });

  it('unopened: an enveloped initialize or ping is -32601 and opens nothing', () => {
    const gate = new ProtocolEraGate([admission()], server);
    for (const method of ['initialize', 'ping']) {
      expect(gate.receive({ method, params: { _meta: envelope() } })).toMatchObject({
        kind: 'refuse',
        error: { code: -32601 },
      });
    }
    expect(gate.connection).toBeUndefined();
  });

  it('native-opened: every request is validated again (missing key -32602, other version -32022), and the era stays', () => {
    const gate = nativeOpened();
    const opened = gate.connection;
    expect(
      gate.receive({ method: 'tools/list', params: { _meta: { [envelopeKeys.clientCapabilities]: {} } } }),
    ).toMatchObject({
      kind: 'refuse',
      error: { code: -32602 },
    });
    expect(
      gate.receive({
        method: 'tools/list',
        params: { _meta: envelope({ [envelopeKeys.protocolVersion]: '2027-01-01' }) },
      }),
    ).toMatchObject({
      kind: 'refuse',
      error: { code: -32022, data: { supported: ['2026-07-28'], requested: '2027-01-01' } },
    });
    expect(gate.receive({ method: 'tools/list' })).toMatchObject({ kind: 'refuse', error: { code: -32602 } });
    expect(gate.receive({ method: 'tools/list', params: { _meta: envelope() } })).toEqual({ kind: 'serve' });
    expect(gate.connection).toBe(opened);
  });

  it('native-opened: a plain initialize is -32022', () => {
    expect(nativeOpened().receive({ method: 'initialize', params: { protocolVersion: '2025-11-25' } })).toMatchObject({
      kind: 'refuse',
      error: { code: -32022, data: { supported: ['2026-07-28'], requested: '2025-11-25' } },
    });
  });

  it('native-opened: an enveloped initialize or ping is -32601', () => {
    const gate = nativeOpened();
    expect(gate.receive({ method: 'initialize', params: { _meta: envelope() } })).toMatchObject({
      kind: 'refuse',
      error: { code: -32601 },
    });
    expect(gate.receive({ method: 'ping', params: { _meta: envelope() } })).toMatchObject({
      kind: 'refuse',
      error: { code: -32601 },
    });
  });

  it('native-opened: server/discover is still a probe', () => {
    const gate = nativeOpened();
    const opened = gate.connection;
    expect(gate.receive({ method: 'server/discover', params: { _meta: envelope() } })).toMatchObject({
      kind: 'answer',
      result: { supportedVersions: ['2026-07-28'] },
    });
    expect(gate.connection).toBe(opened);
  });

  it('notifications need no envelope: the era waits for none (readyOn undefined) and replays only its own requests', () => {
    const connection = nativeOpened().connection;
    expect(connection?.readyOn).toBeUndefined();
    expect(connection?.replay().map((message) => message.method)).toEqual(['server/discover', 'subscriptions/listen']);
  });

  it('learns how the server behind describes itself from its server/discover answer, and from nothing else', () => {
    const connection = nativeOpened().connection;
    const [discover, listen] = connection?.replay() ?? [];
    if (!discover || !listen) throw new Error('no replay');
    const result = {
      supportedVersions: ['2026-07-28'],
      capabilities: { tools: {}, logging: {} },
      instructions: 'child',
      _meta: { [envelopeKeys.serverInfo]: { name: 'runt', version: '2', title: 'nteract (daemon 3.0.0)' } },
    };
    expect(connection?.describedBy?.(discover, result)).toEqual({
      name: 'runt',
      version: '2',
      title: 'nteract (daemon 3.0.0)',
      capabilities: { tools: {}, logging: {} },
      instructions: 'child',
    });
    expect(connection?.describedBy?.(listen, result)).toBeUndefined();
    expect(connection?.describedBy?.(discover, { capabilities: {} })).toBeUndefined();
    expect(connection?.describedBy?.(discover, undefined)).toBeUndefined();
  });
});

describe('notification streams and delivery of the native era', () => {
  const listenServer = {
    ...server,
    capabilities: { tools: { listChanged: true }, resources: { listChanged: true, subscribe: true } },
  };
  const subscriptionId = 'io.modelcontextprotocol/subscriptionId';
  const listenRequest = (notifications: unknown) => ({
    method: 'subscriptions/listen',
    params: { ...(notifications === undefined ? {} : { notifications }), _meta: envelope() },
  });

  it('a listen request, opening or later, is held as a stream: acknowledged with the honoured filter under its id', () => {
    const gate = new ProtocolEraGate([admission()], listenServer);
    expect(gate.receive(listenRequest({ toolsListChanged: true, promptsListChanged: true }))).toMatchObject({
      kind: 'listen',
      opened: { era: 'native' },
    });
    // prompts.listChanged is not announced: left out of the acknowledgement.
    expect(gate.listen(7, listenRequest({ toolsListChanged: true, promptsListChanged: true }))).toEqual({
      notifications: [
        {
          method: 'notifications/subscriptions/acknowledged',
          params: { notifications: { toolsListChanged: true }, _meta: { [subscriptionId]: 7 } },
        },
      ],
    });
    expect(gate.receive(listenRequest({ resourcesListChanged: true }))).toEqual({ kind: 'listen' });
    expect(
      gate.listen('r', listenRequest({ resourcesListChanged: true, resourceSubscriptions: ['nb://a'] })),
    ).toMatchObject({
      notifications: [{ params: { notifications: { resourcesListChanged: true, resourceSubscriptions: ['nb://a'] } } }],
    });
    // Invalid filter, id already streaming: refused, nothing opened.
    expect(gate.listen('bad', listenRequest(undefined))).toMatchObject({ error: { code: -32602 } });
    expect(gate.listen(7, listenRequest({ toolsListChanged: true }))).toMatchObject({ error: { code: -32600 } });

    // List changes go only to the streams that asked, tagged with their id; `7` is not `"7"`.
    expect(gate.deliver({ method: 'notifications/tools/list_changed' })).toEqual([
      { method: 'notifications/tools/list_changed', params: { _meta: { [subscriptionId]: 7 } } },
    ]);
    expect(gate.deliver({ method: 'notifications/resources/updated', params: { uri: 'nb://a' } })).toEqual([
      { method: 'notifications/resources/updated', params: { uri: 'nb://a', _meta: { [subscriptionId]: 'r' } } },
    ]);
    expect(gate.deliver({ method: 'notifications/resources/updated', params: { uri: 'nb://other' } })).toEqual([]);
    expect(gate.deliver({ method: 'notifications/prompts/list_changed' })).toEqual([]);
    // Another server's acknowledgement is never relayed; request-scoped notifications go as they are.
    expect(gate.deliver({ method: 'notifications/subscriptions/acknowledged', params: { notifications: {} } })).toEqual(
      [],
    );
    expect(gate.deliver({ method: 'notifications/progress', params: { progressToken: 1, progress: 1 } })).toHaveLength(
      1,
    );

    // Cancelled: that stream is closed; a shutdown ends the others with their listen results.
    expect(gate.cancelled('7')).toBe(false);
    expect(gate.cancelled(7)).toBe(true);
    expect(gate.deliver({ method: 'notifications/tools/list_changed' })).toEqual([]);
    expect(gate.endStreams()).toEqual([{ id: 'r', result: { _meta: { [subscriptionId]: 'r' } } }]);
    expect(gate.endStreams()).toEqual([]);
  });

  it('says which resources the open streams watch, and passes them on as one stream of the host naming them all', () => {
    const gate = new ProtocolEraGate([admission()], listenServer);
    expect(gate.watchedResources()).toEqual([]);
    gate.receive(listenRequest({ resourceSubscriptions: ['nb://b', 'nb://a'] }));
    gate.listen('x', listenRequest({ resourceSubscriptions: ['nb://b', 'nb://a'] }));
    gate.listen('y', listenRequest({ resourceSubscriptions: ['nb://a', 'nb://c'], toolsListChanged: true }));
    expect(gate.watchedResources()).toEqual(['nb://a', 'nb://b', 'nb://c']);
    expect(gate.subscriptionReplay(gate.watchedResources(), { mark: true })).toEqual([
      {
        request: true,
        stream: true,
        method: 'subscriptions/listen',
        params: { notifications: { resourceSubscriptions: ['nb://a', 'nb://b', 'nb://c'] }, _meta: { mark: true } },
      },
    ]);
    gate.cancelled('x');
    expect(gate.watchedResources()).toEqual(['nb://a', 'nb://c']);
    expect(gate.subscriptionReplay([], {})).toEqual([]);
    // A server that does not announce `resources.subscribe` watches nothing for anyone.
    const plain = new ProtocolEraGate([admission()], server);
    plain.receive(listenRequest({ resourceSubscriptions: ['nb://a'] }));
    plain.listen('z', listenRequest({ resourceSubscriptions: ['nb://a'] }));
    expect(plain.watchedResources()).toEqual([]);
  });

  it('streams notifications/tasks for the task ids a stream names, with the tasks extension on both sides', () => {
    const tasksServer = {
      ...listenServer,
      capabilities: { ...listenServer.capabilities, extensions: { [tasksExtension]: {} } },
    };
    const withTasks = (notifications: unknown) => ({
      method: 'subscriptions/listen',
      params: {
        notifications,
        _meta: envelope({ [envelopeKeys.clientCapabilities]: { extensions: { [tasksExtension]: {} } } }),
      },
    });
    const gate = new ProtocolEraGate([admission()], tasksServer);
    gate.receive(withTasks({ taskIds: ['t-1'] }));
    expect(gate.listen('s', withTasks({ taskIds: ['t-1'] }))).toMatchObject({
      notifications: [{ params: { notifications: { taskIds: ['t-1'] } } }],
    });
    // Without the extension in the request's client capabilities: -32021, naming it.
    expect(gate.listen('n', listenRequest({ taskIds: ['t-1'] }))).toMatchObject({
      error: { code: -32021, data: { requiredCapabilities: { extensions: { [tasksExtension]: {} } } } },
    });
    expect(gate.watchedTasks()).toEqual(['t-1']);
    expect(gate.deliver({ method: 'notifications/tasks', params: { taskId: 't-1', status: 'completed' } })).toEqual([
      {
        method: 'notifications/tasks',
        params: { taskId: 't-1', status: 'completed', _meta: { [subscriptionId]: 's' } },
      },
    ]);
    expect(gate.deliver({ method: 'notifications/tasks', params: { taskId: 't-2', status: 'completed' } })).toEqual([]);
    // The 2025 era's status notification is not this era's: never sent.
    expect(gate.deliver({ method: 'notifications/tasks/status', params: { taskId: 't-1' } })).toEqual([]);
    expect(gate.subscriptionReplay([], {}, gate.watchedTasks())).toEqual([
      {
        request: true,
        stream: true,
        method: 'subscriptions/listen',
        params: { notifications: { taskIds: ['t-1'] }, _meta: {} },
      },
    ]);
  });

  it('refuses a stream beyond the limit per connection', () => {
    const gate = new ProtocolEraGate([admission()], listenServer);
    gate.receive(listenRequest({ toolsListChanged: true }));
    for (let id = 0; id < 32; id++)
      expect(gate.listen(id, listenRequest({ toolsListChanged: true }))).toHaveProperty('notifications');
    expect(gate.listen(32, listenRequest({ toolsListChanged: true }))).toMatchObject({
      error: { code: -32602, message: expect.stringContaining('Too many subscriptions') },
    });
  });

  it('sends a log message only for a request that asked for that level or a less severe one', () => {
    const gate = nativeOpened();
    const message = (level: string) => ({ method: 'notifications/message', params: { level, data: 'x' } });
    const asking = (logLevel: string) => ({
      method: 'tools/call',
      params: { name: 't', _meta: envelope({ 'io.modelcontextprotocol/logLevel': logLevel }) },
    });
    const silent = { method: 'tools/call', params: { name: 't', _meta: envelope() } };
    expect(gate.deliver(message('error'), [])).toEqual([]);
    expect(gate.deliver(message('error'), [silent])).toEqual([]);
    expect(gate.deliver(message('warning'), [asking('info')])).toEqual([message('warning')]);
    expect(gate.deliver(message('debug'), [asking('info')])).toEqual([]);
    expect(gate.deliver(message('debug'), [silent, asking('debug')])).toEqual([message('debug')]);
    expect(gate.deliver(message('bogus'), [asking('debug')])).toEqual([]);
  });

  it("reads the client's capabilities from each request's envelope", () => {
    const gate = nativeOpened();
    expect(
      gate.clientCapabilities({
        method: 'tools/call',
        params: { _meta: envelope({ [envelopeKeys.clientCapabilities]: { sampling: {} } }) },
      }),
    ).toEqual({ sampling: {} });
    expect(gate.clientCapabilities({ method: 'tools/call', params: {} })).toBeUndefined();
  });
});

describe('the tsup build of @nteract-mcp/plugin-transport-native', () => {
  it('resolves its @inject-ed admission from the built output', async () => {
    const built = (await import(
      /* @vite-ignore */ new URL('../dist/index.js', import.meta.url).href
    )) as typeof import('./index.js');
    const { createMcpContainer } = await import('@nteract-mcp/core');
    const [item] = createMcpContainer({ plugins: [built.createNativeTransportPlugin()] }).getAll(ProtocolAdmission);
    expect(item?.id).toBe('transport-native.per-request');
    expect(item?.admit({ method: 'server/discover', params: { _meta: envelope() } })).toEqual({
      kind: 'probe',
      clientCapabilities: {},
    });
  });
});
