import { describe, expect, it } from 'vitest';
import { KernelHistory, lostStateJson } from './kernel-history.js';

const run = (cellId: string, source: string) => ({ cellId, source });

describe(KernelHistory, () => {
  it('a run that carries a kernel notice makes the runs before it the lost kernel’s, each cell once in the order of its last run', () => {
    const history = new KernelHistory();
    expect(history.ran('nb', run('a', 'x = 1'), undefined, true)).toBeUndefined();
    history.ran('nb', run('b', 'import os'), undefined, true);
    history.ran('nb', run('a', 'x = 2'), undefined, true);
    const lost = history.ran('nb', run('c', 'print(x)'), 'The kernel died', true);
    expect(lost?.reason).toBe('The kernel died');
    expect(lost?.runs.map((entry) => entry.cellId)).toEqual(['b', 'a']);
    expect(history.lost('nb')).toBe(lost);
    expect(history.lost('other')).toBeUndefined();
    // The next loss takes what ran in the new kernel.
    expect(history.ran('nb', undefined, 'again', true)?.runs.map((entry) => entry.cellId)).toEqual(['c']);
  });

  it('a replacement read from the handle’s pending notice is not counted twice when an execution carries that notice', () => {
    const history = new KernelHistory();
    history.ran('nb', run('a', 'x = 1'), undefined, true);
    const lost = history.replaced('nb', 'culled', true, true);
    expect(lost?.runs.map((entry) => entry.cellId)).toEqual(['a']);
    expect(history.replaced('nb', 'culled', true, true)).toBe(lost);
    history.ran('nb', run('r', 'x = 1'), undefined, true);
    // The execution that carries the notice: still the same lost kernel, and it is said with it.
    expect(history.ran('nb', run('b', 'y = x'), 'culled', true)).toBe(lost);
    expect(history.replaced('nb', 'restart_kernel', true, false)?.runs.map((entry) => entry.cellId)).toEqual([
      'r',
      'b',
    ]);
  });

  it('a replacement with nothing run since keeps what the last one lost', () => {
    const history = new KernelHistory();
    history.ran('nb', run('a', 'x = 1'), undefined, true);
    const lost = history.replaced('nb', 'first', true, false);
    expect(history.replaced('nb', 'second', true, false)).toBe(lost);
  });
});

describe(lostStateJson, () => {
  it('names what Python cells defined, and says which cells ran for other languages', () => {
    const python = lostStateJson({
      reason: 'r',
      python: true,
      runs: [run('a', 'import numpy as np\nx = 1\ndef f(): pass')],
    });
    expect(python.lost_state).toMatchObject({
      variables: ['x'],
      functions: ['f'],
      imports: ['numpy as np'],
      cells: ['a'],
    });
    expect((python.lost_state as { summary: string }).summary).toBe(
      'Gone with the old kernel (defined by the cells this agent ran): variables x; functions f; imports numpy as np. restore_state() runs that cell again, in order (a).',
    );
    const r = lostStateJson({ reason: 'r', python: false, runs: [run('a', 'x <- 1'), run('b', 'y <- 2')] });
    expect((r.lost_state as { summary: string }).summary).toContain('whatever cells a, b had defined');
    expect(lostStateJson(undefined)).toEqual({});
  });
});
