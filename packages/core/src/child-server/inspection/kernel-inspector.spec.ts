import { ManualClock } from '@nteract-mcp/foundation/testing';
import { describe, expect, it } from 'vitest';
import type { NotebookHandle, ScratchRun } from '../../ports/notebook-handle.js';
import { ToolError } from '../tools/to-tool-failure.js';
import { type InspectionOutcome, KernelInspector, maxKeptListings } from './kernel-inspector.js';

/** A handle whose scratch runs end when the test says (the narrow part of the port the inspector uses). */
class HeldScratchHandle {
  public readonly notebookId = 'nb-1';
  public readonly sent: string[] = [];
  readonly #waiting: ((outcome: ScratchRun | Error) => void)[] = [];

  public runScratch(source: string): Promise<ScratchRun> {
    this.sent.push(source);
    return new Promise((resolve, reject) => {
      this.#waiting.push((outcome) => (outcome instanceof Error ? reject(outcome) : resolve(outcome)));
    });
  }

  /** Ends the oldest run still going. */
  public finish(outcome: ScratchRun | Error): void {
    const next = this.#waiting.shift();
    if (!next) throw new Error('no scratch run is going');
    next(outcome);
  }

  public get asHandle(): NotebookHandle {
    return this as unknown as NotebookHandle;
  }
}

const done: ScratchRun = { status: 'ok', outputs: [{ output_type: 'stream', name: 'stdout', text: 'answer\n' }] };

/** Lets the promise callbacks queued so far run. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

describe(KernelInspector, () => {
  it('answers the run when the kernel takes it within the wait', async () => {
    const clock = new ManualClock();
    const handle = new HeldScratchHandle();
    const inspector = new KernelInspector(clock);
    const outcome = inspector.run(handle.asHandle, 'program', 3000);
    await settle();
    handle.finish(done);
    expect(await outcome).toEqual({ kind: 'ran', run: done });
    expect(clock.pendingTimerCount).toBe(0);
  });

  it('answers busy at the end of the wait, follows the run, and sends no other while it is queued', async () => {
    const clock = new ManualClock();
    const handle = new HeldScratchHandle();
    const inspector = new KernelInspector(clock);
    const late: ScratchRun[] = [];
    const first = inspector.run(handle.asHandle, 'first', 3000, (run) => late.push(run));
    await settle();
    clock.advance(3000);
    expect(await first).toEqual({ kind: 'busy', queued: false });

    // Still queued: answered busy at once, saying since when, and nothing more is sent.
    clock.advance(5000);
    const second: InspectionOutcome = await inspector.run(handle.asHandle, 'second', 3000);
    expect(second).toEqual({ kind: 'busy', queued: true, queuedSince: clock.now() - 8000 });
    expect(handle.sent).toEqual(['first']);

    // The first ends: its answer goes to `late`, and the next call sends again.
    handle.finish(done);
    await settle();
    expect(late).toEqual([done]);
    const third = inspector.run(handle.asHandle, 'third', 3000);
    await settle();
    handle.finish(done);
    expect(await third).toMatchObject({ kind: 'ran' });
    expect(handle.sent).toEqual(['first', 'third']);
  });

  it('passes on a failed run, and a failed run queues nothing', async () => {
    const clock = new ManualClock();
    const handle = new HeldScratchHandle();
    const inspector = new KernelInspector(clock);
    const outcome = inspector.run(handle.asHandle, 'program', 3000);
    await settle();
    handle.finish(new Error('connection lost'));
    await expect(outcome).rejects.toThrow('connection lost');
    const again = inspector.run(handle.asHandle, 'again', 3000);
    await settle();
    handle.finish(done);
    expect(await again).toMatchObject({ kind: 'ran' });
  });

  it('refuses a backend without scratch runs, saying why', async () => {
    const inspector = new KernelInspector(new ManualClock());
    const handle = { notebookId: 'nb-2' } as unknown as NotebookHandle;
    const refused = await inspector.run(handle, 'program', 3000).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ToolError);
    expect((refused as Error).message).toContain('cannot run code without a cell');
  });

  it('keeps the last listing of each notebook, the least recently listed forgotten first', () => {
    const inspector = new KernelInspector(new ManualClock());
    for (let index = 0; index <= maxKeptListings; index += 1) {
      inspector.keep(`nb-${index}`, { takenAt: index, executionCount: index, answer: { total: index } });
    }
    expect(inspector.last('nb-0')).toBeUndefined();
    expect(inspector.last(`nb-${maxKeptListings}`)).toMatchObject({ executionCount: maxKeptListings });
    inspector.keep('nb-1', { takenAt: 99, executionCount: null, answer: { total: 0 } });
    expect(inspector.last('nb-1')).toMatchObject({ takenAt: 99 });
  });
});
