import { describe, expect, it } from 'vitest';
import type {
  AdmissionRequest,
  ConnectionCheck,
  EraConnection,
  ProtocolAdmission,
  ServerDescription,
} from './protocol-admission.js';
import { ProtocolEraGate } from './protocol-era-gate.js';
import { sdkDialect } from './sdk-dialect.js';

const server: ServerDescription = { name: 'nteract', version: '1', capabilities: {} };

/** A scripted era: opens on `open/<era>`, probes on `probe`, rejects `bad/<era>`, refuses the rest when `refuses`. */
function era(name: 'legacy' | 'native', options: { handshake?: boolean; refuses?: boolean } = {}): ProtocolAdmission {
  return {
    id: `test.${name}`,
    specificationVersion: 'v2',
    era: name,
    admit: (request) => {
      if (request.method === `open/${name}`)
        return { kind: 'open', protocolVersion: `${name}-1`, client: { name: 'c' } };
      if (request.method === `bad/${name}`) return { kind: 'reject', code: -32602, message: `bad ${name}` };
      if (request.method === 'probe' && name === 'native') return { kind: 'probe' };
      return { kind: 'pass' };
    },
    probe: () => ({ probedBy: name }),
    open: (_request, opening): EraConnection => ({
      era: name,
      dialect: sdkDialect,
      protocolVersion: opening.protocolVersion,
      client: opening.client,
      handshake: options.handshake ? { hello: name } : undefined,
      readyOn: undefined,
      check: (request: AdmissionRequest): ConnectionCheck =>
        request.method.startsWith('open/')
          ? { kind: 'reject', code: -32600, message: 'already open' }
          : request.method === 'probe'
            ? { kind: 'probe' }
            : { kind: 'serve' },
      shapeResult: (result) => ({ ...result, shapedBy: name }),
      requestParams: (params) => params,
      replay: () => [],
    }),
    refuseUnadmitted: (request) =>
      options.refuses ? { kind: 'reject', code: -32000, message: `${name} refuses ${request.method}` } : undefined,
  };
}

describe(ProtocolEraGate, () => {
  it('asks a server description function again for every probe, opening and shaping, naming the era that presents it', () => {
    let current: ServerDescription = server;
    const seen: string[] = [];
    const asked: string[] = [];
    const native = era('native');
    const legacy = era('legacy', { handshake: true });
    const recording: ProtocolAdmission = {
      ...native,
      probe: (request, described) => {
        seen.push(described.name);
        return native.probe(request, described);
      },
    };
    const gate = new ProtocolEraGate([legacy, recording], (name) => {
      asked.push(name);
      return current;
    });
    gate.receive({ method: 'probe' });
    current = { ...server, name: 'child' };
    gate.receive({ method: 'probe' });
    expect(seen).toEqual(['nteract', 'child']);
    gate.receive({ method: 'open/legacy' });
    gate.shapeResult({});
    expect(asked).toEqual(['native', 'native', 'legacy', 'legacy']);
  });

  it('refuses everything "method not found" with no era loaded', () => {
    const gate = new ProtocolEraGate([], server);
    expect(gate.receive({ method: 'initialize' })).toMatchObject({ kind: 'refuse', error: { code: -32601 } });
    expect(gate.connection).toBeUndefined();
    expect(gate.receive({ method: `m${'x'.repeat(150_000)}` })).toMatchObject({
      error: { message: `Method not found: "m${'x'.repeat(79)}…" (no loaded protocol era serves it)` },
    });
  });

  it('locks nothing on a probe or a rejected first request; the first valid one opens its era for good', () => {
    const gate = new ProtocolEraGate([era('legacy', { handshake: true }), era('native')], server);
    expect(gate.receive({ method: 'probe' })).toEqual({ kind: 'answer', result: { probedBy: 'native' } });
    expect(gate.receive({ method: 'bad/legacy' })).toMatchObject({ kind: 'refuse', error: { message: 'bad legacy' } });
    expect(gate.connection).toBeUndefined();
    expect(gate.shapeResult({ a: 1 })).toEqual({ a: 1 });
    const opened = gate.receive({ method: 'open/legacy' });
    expect(opened).toMatchObject({ kind: 'answer', result: { hello: 'legacy' }, opened: { era: 'legacy' } });
    // The era stays: the other era's opening request is this connection's to judge.
    expect(gate.receive({ method: 'open/native' })).toMatchObject({ kind: 'refuse', error: { code: -32600 } });
    expect(gate.receive({ method: 'tools/list' })).toEqual({ kind: 'serve' });
    expect(gate.connection?.era).toBe('legacy');
    expect(gate.shapeResult({ a: 1 })).toEqual({ a: 1, shapedBy: 'legacy' });
  });

  it('serves the opening request of an era without a handshake', () => {
    const gate = new ProtocolEraGate([era('legacy', { handshake: true }), era('native')], server);
    expect(gate.receive({ method: 'open/native' })).toMatchObject({ kind: 'serve', opened: { era: 'native' } });
  });

  it('asks the eras in order to refuse a request none admitted', () => {
    const gate = new ProtocolEraGate([era('legacy'), era('native', { refuses: true })], server);
    expect(gate.receive({ method: 'tools/list' })).toEqual({
      kind: 'refuse',
      error: { code: -32000, message: 'native refuses tools/list' },
    });
  });
});

describe('ProtocolEraGate with a throwing era', () => {
  it('goes on without it, answers what it fails on -32603, and reports each fault', () => {
    const faults: string[] = [];
    const broken: ProtocolAdmission = {
      ...era('native'),
      id: 'test.broken',
      admit: () => {
        throw new Error('admit broke');
      },
      refuseUnadmitted: () => {
        throw new Error('refuse broke');
      },
    };
    const gate = new ProtocolEraGate([broken, era('legacy', { handshake: true })], server, {
      onFault: (id, error) => faults.push(`${id}: ${(error as Error).message}`),
    });
    expect(gate.receive({ method: 'tools/list' })).toMatchObject({ kind: 'refuse', error: { code: -32601 } });
    expect(gate.receive({ method: 'open/legacy' })).toMatchObject({ kind: 'answer', opened: { era: 'legacy' } });
    expect(faults).toEqual(['test.broken: admit broke', 'test.broken: refuse broke', 'test.broken: admit broke']);

    const failing = era('native');
    const opensBadly = new ProtocolEraGate(
      [
        {
          ...failing,
          open: () => {
            throw new Error('open broke');
          },
        },
      ],
      server,
    );
    expect(opensBadly.receive({ method: 'open/native' })).toMatchObject({ kind: 'refuse', error: { code: -32603 } });
    expect(opensBadly.connection).toBeUndefined();
  });
});
