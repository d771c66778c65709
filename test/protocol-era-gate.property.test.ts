import { type AdmissionRequest, type EraConnection, ProtocolAdmission, ProtocolEraGate } from '@nteract-mcp/core';
import { createTestContainer } from '@nteract-mcp/core/testing';
import { createLegacyTransportPlugin } from '@nteract-mcp/plugin-transport-legacy';
import { createNativeTransportPlugin, envelopeKeys } from '@nteract-mcp/plugin-transport-native';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

/**
 * A property test of the protocol eras as the shipped compositions load them (legacy, then
 * native; `proxyPlugins()` and `childPlugins()`), behind one {@link ProtocolEraGate} per
 * connection: random sequences of requests and notifications with random methods, envelopes
 * (none, valid, other versions, malformed types, missing keys) and clientInfo.
 *
 * The host below does with a message what the proxy's UpstreamHandshake and the child's
 * EraGatedTransport do: a request is judged by the gate; a notification is never judged (it needs
 * no envelope), so it can neither open nor change an era.
 *
 * PROPERTY_SEED replays a run and PROPERTY_RUNS sets the number of sequences; `npm test` runs one
 * fixed seed (deterministic), a run with PROPERTY_RUNS alone draws a new seed each time.
 */
const runs = Number(process.env.PROPERTY_RUNS ?? 500);
const seed = Number(process.env.PROPERTY_SEED ?? (process.env.PROPERTY_RUNS ? Date.now() % 2 ** 31 : 20_261_201));

/** Generous for long runs: a sequence takes about a millisecond. */
const timeout = 10_000 + runs * 5;

const nativeVersion = '2026-07-28';
const server = { name: 'nteract', version: '1.2.3', capabilities: { tools: { listChanged: true } } };

function shippedEras(): ProtocolAdmission[] {
  return createTestContainer({ plugins: [createLegacyTransportPlugin(), createNativeTransportPlugin()] })
    .build()
    .getAll(ProtocolAdmission);
}

type Shape = 'valid' | 'otherVersion' | 'missingVersion' | 'missingCapabilities' | 'malformed' | 'none' | 'notAnObject';

const clientInfo = fc.oneof(
  fc.record({ name: fc.string({ minLength: 1, maxLength: 8 }), version: fc.string({ maxLength: 4 }) }),
  fc.record({ version: fc.string({ maxLength: 4 }) }),
  fc.constantFrom(null, 'claude', 42, [], { name: '' }),
);

/** A `_meta` value and what it is: `envelope` when it carries a key that marks the native era. */
const meta = fc.oneof(
  fc.record({ info: fc.option(clientInfo, { nil: undefined }), extra: fc.boolean() }).chain(({ info, extra }) => {
    const base = (fields: Record<string, unknown>): Record<string, unknown> => ({
      ...fields,
      ...(info !== undefined ? { [envelopeKeys.clientInfo]: info } : {}),
      ...(extra ? { progressToken: 7 } : {}),
    });
    return fc.oneof(
      fc.constant({
        shape: 'valid' as Shape,
        value: base({ [envelopeKeys.protocolVersion]: nativeVersion, [envelopeKeys.clientCapabilities]: {} }),
      }),
      fc.constantFrom('2025-11-25', '2025-06-18', '2027-01-01', 'latest').map((version) => ({
        shape: 'otherVersion' as Shape,
        value: base({ [envelopeKeys.protocolVersion]: version, [envelopeKeys.clientCapabilities]: {} }),
      })),
      fc.constant({ shape: 'missingVersion' as Shape, value: base({ [envelopeKeys.clientCapabilities]: {} }) }),
      fc.constant({
        shape: 'missingCapabilities' as Shape,
        value: base({ [envelopeKeys.protocolVersion]: nativeVersion }),
      }),
      fc
        .record({
          version: fc.constantFrom<unknown>(nativeVersion, '', 20260728, null, ['2026-07-28']),
          capabilities: fc.constantFrom<unknown>({}, [], 'all', null, 1),
        })
        .map(({ version, capabilities }) => ({
          shape: (version === nativeVersion &&
          typeof capabilities === 'object' &&
          capabilities !== null &&
          !Array.isArray(capabilities)
            ? 'valid'
            : 'malformed') as Shape,
          value: base({ [envelopeKeys.protocolVersion]: version, [envelopeKeys.clientCapabilities]: capabilities }),
        })),
      fc.constant({ shape: 'none' as Shape, value: base({}) }),
    );
  }),
  fc.constantFrom<unknown>('meta', 3, null, []).map((value) => ({ shape: 'notAnObject' as Shape, value })),
);

