import { runtimedMagic, runtimedProtocolVersion } from '@nteract-mcp/runtimed-protocol';
import { describe, expect, it } from 'vitest';
import { materializeSession, type RuntimedFuzzSession } from './runtimed-fuzz-session.js';

const context = { workDir: '/tmp/work', known: { cell: [], execution: [], notebook: [] } };
const request = (
  type: string,
  extra: Partial<Extract<RuntimedFuzzSession['frames'][number], { kind: 'request' }>> = {},
) => ({
  kind: 'request' as const,
  control: { type, fields: {} },
  notebook: { type: 'get_cells', fields: {} },
  mutations: [],
  retype: undefined,
  idSlot: 0,
  ...extra,
});
const session = (overrides: Partial<RuntimedFuzzSession>): RuntimedFuzzSession => ({
  preamble: { op: 'valid' },
  handshake: { seed: 'control', value: { channel: 'control' }, mutated: false },
  frames: [],
  split: [],
  ...overrides,
});

describe('materializeSession', () => {
  it('expects every request of an intact control connection answered, then the sentinel', () => {
    const { expectation, writes } = materializeSession(
      session({ frames: [request('ping'), request('list_rooms', { idSlot: 1 })] }),
      context,
    );
    expect(Buffer.concat(writes).subarray(0, 5)).toEqual(Buffer.from([...runtimedMagic, runtimedProtocolVersion]));
    expect(expectation).toMatchObject({ handshake: 'accept', channel: 'control', end: 'open', sentinelId: 1_000_000 });
    expect([...expectation.requests.keys()]).toEqual(['1', '2']);
  });

  it('expects the refusal the wire contract names for a broken preamble, channel or frame', () => {
    const refused = (overrides: Partial<RuntimedFuzzSession>) =>
      materializeSession(session(overrides), context).expectation;
    expect(refused({ preamble: { op: 'wrong-version', version: 9 } })).toMatchObject({
      handshake: 'refuse',
      closeCodes: ['unsupported_protocol'],
    });
    expect(refused({ preamble: { op: 'wrong-magic', at: 0, byte: 0 } })).toMatchObject({
      closeCodes: ['bad_preamble'],
    });
    expect(refused({ handshake: { seed: 'control', value: { channel: 'x' }, mutated: true } })).toMatchObject({
      closeCodes: ['unknown_channel'],
    });
    expect(refused({ frames: [request('ping'), request('no_such', { idSlot: 1 })] })).toMatchObject({
      end: 'closed',
      closeCodes: ['unknown_request'],
      sentinelId: undefined,
    });
    expect(refused({ frames: [{ kind: 'not-json', text: 'x' }] })).toMatchObject({
      end: 'closed',
      closeCodes: ['bad_frame'],
    });
    expect(refused({ frames: [{ kind: 'oversized', claimed: 2 ** 30 }] })).toMatchObject({
      closeCodes: ['oversized_frame'],
    });
    // A request sent as one frame over the frame cap (1 MiB) breaks the stream, whatever it holds.
    const huge = { kind: 'json' as const, value: ['x'.repeat(1024 * 1024 + 1)] };
    expect(refused({ frames: [huge, request('ping')] })).toMatchObject({
      end: 'closed',
      closeCodes: ['oversized_frame'],
    });
    expect(refused({ frames: [{ kind: 'bytes', bytes: new Uint8Array([1]) }] })).toMatchObject({ end: 'unknown' });
  });

  it('sends the request of the handshake channel, and never shutdown_daemon', () => {
    const { lines } = materializeSession(
      session({
        handshake: {
          seed: 'open',
          value: { channel: 'notebook', mode: 'open', path: '/tmp/work/a.ipynb', peer_label: 'p' },
          mutated: false,
        },
        frames: [request('ping')],
      }),
      context,
    );
    expect(lines.join('\n')).toContain('"type":"get_cells"');
    expect(lines.join('\n')).not.toContain('shutdown_daemon');
  });
});
