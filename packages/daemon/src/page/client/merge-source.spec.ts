import { Text } from '@codemirror/state';
import { describe, expect, it } from 'vitest';
import { changesBetween, mergeSource } from './merge-source.js';

/** What the editor shows once the merge is applied to its text. */
function merged(base: string, local: string, remote: string): string {
  return mergeSource(base, local, remote)
    .changes.apply(Text.of(local.split('\n')))
    .toString();
}

describe('mergeSource', () => {
  it('turns a text into another with the changes of their diff', () => {
    for (const [from, to] of [
      ['c = 1', 'c = 999'],
      ['', 'x = 1\ny = 2'],
      ['x = 1\ny = 2', ''],
      ['a\nb\nc', 'a\nB\nc\nd'],
      ['emoji 🙂 here', 'emoji 🙃 there'],
    ] as const) {
      expect(
        changesBetween(from, to)
          .apply(Text.of(from.split('\n')))
          .toString(),
      ).toBe(to);
    }
  });

  it('keeps both peers’ edits of one line and of different lines', () => {
    // The person appends to the line while the agent rewrites its value.
    expect(merged('c = 1', 'c = 10', 'c = 999')).toBe('c = 9990');
    // Different lines: each keeps its own.
    expect(merged('a = 1\nb = 2\nc = 3', 'a = 1  # Ada\nb = 2\nc = 3', 'a = 1\nb = 2\nc = 30')).toBe(
      'a = 1  # Ada\nb = 2\nc = 30',
    );
    // The agent's whole-cell write that touches two distant places keeps the person's text in between.
    expect(merged('x = 1\ny = 2\nz = 3', 'x = 1\ny = 2 + 40\nz = 3', 'x = 100\ny = 2\nz = 300')).toBe(
      'x = 100\ny = 2 + 40\nz = 300',
    );
  });

  it('puts the room’s text first where both inserted at one place, and keeps a deletion of what the person did not touch', () => {
    expect(merged('f()', 'f(a)', 'f(b)')).toBe('f(ba)');
    expect(merged('keep\ndrop\nkeep', 'keep!\ndrop\nkeep', 'keep\nkeep')).toBe('keep!\nkeep');
  });

  it('is the room’s text when the person changed nothing, and changes nothing when the room did not', () => {
    expect(merged('a', 'a', 'b')).toBe('b');
    const still = mergeSource('a', 'ab', 'a');
    expect(still.changes.empty).toBe(true);
    expect(still.changedTo).toBeUndefined();
  });

  it('says where the room’s change ends in the merged text', () => {
    const { changedTo } = mergeSource('one\ntwo', 'zero\none\ntwo', 'one\ntwo\nthree');
    expect(changedTo).toBe('zero\none\ntwo\nthree'.length);
  });
});