const isEnvelope = (shape: Shape | undefined): boolean =>
  shape !== undefined && shape !== 'none' && shape !== 'notAnObject';

interface Message {
  readonly notification: boolean;
  readonly method: string;
  readonly params?: unknown;
  /** The `_meta` it carries, `undefined` for none at all. */
  readonly shape: Shape | undefined;
}

const message: fc.Arbitrary<Message> = fc
  .record({
    notification: fc.boolean(),
    requestMethod: fc.constantFrom(
      'initialize',
      'server/discover',
      'tools/list',
      'tools/call',
      'ping',
      'resources/read',
      'subscriptions/listen',
      'no/such-method',
    ),
    notificationMethod: fc.constantFrom(
      'notifications/initialized',
      'notifications/cancelled',
      'notifications/progress',
      'notifications/roots/list_changed',
    ),
    meta: fc.option(meta, { nil: undefined }),
    legacyVersion: fc.option(fc.constantFrom<unknown>('2025-11-25', '2025-06-18', '2024-11-05', '1999-01-01', '', 7), {
      nil: undefined,
    }),
    clientInfo: fc.option(clientInfo, { nil: undefined }),
    paramsNotAnObject: fc.constantFrom<unknown>(undefined, undefined, undefined, undefined, null, 'p', 5),
    filter: fc.constantFrom<unknown>(undefined, { toolsListChanged: true }, { resourcesListChanged: true }, 'all'),
  })
  .map((drawn): Message => {
    const method = drawn.notification ? drawn.notificationMethod : drawn.requestMethod;
    if (drawn.paramsNotAnObject !== undefined || (drawn.meta === undefined && drawn.legacyVersion === undefined)) {
      const params = drawn.paramsNotAnObject ?? (drawn.meta === undefined ? undefined : {});
      return {
        notification: drawn.notification,
        method,
        ...(params !== undefined ? { params } : {}),
        shape: undefined,
      };
    }
    const params: Record<string, unknown> = {
      ...(method === 'tools/call' ? { name: 'list_active_notebooks', arguments: {} } : {}),
      ...(method === 'subscriptions/listen' && drawn.filter !== undefined ? { notifications: drawn.filter } : {}),
      ...(method === 'initialize' && drawn.legacyVersion !== undefined
        ? { protocolVersion: drawn.legacyVersion, capabilities: {} }
        : {}),
      ...(method === 'initialize' && drawn.clientInfo !== undefined ? { clientInfo: drawn.clientInfo } : {}),
      ...(drawn.meta !== undefined ? { _meta: drawn.meta.value } : {}),
    };
    return { notification: drawn.notification, method, params, shape: drawn.meta?.shape };
  });

