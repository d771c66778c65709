import { afterEach, describe, expect, it } from 'vitest';
import type { FakeNotebookHandle } from '../../testing/fake-notebook-handle.js';
import {
  type ChildServerTestHarness,
  startChildServerTestHarness,
  toolError,
} from '../../testing/start-child-server-test-harness.js';
import { replaceMatches } from './create-edit-tools.js';

describe('edit tools', () => {
  let harness: ChildServerTestHarness;
  afterEach(async () => {
    await harness.close();
  });

  async function withNotebook(): Promise<FakeNotebookHandle> {
    harness = await startChildServerTestHarness();
    return harness.createNotebook();
  }

  const sources = async () =>
    ((await harness.callJson('get_all_cells', { format: 'json' })).cells as { source: string }[]).map(
      (cell) => cell.source,
    );

  it('replace_in_cell: literal and regex, every match or the first count, with the number replaced', async () => {
    await withNotebook();
    const { cell_id } = await harness.callJson('create_cell', { source: 'a = 1\nb = a + a\nprint(a.b)' });
    // Literal: `.` and `$` mean themselves.
    expect(await harness.callJson('replace_in_cell', { cell_id, find: 'a.b', replace: '$x' })).toMatchObject({
      replacements: 1,
      source: 'a = 1\nb = a + a\nprint($x)',
    });
    expect(await harness.callJson('replace_in_cell', { cell_id, find: 'a', replace: 'alpha', count: 2 })).toMatchObject(
      {
        replacements: 2,
        source: 'alpha = 1\nb = alpha + a\nprint($x)',
      },
    );
    // A regular expression with groups.
    expect(
      await harness.callJson('replace_in_cell', { cell_id, find: '(\\w+) = (\\d)', replace: '$1 = $2$2', regex: true }),
    ).toMatchObject({ replacements: 1, source: 'alpha = 11\nb = alpha + a\nprint($x)' });
    expect(await sources()).toEqual(['alpha = 11\nb = alpha + a\nprint($x)']);
  });

  it('replace_in_cell: nothing matched, a bad pattern, count 0 and an unknown cell are errors that change nothing', async () => {
    await withNotebook();
    const { cell_id } = await harness.callJson('create_cell', { source: 'x = 1' });
    expect(await toolError(harness.call('replace_in_cell', { cell_id, find: 'y', replace: 'z' }))).toBe(
      `No match for the text "y" in cell ${cell_id}; nothing was changed. Read the cell with get_cell to see its source.`,
    );
    expect(await toolError(harness.call('replace_in_cell', { cell_id, find: '(', replace: '', regex: true }))).toMatch(
      /^Invalid regular expression "\(": /,
    );
    expect(await toolError(harness.call('replace_in_cell', { cell_id, find: 'x', replace: 'y', count: 0 }))).toContain(
      'count must be at least 1',
    );
    expect(await toolError(harness.call('replace_in_cell', { cell_id: 'nope', find: 'x', replace: 'y' }))).toBe(
      'Cell not found: nope',
    );
    expect(await sources()).toEqual(['x = 1']);
  });

  it('replace_in_cell applies once under a replayed idempotency key', async () => {
    await withNotebook();
    const { cell_id } = await harness.callJson('create_cell', { source: 'n' });
    await harness.callJson('replace_in_cell', { cell_id, find: 'n', replace: 'nn' }, 'key-1');
    await harness.call('replace_in_cell', { cell_id, find: 'n', replace: 'nn' }, { idempotencyKey: 'key-1' });
    expect(await sources()).toEqual(['nn']);
  });

  it('clear_outputs: one cell, or every code cell with outputs; an unknown cell is an error', async () => {
    const handle = await withNotebook();
    const one = (await harness.callJson('create_cell', { source: 'print(1)', and_run: true })).cell_id as string;
    const two = (await harness.callJson('create_cell', { source: 'print(2)', and_run: true })).cell_id as string;
    await harness.callJson('create_cell', { source: '# notes', cell_type: 'markdown' });
    expect(await harness.callJson('clear_outputs', { cell_id: one })).toEqual({ cleared: [one] });
    expect((await handle.getCell(one)).outputs).toEqual([]);
    expect((await handle.getCell(two)).outputs).not.toEqual([]);
    expect(await harness.callJson('clear_outputs')).toEqual({ cleared: [two] });
    expect((await handle.getCell(two)).outputs).toEqual([]);
    expect((await handle.getCell(two)).executionCount).toBeNull();
    expect(await toolError(harness.call('clear_outputs', { cell_id: 'nope' }))).toBe('Cell not found: nope');
  });

  it('create_cell inserts after or before a given cell; an unknown anchor or two positions are errors', async () => {
    await withNotebook();
    const first = (await harness.callJson('create_cell', { source: 'first' })).cell_id as string;
    const last = (await harness.callJson('create_cell', { source: 'last' })).cell_id as string;
    await harness.callJson('create_cell', { source: 'middle', after_cell_id: first });
    await harness.callJson('create_cell', { source: 'top', before_cell_id: first });
    await harness.callJson('create_cell', { source: 'end', after_cell_id: last });
    expect(await sources()).toEqual(['top', 'first', 'middle', 'last', 'end']);
    expect(await toolError(harness.call('create_cell', { source: 'x', after_cell_id: 'nope' }))).toBe(
      'Cell not found: nope',
    );
    expect(await toolError(harness.call('create_cell', { source: 'x', index: 0, before_cell_id: first }))).toBe(
      'Give at most one of index, after_cell_id and before_cell_id.',
    );
    expect(await sources()).toHaveLength(5);
  });

  it('run_code runs in the kernel and returns the outputs, adding no cell', async () => {
    const handle = await withNotebook();
    await harness.callJson('create_cell', { source: 'kept' });
    const run = await harness.callJson('run_code', { code: 'print(40 + 2)' });
    expect(run).toEqual({
      notebook_id: handle.notebookId,
      status: 'ok',
      outputs: [{ output_type: 'stream', name: 'stdout', text: 'out: print(40 + 2)\n' }],
    });
    expect(handle.scratchRuns).toEqual(['print(40 + 2)']);
    expect(await sources()).toEqual(['kept']);
    const failed = await harness.callJson('run_code', { code: 'raise Boom' });
    expect(failed).toMatchObject({ status: 'error', outputs: [{ output_type: 'error', ename: 'RuntimeError' }] });
  });

  it('run_code says when it ran in a new kernel (the state of earlier runs is gone)', async () => {
    const handle = await withNotebook();
    handle.nextKernelNotice = 'The kernel died: this code runs in a new kernel';
    const run = await harness.callJson('run_code', { code: 'print(x)' });
    expect(run.kernel_notice).toBe('The kernel died: this code runs in a new kernel');
    expect((await harness.callJson('run_code', { code: 'print(x)' })).kernel_notice).toBeUndefined();
  });
});

describe(replaceMatches, () => {
  it('expands templates only in regex mode, as String.replace would', () => {
    expect(replaceMatches('ab ab', /(a)(b)/g, '$2$1 $& $$ $<none> $9', undefined, true)).toEqual({
      source: 'ba ab $ $<none> $9 ba ab $ $<none> $9',
      replacements: 2,
    });
    expect(replaceMatches('x-y', /(?<left>\w)-(?<right>\w)/g, '$<right>-$<left>', undefined, true).source).toBe('y-x');
    expect(replaceMatches('a$1', /a/g, '$1', undefined, false).source).toBe('$1$1');
    expect(replaceMatches('aaa', /a/g, 'b', 2, false)).toEqual({ source: 'bba', replacements: 2 });
  });
});
