import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { TurnWriter } from './turn-writer.js';

/** A stream that records each system-call-sized write it is handed: one per `write`, one per `writev`. */
function recordingStream() {
  const calls: string[][] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      calls.push([chunk.toString()]);
      done();
    },
    writev(chunks, done) {
      calls.push(chunks.map(({ chunk }) => (chunk as Buffer).toString()));
      done();
    },
  });
  return { stream, calls };
}

describe(TurnWriter, () => {
  it('hands what one turn wrote to the stream in one go, in order, and the next turn on its own', async () => {
    const { stream, calls } = recordingStream();
    const writer = new TurnWriter(stream);
    writer.write('a\n');
    writer.write(Buffer.from('b\n'));
    writer.write('c\n');
    expect(calls).toEqual([]);
    await new Promise((resolve) => process.nextTick(resolve));
    expect(calls).toEqual([['a\n', 'b\n', 'c\n']]);
    writer.write('d\n');
    await new Promise((resolve) => setImmediate(resolve));
    expect(calls).toEqual([['a\n', 'b\n', 'c\n'], ['d\n']]);
  });

  it('flush sends what is held at once (before an exit)', () => {
    const { stream, calls } = recordingStream();
    const writer = new TurnWriter(stream);
    writer.write('last answer\n');
    writer.flush();
    expect(calls).toEqual([['last answer\n']]);
    writer.flush();
    expect(calls).toHaveLength(1);
  });
});
