import { describe, expect, it } from 'vitest';
import { encodeRuntimedFrame, RuntimedFrameDecoder, sniffMessageId } from './runtimed-frame-decoder.js';
import { RuntimedProtocolError } from './runtimed-protocol-error.js';
import { runtimedChunkBytes, runtimedContinuationBit, runtimedPreamble } from './runtimed-wire-constants.js';

/** The frame headers of an encoded message: [length, continued] for each frame. */
function headers(bytes: Buffer): [number, boolean][] {
  const out: [number, boolean][] = [];
  let offset = 0;
  while (offset < bytes.length) {
    const header = bytes.readUInt32BE(offset);
    const length = header & ~runtimedContinuationBit;
    out.push([length, (header & runtimedContinuationBit) !== 0]);
    offset += 4 + length;
  }
  return out;
}

/** A message whose JSON is exactly `bytes` long: `{"s":"xxx…"}`. */
function messageOf(bytes: number): { s: string } {
  return { s: 'x'.repeat(bytes - '{"s":""}'.length) };
}

describe(encodeRuntimedFrame, () => {
  it('writes a message of at most one chunk as one plain frame (the version 1 encoding)', () => {
    const bytes = encodeRuntimedFrame(messageOf(runtimedChunkBytes));
    expect(headers(bytes)).toEqual([[runtimedChunkBytes, false]]);
  });

  it('splits a message one byte over the chunk size into two frames, the first marked continued', () => {
    expect(headers(encodeRuntimedFrame(messageOf(runtimedChunkBytes + 1)))).toEqual([
      [runtimedChunkBytes, true],
      [1, false],
    ]);
  });

  it('splits a large message into full chunks and a last short one', () => {
    const size = 3 * 1000 + 7;
    expect(headers(encodeRuntimedFrame(messageOf(size), { chunkBytes: 1000 }))).toEqual([
      [1000, true],
      [1000, true],
      [1000, true],
      [7, false],
    ]);
  });

  it('frames the UTF-8 of the JSON byte for byte, multi-byte characters cut across frames included', () => {
    const value = { s: 'é日本✓'.repeat(700), n: [1, 2, 3] };
    const bytes = encodeRuntimedFrame(value, { chunkBytes: 1000 });
    const bodies: Buffer[] = [];
    for (let offset = 0; offset < bytes.length; ) {
      const length = bytes.readUInt32BE(offset) & ~runtimedContinuationBit;
      bodies.push(bytes.subarray(offset + 4, offset + 4 + length));
      offset += 4 + length;
    }
    expect(bodies.length).toBeGreaterThan(5);
    expect(Buffer.concat(bodies).equals(Buffer.from(JSON.stringify(value), 'utf8'))).toBe(true);
    expect(new RuntimedFrameDecoder().push(bytes)).toEqual([{ kind: 'frame', value }]);
  });

  it('refuses a message over the message cap with messageTooLarge naming size and limit', () => {
    let caught: unknown;
    try {
      encodeRuntimedFrame(messageOf(2001), { maxMessageBytes: 2000 });
    } catch (error) {
      caught = error;
    }
    expect(RuntimedProtocolError.is(caught, 'messageTooLarge')).toBe(true);
    expect((caught as RuntimedProtocolError).message).toBe(
      'The message is 2001 bytes, over the 2000-byte limit of one daemon message',
    );
    expect((caught as RuntimedProtocolError).code).toBe('oversized_message');
  });
});

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

  it.each([
    ['exactly one chunk', 1000],
    ['one byte over a chunk', 1001],
    ['exactly two chunks', 2000],
    ['many chunks', 9999],
  ])('reassembles a message of %s, in any split of the byte stream', (_name, size) => {
    const message = messageOf(size);
    const bytes = Buffer.concat([
      encodeRuntimedFrame(message, { chunkBytes: 1000 }),
      encodeRuntimedFrame({ after: true }, { chunkBytes: 1000 }),
    ]);
    for (const step of [1, 7, 1000, 1004, bytes.length]) {
      const decoder = new RuntimedFrameDecoder({ maxFrameBytes: 1000 });
      const frames = [];
      for (let offset = 0; offset < bytes.length; offset += step) {
        frames.push(...decoder.push(bytes.subarray(offset, offset + step)));
      }
      expect(frames).toEqual([
        { kind: 'frame', value: message },
        { kind: 'frame', value: { after: true } },
      ]);
      expect(decoder.pendingBytes).toBe(0);
    }
  });

  it('reassembles several multi-frame messages from reads of any size, holding only what is not yet taken', () => {
    const messages = [messageOf(2500), { type: 'ok', id: 1 }, { s: '✓'.repeat(900) }, messageOf(10)];
    const stream = Buffer.concat(messages.map((message) => encodeRuntimedFrame(message, { chunkBytes: 1000 })));
    for (const readBytes of [1, 3, 7, 1000, 1004, 4096]) {
      const decoder = new RuntimedFrameDecoder();
      const decoded: unknown[] = [];
      for (let offset = 0; offset < stream.length; offset += readBytes) {
        for (const frame of decoder.push(stream.subarray(offset, offset + readBytes))) decoded.push(frame);
        expect(decoder.pendingBytes).toBeLessThan(3000);
      }
      expect(decoded).toEqual(messages.map((value) => ({ kind: 'frame', value })));
      expect(decoder.pendingBytes).toBe(0);
    }
  });

  it('reassembles a multi-byte character cut between two frames', () => {
    const message = { s: 'ü'.repeat(1500) };
    const decoder = new RuntimedFrameDecoder({ maxFrameBytes: 1001 });
    expect(decoder.push(encodeRuntimedFrame(message, { chunkBytes: 1001 }))).toEqual([
      { kind: 'frame', value: message },
    ]);
  });

  it('skips a message over the message cap, reports it with its trailing id, and goes on', () => {
    const decoder = new RuntimedFrameDecoder({ maxFrameBytes: 1000, maxMessageBytes: 2500 });
    const big = { type: 'ok', s: 'x'.repeat(5000), id: 42 };
    const size = JSON.stringify(big).length;
    const bytes = Buffer.concat([
      encodeRuntimedFrame(big, { chunkBytes: 1000 }),
      encodeRuntimedFrame({ type: 'ok', id: 43 }, { chunkBytes: 1000 }),
    ]);
    const frames = [...bytes].reduce<ReturnType<RuntimedFrameDecoder['push']>>(
      (all, byte) => all.concat(decoder.push(Buffer.from([byte]))),
      [],
    );
    expect(frames).toEqual([
      { kind: 'oversized', bytes: size, limit: 2500, id: 42 },
      { kind: 'frame', value: { type: 'ok', id: 43 } },
    ]);
    expect(decoder.pendingBytes).toBe(0);
  });

  it('accepts a message exactly at the message cap and skips one a byte over it', () => {
    const decoder = new RuntimedFrameDecoder({ maxFrameBytes: 1000, maxMessageBytes: 2500 });
    const atCap = messageOf(2500);
    expect(decoder.push(encodeRuntimedFrame(atCap, { chunkBytes: 1000 }))).toEqual([{ kind: 'frame', value: atCap }]);
    expect(decoder.push(encodeRuntimedFrame(messageOf(2501), { chunkBytes: 1000 }))).toEqual([
      { kind: 'oversized', bytes: 2501, limit: 2500 },
    ]);
  });

  it('holds only the first message to its own cap, even when later ones arrive in the same chunk', () => {
    const decoder = new RuntimedFrameDecoder({ maxMessageBytes: 2500, maxFirstMessageBytes: 100 });
    const handshake = { channel: 'control' };
    const request = messageOf(2000);
    expect(decoder.push(Buffer.concat([encodeRuntimedFrame(handshake), encodeRuntimedFrame(request)]))).toEqual([
      { kind: 'frame', value: handshake },
      { kind: 'frame', value: request },
    ]);
    const strict = new RuntimedFrameDecoder({ maxMessageBytes: 2500, maxFirstMessageBytes: 100 });
    expect(strict.push(encodeRuntimedFrame(messageOf(101), { chunkBytes: 40 }))).toEqual([
      { kind: 'oversized', bytes: 101, limit: 100 },
    ]);
    expect(strict.push(encodeRuntimedFrame(request))).toEqual([{ kind: 'frame', value: request }]);
  });

  it('reports a message that is not JSON and keeps decoding the next one', () => {
    const bad = Buffer.from('not json');
    const header = Buffer.alloc(4);
    header.writeUInt32BE(bad.length);
    const decoder = new RuntimedFrameDecoder();
    const frames = decoder.push(Buffer.concat([header, bad, encodeRuntimedFrame({ ok: true })]));
    expect(frames[0]?.kind).toBe('malformed');
    expect(frames[1]).toEqual({ kind: 'frame', value: { ok: true } });
  });

  it('stops for good at a single frame over the frame cap', () => {
    const decoder = new RuntimedFrameDecoder({ maxFrameBytes: 8 });
    expect(decoder.push(encodeRuntimedFrame({ long: 'xxxxxxxxxx' }))).toEqual([
      { kind: 'frame-too-large', bytes: JSON.stringify({ long: 'xxxxxxxxxx' }).length, limit: 8 },
    ]);
    expect(decoder.push(encodeRuntimedFrame(1))).toEqual([]);
  });

  it('builds the 5-byte preamble: magic then version 2', () => {
    expect([...runtimedPreamble()]).toEqual([0x6e, 0x74, 0x72, 0x64, 2]);
  });
});

describe(sniffMessageId, () => {
  it('reads a leading or a trailing top-level numeric id, and nothing else', () => {
    expect(sniffMessageId('{"id":7,"type":"ok","s":"', 'xx"}')).toBe(7);
    expect(sniffMessageId('{"type":"ok","s":"', 'xx","id":12}')).toBe(12);
    expect(sniffMessageId('{"type":"broadcast","cell":{"', 'xx","id":3}}')).toBeUndefined();
    expect(sniffMessageId('{"type":"ok","s":"', 'x\\",\\"id\\":5}"}')).toBeUndefined();
  });
});
