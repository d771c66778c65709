import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { TurnWriter, WriteTurn } from './turn-writer.js';

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

  it('in an open turn, holds writes until the outermost end: a lone write as it is, several as one writev', () => {
    const { stream, calls } = recordingStream();
    const turn = new WriteTurn();
    const writer = new TurnWriter(stream, turn);
    turn.begin();
    writer.write('lone\n');
    expect(calls).toEqual([]);
    turn.end();
    expect(calls).toEqual([['lone\n']]);
    turn.begin();
    writer.write('a\n');
    turn.begin();
    writer.write(Buffer.from('b\n'));
    turn.end();
    writer.write('c\n');
    expect(calls).toHaveLength(1);
    turn.end();
    expect(calls).toEqual([['lone\n'], ['a\n', 'b\n', 'c\n']]);
  });

  it('sends the writes of every writer sharing a turn when it ends, each to its own stream, text after text as one write', () => {
    const one = recordingStream();
    const two = recordingStream();
    const turn = new WriteTurn();
    const first = new TurnWriter(one.stream, turn);
    const second = new TurnWriter(two.stream, turn);
    turn.begin();
    first.write('to one\n');
    second.write('to two\n');
    second.write('to two again\n');
    turn.end();
    expect(one.calls).toEqual([['to one\n']]);
    // Text after text leaves as one string (one write, no writev).
    expect(two.calls).toEqual([['to two\nto two again\n']]);
  });

  it('in an open turn, sends bytes after bytes as one buffer, and large ones as they are', () => {
    const { stream, calls } = recordingStream();
    const turn = new WriteTurn();
    const writer = new TurnWriter(stream, turn);
    turn.begin();
    writer.write(Buffer.from('a\n'));
    writer.write(Buffer.from('b\n'));
    writer.write(Buffer.from('c\n'));
    turn.end();
    expect(calls).toEqual([['a\nb\nc\n']]);
    const large = 'x'.repeat(40 * 1024);
    turn.begin();
    writer.write(Buffer.from(large));
    writer.write(Buffer.from(large));
    turn.end();
    expect(calls.slice(1)).toEqual([[large, large]]);
  });

  it('never joins a turn into bytes a write still queued holds (a slow pipe)', async () => {
    const received: Buffer[] = [];
    const done: (() => void)[] = [];
    // A stream that holds each chunk until it is told to finish: the write stays queued.
    const stream = new Writable({
      write(chunk: Buffer, _encoding, callback) {
        received.push(chunk);
        done.push(callback);
      },
    });
    const turn = new WriteTurn();
    const writer = new TurnWriter(stream, turn);
    for (const pair of [
      ['a\n', 'b\n'],
      ['c\n', 'd\n'],
    ]) {
      turn.begin();
      for (const text of pair) writer.write(Buffer.from(text));
      turn.end();
    }
    while (done.length > 0) {
      done.shift()?.();
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(received.map((chunk) => chunk.toString())).toEqual(['a\nb\n', 'c\nd\n']);
  });

  it('keeps order across a write before a turn opens in the same tick and writes inside it', async () => {
    const { stream, calls } = recordingStream();
    const turn = new WriteTurn();
    const writer = new TurnWriter(stream, turn);
    writer.write('before\n');
    turn.begin();
    writer.write('inside\n');
    turn.end();
    await new Promise((resolve) => process.nextTick(resolve));
    expect(calls.flat()).toEqual(['before\n', 'inside\n']);
  });
});

describe(WriteTurn, () => {
  it('runs the work put after its writes once they reached their streams, in order (work added by work at once)', () => {
    const { stream, calls } = recordingStream();
    const turn = new WriteTurn();
    const writer = new TurnWriter(stream, turn);
    const seen: string[] = [];
    turn.begin();
    writer.write('answer\n');
    turn.afterWrites(() => {
      seen.push(`first after ${calls.length} write(s)`);
      turn.afterWrites(() => seen.push('added by the first'));
    });
    turn.afterWrites(() => seen.push('second'));
    turn.begin();
    turn.end();
    expect(seen).toEqual([]);
    turn.end();
    expect(calls).toEqual([['answer\n']]);
    expect(seen).toEqual(['first after 1 write(s)', 'added by the first', 'second']);
  });

  it('runs work at once when no turn is open', () => {
    const turn = new WriteTurn();
    const seen: string[] = [];
    turn.afterWrites(() => seen.push('now'));
    expect(seen).toEqual(['now']);
  });
});
