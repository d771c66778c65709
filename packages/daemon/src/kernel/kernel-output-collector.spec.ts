import { describe, expect, it } from 'vitest';
import { KernelOutputCollector } from './kernel-output-collector.js';

describe(KernelOutputCollector, () => {
  it('merges consecutive streams of the same name, not across names or other outputs', () => {
    const collector = new KernelOutputCollector();
    collector.apply('stream', { name: 'stdout', text: 'a\n' });
    const [change] = collector.apply('stream', { name: 'stdout', text: 'b\n' });
    collector.apply('stream', { name: 'stderr', text: 'oops\n' });
    collector.apply('stream', { name: 'stdout', text: 'c\n' });
    expect(change).toEqual({ kind: 'output', output: { output_type: 'stream', name: 'stdout', text: 'a\nb\n' } });
    expect(collector.snapshot()).toEqual([
      { output_type: 'stream', name: 'stdout', text: 'a\nb\n' },
      { output_type: 'stream', name: 'stderr', text: 'oops\n' },
      { output_type: 'stream', name: 'stdout', text: 'c\n' },
    ]);
  });

  it('does not mutate outputs it already handed out', () => {
    const collector = new KernelOutputCollector();
    collector.apply('stream', { name: 'stdout', text: 'a' });
    const before = collector.snapshot();
    collector.apply('stream', { name: 'stdout', text: 'b' });
    expect(before).toEqual([{ output_type: 'stream', name: 'stdout', text: 'a' }]);
  });

  it('applies carriage returns like a terminal, keeping a trailing one for the next chunk', () => {
    const collector = new KernelOutputCollector();
    collector.apply('stream', { name: 'stdout', text: ' 10%\r' });
    collector.apply('stream', { name: 'stdout', text: ' 50%\r' });
    expect(collector.snapshot()[0]?.text).toBe(' 50%\r');
    collector.apply('stream', { name: 'stdout', text: '100%\ndone\r\n' });
    expect(collector.snapshot()[0]?.text).toBe('100%\ndone\n');
  });

  it('builds display_data, execute_result and error outputs in nbformat shape', () => {
    const collector = new KernelOutputCollector();
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

  it('clears at once, or with wait=true just before the next output', () => {
    const collector = new KernelOutputCollector();
    collector.apply('stream', { name: 'stdout', text: 'one' });
    expect(collector.apply('clear_output', { wait: true })).toEqual([]);
    expect(collector.snapshot()).toHaveLength(1);
    const changes = collector.apply('stream', { name: 'stdout', text: 'two' });
    expect(changes.map((change) => change.kind)).toEqual(['cleared', 'output']);
    expect(collector.snapshot()).toEqual([{ output_type: 'stream', name: 'stdout', text: 'two' }]);
    expect(collector.apply('clear_output', { wait: false })).toEqual([{ kind: 'cleared' }]);
    expect(collector.snapshot()).toEqual([]);
  });

  it('updates the outputs that show a display id and reports the update', () => {
    const collector = new KernelOutputCollector();
    collector.apply('display_data', { data: { 'text/plain': 'old' }, metadata: {}, transient: { display_id: 'd1' } });
    collector.apply('display_data', { data: { 'text/plain': 'other' }, metadata: {}, transient: { display_id: 'd2' } });
    const changes = collector.apply('update_display_data', {
      data: { 'text/plain': 'new' },
      metadata: {},
      transient: { display_id: 'd1' },
    });
    expect(changes).toEqual([
      { kind: 'output', output: { output_type: 'display_data', data: { 'text/plain': 'new' }, metadata: {} } },
      { kind: 'displayUpdate', update: { displayId: 'd1', data: { 'text/plain': 'new' }, metadata: {} } },
    ]);
    expect(collector.snapshot().map((output) => output.data)).toEqual([
      { 'text/plain': 'new' },
      { 'text/plain': 'other' },
    ]);
  });

  it('ignores message types that produce no output', () => {
    const collector = new KernelOutputCollector();
    expect(collector.apply('comm_open', { comm_id: 'c' })).toEqual([]);
    expect(collector.snapshot()).toEqual([]);
  });
});
