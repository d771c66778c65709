import { describe, expect, it } from 'vitest';
import type { NbformatOutput } from './nbformat-output.js';
import { type OutputChange, OutputCollector } from './output-collector.js';

const stdout = (text: string) => ({ name: 'stdout', text });

/** The outputs among some changes (what a listener would have been handed). */
function outputsOf(changes: readonly OutputChange[]): NbformatOutput[] {
  return changes.flatMap((change) => (change.kind === 'output' ? [change.output] : []));
}

describe(OutputCollector, () => {
  it('merges consecutive streams of the same name, not across names or other outputs', () => {
    const collector = new OutputCollector();
    collector.apply('stream', stdout('a\n'));
    const [change] = collector.apply('stream', stdout('b\n'));
    collector.apply('stream', { name: 'stderr', text: 'oops\n' });
    collector.apply('stream', stdout('c\n'));
    collector.apply('display_data', { data: { 'text/plain': 'x' }, metadata: {} });
    collector.apply('stream', stdout('d\n'));
    // What the merge appended is told beside the whole stream.
    expect(change).toEqual({
      kind: 'output',
      index: 0,
      output: { output_type: 'stream', name: 'stdout', text: 'a\nb\n' },
      appended: { keep: 2, text: 'b\n' },
    });
    expect(collector.snapshot()).toEqual([
      { output_type: 'stream', name: 'stdout', text: 'a\nb\n' },
      { output_type: 'stream', name: 'stderr', text: 'oops\n' },
      { output_type: 'stream', name: 'stdout', text: 'c\n' },
      { output_type: 'display_data', data: { 'text/plain': 'x' }, metadata: {} },
      { output_type: 'stream', name: 'stdout', text: 'd\n' },
    ]);
  });

  it('tells each merge as the text kept and the text added, which rebuild the stream', () => {
    const collector = new OutputCollector();
    let rebuilt = '';
    for (const chunk of ['epoch 1\n', ' 10%\r', ' 50%\r', '100%', '\r\n', 'done\b\b\b\bDONE\n', 'tail']) {
      for (const change of collector.apply('stream', stdout(chunk))) {
        if (change.kind !== 'output') continue;
        rebuilt = change.appended
          ? rebuilt.slice(0, change.appended.keep) + change.appended.text
          : String(change.output.text);
        expect(rebuilt).toBe(change.output.text);
      }
    }
    expect(rebuilt).toBe('epoch 1\n100%\nDONE\ntail');
    // A plain line keeps everything before it; a progress update rewrites only its own line.
    const plain = collector.apply('stream', stdout(' more\n'))[0];
    expect(plain).toMatchObject({ appended: { keep: rebuilt.length, text: ' more\n' } });
    const bar = collector.apply('stream', stdout('90%\r'))[0];
    expect(bar).toMatchObject({ appended: { keep: rebuilt.length + 6, text: '90%\r' } });
  });

  it('applies backspaces within a line, never across a newline', () => {
    const collector = new OutputCollector();
    collector.apply('stream', stdout('ab\n\b\bc'));
    collector.apply('stream', stdout('d\be'));
    expect(collector.snapshot()).toEqual([{ output_type: 'stream', name: 'stdout', text: 'ab\nce' }]);
  });

  describe('carriage returns, applied as a terminal shows them', () => {
    const textAfter = (...chunks: string[]) => {
      const collector = new OutputCollector();
      for (const chunk of chunks) collector.apply('stream', stdout(chunk));
      return collector.snapshot().map((output) => output.text);
    };

    it('overwrites the line from its start, keeping what the shorter text does not cover', () => {
      expect(textAfter('hello\rab')).toEqual(['abllo']);
      expect(textAfter('first\nsecond\rSE\nthird')).toEqual(['first\nSEcond\nthird']);
    });

    it('keeps a trailing \\r so the next chunk overwrites that line (a progress bar keeps its last state)', () => {
      const collector = new OutputCollector();
      collector.apply('stream', stdout(' 10%\r'));
      collector.apply('stream', stdout(' 50%\r'));
      expect(collector.snapshot()[0]?.text).toBe(' 50%\r');
      collector.apply('stream', stdout('100%\ndone\r\n'));
      expect(collector.snapshot()[0]?.text).toBe('100%\ndone\n');
    });

    it('treats \\r\\n as a newline, also when split across chunks', () => {
      expect(textAfter('a\r\nb\r\n')).toEqual(['a\nb\n']);
      expect(textAfter('a\r', '\nb')).toEqual(['a\nb']);
    });

    it('never reaches back past a newline, nor into another stream', () => {
      expect(textAfter('line one\n', '\rX')).toEqual(['line one\nX']);
      const collector = new OutputCollector();
      collector.apply('stream', stdout('loading\r'));
      collector.apply('stream', { name: 'stderr', text: 'warn\n' });
      collector.apply('stream', stdout('done'));
      expect(collector.snapshot().map((output) => output.text)).toEqual(['loading\r', 'warn\n', 'done']);
    });

    it('leaves text without \\r as it came', () => {
      expect(textAfter('a', 'b\n', '\tc')).toEqual(['ab\n\tc']);
    });
  });

  describe('outputs handed out are never changed afterwards', () => {
    it('a merged stream is a new object; earlier changes and snapshots keep their text', () => {
      const collector = new OutputCollector();
      const [first] = outputsOf(collector.apply('stream', stdout('a')));
      const before = collector.snapshot();
      const [merged] = outputsOf(collector.apply('stream', stdout('b\r')));
      const [again] = outputsOf(collector.apply('stream', stdout('c')));
      expect(first).toEqual({ output_type: 'stream', name: 'stdout', text: 'a' });
      expect(before).toEqual([{ output_type: 'stream', name: 'stdout', text: 'a' }]);
      expect(merged).toEqual({ output_type: 'stream', name: 'stdout', text: 'ab\r' });
      expect(again).toEqual({ output_type: 'stream', name: 'stdout', text: 'cb' });
      expect(merged).not.toBe(first);
    });

    it('an updated display is a new object; the one handed out keeps its data', () => {
      const collector = new OutputCollector();
      const [shown] = outputsOf(
        collector.apply('display_data', {
          data: { 'text/plain': 'old' },
          metadata: {},
          transient: { display_id: 'd' },
        }),
      );
      const before = collector.snapshot();
      collector.apply('update_display_data', {
        data: { 'text/plain': 'new' },
        metadata: {},
        transient: { display_id: 'd' },
      });
      expect(shown?.data).toEqual({ 'text/plain': 'old' });
      expect(before[0]?.data).toEqual({ 'text/plain': 'old' });
      expect(collector.snapshot()[0]?.data).toEqual({ 'text/plain': 'new' });
    });

    it('a clear leaves an earlier snapshot as it was', () => {
      const collector = new OutputCollector();
      collector.apply('stream', stdout('a'));
      const before = collector.snapshot();
      collector.apply('clear_output', { wait: false });
      expect(before).toHaveLength(1);
    });
  });

  it('builds display_data, execute_result and error outputs in nbformat shape', () => {
    const collector = new OutputCollector();
    collector.apply('execute_input', { code: 'x', execution_count: 3 });
    collector.apply('display_data', { data: { 'text/plain': "'hi'" }, metadata: {}, transient: {} });
    collector.apply('execute_result', { data: { 'text/plain': '41' }, metadata: {}, execution_count: 3 });
    collector.apply('error', { ename: 'NameError', evalue: "name 'y' is not defined", traceback: ['tb'] });
    expect(collector.executionCount).toBe(3);
    expect(collector.snapshot()).toEqual([
      { output_type: 'display_data', data: { 'text/plain': "'hi'" }, metadata: {} },
      { output_type: 'execute_result', data: { 'text/plain': '41' }, metadata: {}, execution_count: 3 },
      { output_type: 'error', ename: 'NameError', evalue: "name 'y' is not defined", traceback: ['tb'] },
    ]);
  });

  it('fills what a message leaves out so the output stays valid nbformat', () => {
    const collector = new OutputCollector();
    collector.apply('stream', { text: 'x' });
    collector.apply('error', {});
    collector.apply('execute_result', { data: { 'text/plain': '1' } });
    expect(collector.snapshot()).toEqual([
      { output_type: 'stream', name: 'stdout', text: 'x' },
      { output_type: 'error', ename: '', evalue: '', traceback: [] },
      { output_type: 'execute_result', data: { 'text/plain': '1' }, metadata: {}, execution_count: null },
    ]);
  });

  it('clears at once, or with wait=true just before the next output (not on a display update)', () => {
    const collector = new OutputCollector();
    collector.apply('display_data', { data: { 'text/plain': 'one' }, metadata: {}, transient: { display_id: 'd' } });
    expect(collector.apply('clear_output', { wait: true })).toEqual([]);
    expect(collector.snapshot()).toHaveLength(1);
    collector.apply('update_display_data', {
      data: { 'text/plain': 'uno' },
      metadata: {},
      transient: { display_id: 'd' },
    });
    expect(collector.snapshot()).toEqual([
      { output_type: 'display_data', data: { 'text/plain': 'uno' }, metadata: {} },
    ]);
    const changes = collector.apply('stream', stdout('two'));
    expect(changes.map((change) => change.kind)).toEqual(['cleared', 'output']);
    expect(collector.snapshot()).toEqual([{ output_type: 'stream', name: 'stdout', text: 'two' }]);
    expect(collector.apply('clear_output', { wait: false })).toEqual([{ kind: 'cleared' }]);
    expect(collector.snapshot()).toEqual([]);
  });

  it('does not merge a stream into one shown before a clear with wait', () => {
    const collector = new OutputCollector();
    collector.apply('stream', stdout('frame 1\n'));
    collector.apply('clear_output', { wait: true });
    collector.apply('stream', stdout('frame 2\n'));
    expect(collector.snapshot()).toEqual([{ output_type: 'stream', name: 'stdout', text: 'frame 2\n' }]);
  });

  it('updates every output that shows a display id (display_data and execute_result) and reports the update', () => {
    const collector = new OutputCollector();
    collector.apply('display_data', { data: { 'text/plain': 'old' }, metadata: {}, transient: { display_id: 'd1' } });
    collector.apply('display_data', { data: { 'text/plain': 'other' }, metadata: {}, transient: { display_id: 'd2' } });
    collector.apply('execute_result', {
      data: { 'text/plain': 'old too' },
      metadata: {},
      execution_count: 1,
      transient: { display_id: 'd1' },
    });
    const changes = collector.apply('update_display_data', {
      data: { 'text/plain': 'new' },
      metadata: { isolated: true },
      transient: { display_id: 'd1' },
    });
    expect(changes).toEqual([
      {
        kind: 'output',
        index: 0,
        output: { output_type: 'display_data', data: { 'text/plain': 'new' }, metadata: { isolated: true } },
      },
      {
        kind: 'output',
        index: 2,
        output: {
          output_type: 'execute_result',
          data: { 'text/plain': 'new' },
          metadata: { isolated: true },
          execution_count: 1,
        },
      },
      {
        kind: 'displayUpdate',
        update: { displayId: 'd1', data: { 'text/plain': 'new' }, metadata: { isolated: true } },
      },
    ]);
    expect(collector.snapshot().map((output) => output.data)).toEqual([
      { 'text/plain': 'new' },
      { 'text/plain': 'other' },
      { 'text/plain': 'new' },
    ]);
  });

  it('reports an update for a display id none of its outputs shows (another execution may show it)', () => {
    const collector = new OutputCollector();
    expect(
      collector.apply('update_display_data', {
        data: { 'text/plain': 'n' },
        metadata: {},
        transient: { display_id: 'z' },
      }),
    ).toEqual([{ kind: 'displayUpdate', update: { displayId: 'z', data: { 'text/plain': 'n' }, metadata: {} } }]);
    expect(collector.apply('update_display_data', { data: {}, metadata: {} })).toEqual([]);
  });

  it('ignores message types that produce no output', () => {
    const collector = new OutputCollector();
    expect(collector.apply('comm_open', { comm_id: 'c' })).toEqual([]);
    expect(collector.snapshot()).toEqual([]);
  });
});