/** Checks every property on one sequence; throws (an `expect` failure) at the first broken one. */
function drive(sequence: readonly Message[]): void {
  const faults: unknown[] = [];
  const gate = new ProtocolEraGate(shippedEras(), server, { onFault: (_era, error) => faults.push(error) });
  let opened: EraConnection | undefined;
  /** Ids of the streams open now (a stream's id is the index of its listen request). */
  const streams = new Set<number>();
  for (const [index, sent] of sequence.entries()) {
    const at = `message ${index}: ${JSON.stringify(sent)}`;
    if (sent.notification) {
      // Not judged by the gate: a notification needs no envelope, opens nothing, changes no era.
      expect(gate.connection, at).toBe(opened);
      // A cancellation of an open stream closes it, once; of anything else, closes nothing.
      if (sent.method === 'notifications/cancelled') {
        const [stream] = streams;
        if (stream !== undefined) {
          expect(gate.cancelled(stream), at).toBe(true);
          expect(gate.cancelled(stream), at).toBe(false);
          streams.delete(stream);
        } else expect(gate.cancelled(index), at).toBe(false);
      }
      continue;
    }
    const before = gate.connection;
    const request: AdmissionRequest = { method: sent.method, params: sent.params };
    const verdict = gate.receive(request);

    // One verdict, well formed.
    expect(['serve', 'answer', 'refuse', 'listen'], at).toContain(verdict.kind);
    if (verdict.kind === 'listen') {
      // Only a native connection holds streams; opening one acknowledges it under its id, or refuses it.
      expect(gate.connection?.era, at).toBe('native');
      expect(sent.method, at).toBe('subscriptions/listen');
      const stream = gate.listen(index, request);
      if ('notifications' in stream) {
        expect(stream.notifications[0], at).toMatchObject({
          method: 'notifications/subscriptions/acknowledged',
          params: { _meta: { 'io.modelcontextprotocol/subscriptionId': index } },
        });
        streams.add(index);
      } else expect(Number.isInteger(stream.error.code), at).toBe(true);
    }
    // A list change reaches only open streams, each tagged with its id; before native, as it is.
    const delivered = gate.deliver({ method: 'notifications/tools/list_changed' });
    if (gate.connection?.era === 'native') {
      for (const notification of delivered) {
        const id = (notification.params?._meta as Record<string, unknown> | undefined)?.[
          'io.modelcontextprotocol/subscriptionId'
        ];
        expect(streams.has(id as number), at).toBe(true);
      }
    } else expect(delivered, at).toHaveLength(1);
    if (verdict.kind === 'refuse') {
      expect(Number.isInteger(verdict.error.code), at).toBe(true);
      expect(typeof verdict.error.message, at).toBe('string');
    }
    if (verdict.kind === 'answer') expect(typeof verdict.result, at).toBe('object');

    // Opening: only a served or answered request opens, once; the era never changes afterwards.
    const openedHere = verdict.kind !== 'refuse' ? verdict.opened : undefined;
    if (before !== undefined) {
      expect(openedHere, at).toBeUndefined();
      expect(gate.connection, at).toBe(before);
    } else if (openedHere !== undefined) {
      expect(gate.connection, at).toBe(openedHere);
      opened = openedHere;
      // Legacy serves after its notifications/initialized; native from the opening request on.
      expect(opened.readyOn, at).toBe(opened.era === 'legacy' ? 'notifications/initialized' : undefined);
    } else {
      // Rejected or probed: nothing opened or locked.
      expect(gate.connection, at).toBeUndefined();
    }
    if (verdict.kind === 'refuse' || (verdict.kind === 'answer' && openedHere === undefined)) {
      expect(gate.connection, at).toBe(before);
    }

    const era = before?.era;
    // Legacy-opened: an enveloped request is always -32600 (no switching in place).
    if (era === 'legacy' && isEnvelope(sent.shape)) expect(verdict, at).toMatchObject({ error: { code: -32600 } });
    // Native-opened: a plain initialize is always -32022, naming the served versions.
    if (era === 'native' && sent.method === 'initialize' && !isEnvelope(sent.shape)) {
      expect(verdict, at).toMatchObject({
        kind: 'refuse',
        error: { code: -32022, data: { supported: [nativeVersion] } },
      });
    }
    // Not legacy-opened: invalid metadata is answered in native terms and opens nothing.
    if (era !== 'legacy') {
      if (sent.shape === 'missingVersion' || sent.shape === 'missingCapabilities' || sent.shape === 'malformed') {
        expect(verdict, at).toMatchObject({ kind: 'refuse', error: { code: -32602 } });
      }
      if (sent.shape === 'otherVersion') {
        const requested = (sent.params as { _meta: Record<string, unknown> })._meta[envelopeKeys.protocolVersion];
        expect(verdict, at).toMatchObject({
          kind: 'refuse',
          error: { code: -32022, data: { supported: [nativeVersion], requested } },
        });
      }
      // A valid envelope on initialize or ping: a method this revision does not have.
      if (sent.shape === 'valid' && (sent.method === 'initialize' || sent.method === 'ping')) {
        expect(verdict, at).toMatchObject({ kind: 'refuse', error: { code: -32601 } });
      }
      if (sent.shape === 'valid' && sent.method === 'server/discover') {
        expect(verdict, at).toMatchObject({ kind: 'answer', result: { supportedVersions: [nativeVersion] } });
      }
    }
  }
  expect(faults, 'no era threw').toEqual([]);
}

describe(`the shipped protocol eras behind one gate (${runs} sequences, seed ${seed})`, () => {
  it(
    'never throw, give every request one verdict, never flip an era, and keep the admission rules',
    () => {
      fc.assert(
        fc.property(fc.array(message, { minLength: 1, maxLength: 25 }), (sequence) => {
          drive(sequence);
        }),
        { seed, numRuns: runs },
      );
    },
    timeout,
  );

  it(
    'opens each era and a notification stream in some sequence (the generator reaches all three)',
    () => {
      const seen = new Set<string>();
      fc.assert(
        fc.property(fc.array(message, { minLength: 1, maxLength: 25 }), (sequence) => {
          const gate = new ProtocolEraGate(shippedEras(), server);
          for (const [index, sent] of sequence.entries()) {
            if (sent.notification) continue;
            const request = { method: sent.method, params: sent.params };
            if (gate.receive(request).kind === 'listen' && 'notifications' in gate.listen(index, request)) {
              seen.add('stream');
            }
          }
          if (gate.connection) seen.add(gate.connection.era);
        }),
        { seed, numRuns: runs },
      );
      expect([...seen].sort()).toEqual(['legacy', 'native', 'stream']);
    },
    timeout,
  );
});
