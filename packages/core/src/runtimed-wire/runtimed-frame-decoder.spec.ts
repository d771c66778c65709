import { describe, expect, it } from 'vitest';
import { encodeRuntimedFrame, RuntimedFrameDecoder } from './runtimed-frame-decoder.js';
import { runtimedPreamble } from './runtimed-wire-constants.js';

describe(RuntimedFrameDecoder, () => {
  it('reassembles frames split across chunks, byte by byte', () => {
    const bytes = Buffer.concat([encodeRuntimedFrame({ a: 1 }), encodeRuntimedFrame({ b: 'ü' })]);
    const decoder = new RuntimedFrameDecoder();
    const frames = [...bytes].flatMap((byte) => decoder.push(Buffer.from([byte])));
    expect(frames).toEqual([
      { kind: 'frame', value: { a: 1 } },
      { kind: 'frame', value: { b: 'ü' } },
    ]);
    expect(decoder.pendingBytes).toBe(0);
  });

  it('reports a frame that is not JSON and keeps decoding the next one', () => {
    const bad = Buffer.from('not json');
    const header = Buffer.alloc(4);
    header.writeUInt32BE(bad.length);
    const decoder = new RuntimedFrameDecoder();
    const frames = decoder.push(Buffer.concat([header, bad, encodeRuntimedFrame({ ok: true })]));
    expect(frames[0]?.kind).toBe('malformed');
    expect(frames[1]).toEqual({ kind: 'frame', value: { ok: true } });
  });

  it('stops for good at a frame over the limit', () => {
    const decoder = new RuntimedFrameDecoder(8);
    expect(decoder.push(encodeRuntimedFrame({ long: 'xxxxxxxxxx' }))).toEqual([
      { kind: 'oversized', bytes: JSON.stringify({ long: 'xxxxxxxxxx' }).length, limit: 8 },
    ]);
    expect(decoder.push(encodeRuntimedFrame(1))).toEqual([]);
  });

  it('builds the 5-byte preamble: magic then version', () => {
    expect([...runtimedPreamble()]).toEqual([0x6e, 0x74, 0x72, 0x64, 1]);
  });
});
