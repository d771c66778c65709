import { ManualClock } from '@nteract-mcp/foundation/testing';
import { OutputCollector } from '@nteract-mcp/output-shaping';
import { applyOutputEdit, type EditableOutput, type OutputEdit } from '@nteract-mcp/runtimed-protocol';
import { describe, expect, it } from 'vitest';
import type { ExecutionOutputChange } from '../kernel/jupyter-kernel.js';
import { OutputCoalescer, outputWindowMs } from './output-coalescer.js';

/** A coalescer fed by a real collector, as a room feeds it from its kernel; what it handed on. */
function setUp() {
  const clock = new ManualClock();
  const published: OutputEdit[][] = [];
  const coalescer = new OutputCoalescer(clock, (edits) => published.push(edits));
  const collector = new OutputCollector();
  const message = (type: string, content: Record<string, unknown>): void => {
    for (const change of collector.apply(type, content))
      if (change.kind !== 'displayUpdate') coalescer.add(change as ExecutionOutputChange);
  };
  const print = (text: string) => message('stream', { name: 'stdout', text });
  /** The outputs a peer builds from every edit handed on. */
  const rebuilt = (): EditableOutput[] => {
    let outputs: EditableOutput[] = [];
    for (const edit of published.flat()) outputs = applyOutputEdit(outputs, edit) ?? [{ output_type: 'misfit' }];
    return outputs;
  };
  return { clock, published, coalescer, collector, message, print, rebuilt };
}

describe(OutputCoalescer, () => {
  it('hands on a lone print at once, then gathers what comes within the window into one append', () => {
    const { clock, published, print } = setUp();
    print('first\n');
    expect(published).toEqual([[{ kind: 'set', index: 0, output: expect.objectContaining({ text: 'first\n' }) }]]);
    for (let step = 0; step < 1000; step++) print(`step ${step}\n`);
    expect(published).toHaveLength(1);
    clock.advance(outputWindowMs);
    expect(published).toHaveLength(2);
    expect(published[1]).toEqual([{ kind: 'append', index: 0, keep: 6, text: expect.stringMatching(/^step 0\n/) }]);
    // After a quiet window, a print goes out at once again.
    clock.advance(outputWindowMs);
    print('late\n');
    expect(published).toHaveLength(3);
  });

  it('hands on edits that rebuild exactly the outputs, through progress bars, displays and clears', () => {
    const { clock, coalescer, collector, message, print, rebuilt } = setUp();
    const display = (text: string, id: string) =>
      message('display_data', { data: { 'text/plain': text }, metadata: {}, transient: { display_id: id } });
    print('epoch 1\n');
    for (let percent = 0; percent <= 100; percent += 10) print(`${percent}%\r`);
    display('plot', 'd1');
    message('update_display_data', {
      data: { 'text/plain': 'plot v2' },
      metadata: {},
      transient: { display_id: 'd1' },
    });
    clock.advance(outputWindowMs);
    print('x\b\bgone\n');
    message('clear_output', {});
    print('after clear\n');
    clock.advance(outputWindowMs);
    print('a');
    print('b\rc\n');
    coalescer.flush();
    expect(rebuilt()).toEqual(collector.snapshot());
    expect(collector.snapshot()).toEqual([{ output_type: 'stream', name: 'stdout', text: 'after clear\ncb\n' }]);
  });

  it('hands on nothing after it is disposed', () => {
    const { clock, published, coalescer, print } = setUp();
    print('one\n');
    print('two\n');
    coalescer.dispose();
    clock.advance(outputWindowMs * 2);
    expect(published).toHaveLength(1);
  });
});
