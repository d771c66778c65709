import type { CellOutput, ExecutionResult, ExecutionState } from '@nteract-mcp/core';
import { ManualClock } from '@nteract-mcp/core/testing';
import { describe, expect, it } from 'vitest';
import { type ExecutionDoneEvent, ExecutionFollower } from './execution-follower.js';

interface Deferred<T> {
  readonly promise: Promise<T>;
  resolve(value: T): void;
  reject(error: unknown): void;
}

function deferred<T>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((ok, fail) => {
    resolve = ok;
    reject = fail;
  });
  return { promise, resolve, reject };
}

/** Lets every pending promise continuation run. */
function settle(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

function stream(text: string): CellOutput {
  return { output_type: 'stream', name: 'stdout', text };
}

function state(executionId: string, status: ExecutionState['status'], outputs: CellOutput[] = []): ExecutionState {
  return { executionId, cellId: `cell-of-${executionId}`, status, outputs, executionCount: outputs.length };
}

/**
 * An `execution_done` broadcast: from a daemon before the output edits (with `outputs`, or
 * without: then the follower reads the state), or naming how many output edits there were.
 */
function end(executionId: string, status: string, outputs?: CellOutput[], outputEvents?: number): ExecutionDoneEvent {
  return {
    event: 'execution_done',
    execution_id: executionId,
    cell_id: `cell-of-${executionId}`,
    status: status as ExecutionDoneEvent['status'],
    execution_count: outputs?.length ?? 0,
    ...(outputs === undefined ? {} : { outputs }),
    ...(outputEvents === undefined ? {} : { output_events: outputEvents }),
  };
}

/** Where a promise stands without waiting for it. */
function track<T>(promise: Promise<T>): { value?: T; error?: unknown; readonly settled: () => boolean } {
  const seen: { value?: T; error?: unknown; settled: () => boolean } = { settled: () => done };
  let done = false;
  promise.then(
    (value) => {
      done = true;
      seen.value = value;
    },
    (error: unknown) => {
      done = true;
      seen.error = error;
    },
  );
  return seen;
}

/**
 * A follower whose `readExecution` answers from `states` (the daemon's view of each execution)
 * and records what it was asked; `sequence` queues answers given one per read (the last repeats).
 */
function setUp() {
  const clock = new ManualClock();
  const states = new Map<string, ExecutionState>();
  const sequences = new Map<string, ExecutionState[]>();
  const sequence = (executionId: string, ...answers: ExecutionState[]): void => {
    sequences.set(executionId, answers);
  };
  const reads: string[] = [];
  const callbackErrors: unknown[] = [];
  const cancelled: string[] = [];
  const follower = new ExecutionFollower({
    cancelExecution: async (executionId) => {
      cancelled.push(executionId);
    },
    clock,
    readExecution: async (executionId) => {
      reads.push(executionId);
      const queued = sequences.get(executionId);
      if (queued && queued.length > 1) return queued.shift() as ExecutionState;
      const current = queued?.[0] ?? states.get(executionId);
      if (!current) throw new Error(`unknown execution ${executionId}`);
      return current;
    },
    onCallbackError: (error) => callbackErrors.push(error),
  });
  return { clock, states, sequence, reads, callbackErrors, cancelled, follower };
}

describe(ExecutionFollower, () => {
  it('names the execution to onStarted before its outputs, and cancels it once when the signal aborts', async () => {
    const { states, follower, cancelled } = setUp();
    states.set('e1', state('e1', 'running'));
    const seen: string[] = [];
    const controller = new AbortController();
    const result = track(
      follower.follow(async () => state('e1', 'queued'), {
        onStarted: (executionId) => seen.push(`started ${executionId}`),
        onOutput: (output) => seen.push(String(output.text)),
        signal: controller.signal,
      }),
    );
    await settle();
    follower.output('e1', stream('one'));
    expect(cancelled).toEqual([]);
    controller.abort();
    controller.abort();
    await settle();
    expect(cancelled).toEqual(['e1']);
    // The follow goes on to the end the cancellation brings.
    expect(result.settled()).toBe(false);
    states.set('e1', state('e1', 'error', [stream('one')]));
    follower.done(end('e1', 'error'));
    await settle();
    expect(result.value?.status).toBe('error');
    expect(seen).toEqual(['started e1', 'one']);
  });

  it('cancels an execution whose call was cancelled before the start answered, and not a finished one', async () => {
    const { states, follower, cancelled } = setUp();
    const controller = new AbortController();
    controller.abort();
    states.set('e1', state('e1', 'running'));
    const result = track(follower.follow(async () => state('e1', 'queued'), { signal: controller.signal }));
    await settle();
    expect(cancelled).toEqual(['e1']);
    follower.done(end('e1', 'aborted'));
    await settle();
    expect(result.settled()).toBe(true);
    expect(await follower.follow(async () => state('e2', 'ok'), { signal: controller.signal })).toMatchObject({
      status: 'ok',
    });
    expect(cancelled).toEqual(['e1']);
  });

  it('replays events that arrived before the start answered, outputs first, then the end with its final state', async () => {
    const { reads, follower } = setUp();
    const start = deferred<ExecutionState>();
    const seen: CellOutput[] = [];
    const result = follower.follow(() => start.promise, { onOutput: (output) => seen.push(output) });
    follower.output('e1', stream('one'));
    follower.output('e1', stream('two'));
    follower.done(end('e1', 'ok', [stream('one'), stream('two')]));
    start.resolve(state('e1', 'queued'));
    expect(await result).toEqual<ExecutionResult>({
      executionId: 'e1',
      cellId: 'cell-of-e1',
      status: 'ok',
      outputs: [stream('one'), stream('two')],
      executionCount: 2,
    });
    expect(seen).toEqual([stream('one'), stream('two')]);
    // The end carried the final state: nothing was read.
    expect(reads).toEqual([]);
  });

  it('builds the outputs from the output edits (early ones too) and resolves with them, reading nothing', async () => {
    const { reads, follower } = setUp();
    const start = deferred<ExecutionState>();
    const seen: CellOutput[] = [];
    const result = follower.follow(() => start.promise, { onOutput: (output) => seen.push(output) });
    // Came with the start's answer, before the follower knew the execution was this one.
    follower.edited('e1', 1, { kind: 'set', index: 0, output: stream('step 1\n') });
    start.resolve(state('e1', 'queued'));
    await settle();
    follower.edited('e1', 2, { kind: 'append', index: 0, keep: 7, text: 'step 2\n10%\r' });
    follower.edited('e1', 3, { kind: 'append', index: 0, keep: 14, text: '100%\n' });
    follower.edited('e1', 4, {
      kind: 'set',
      index: 1,
      output: { output_type: 'display_data', data: {}, metadata: {} },
    });
    follower.done(end('e1', 'ok', undefined, 4));
    const finished = await result;
    expect(finished.outputs).toEqual([
      stream('step 1\nstep 2\n100%\n'),
      { output_type: 'display_data', data: {}, metadata: {} },
    ]);
    expect(seen.map((output) => output.text ?? output.output_type)).toEqual([
      'step 1\n',
      'step 1\nstep 2\n10%\r',
      'step 1\nstep 2\n100%\n',
      'display_data',
    ]);
    expect(reads).toEqual([]);
  });

  it('reads the execution when an edit is missing or does not fit, or the end names more edits than came', async () => {
    const { states, reads, follower } = setUp();
    for (const id of ['gap', 'misfit', 'short']) states.set(id, state(id, 'ok', [stream('as the daemon has it')]));
    const gap = track(follower.follow(async () => state('gap', 'queued')));
    const misfit = track(follower.follow(async () => state('misfit', 'queued')));
    const short = track(follower.follow(async () => state('short', 'queued')));
    await settle();
    follower.edited('gap', 1, { kind: 'set', index: 0, output: stream('a') });
    follower.edited('gap', 3, { kind: 'append', index: 0, keep: 1, text: 'c' });
    follower.done(end('gap', 'ok', undefined, 3));
    follower.edited('misfit', 1, { kind: 'append', index: 0, keep: 0, text: 'no stream to append to' });
    follower.done(end('misfit', 'ok', undefined, 1));
    follower.edited('short', 1, { kind: 'set', index: 0, output: stream('a') });
    follower.done(end('short', 'ok', undefined, 2));
    await settle();
    for (const result of [gap, misfit, short]) {
      expect(result.value?.outputs).toEqual([stream('as the daemon has it')]);
    }
    expect(reads.sort()).toEqual(['gap', 'misfit', 'short']);
  });

  it('resolves with the final state the end carries, reading nothing; an end without it (an older daemon) is read once', async () => {
    const { states, reads, follower } = setUp();
    states.set('e1', state('e1', 'running'));
    const carried = track(follower.follow(async () => state('e1', 'queued')));
    await settle();
    follower.done(end('e1', 'ok', [stream('all of it')]));
    await settle();
    expect(carried.value).toMatchObject({ status: 'ok', outputs: [stream('all of it')] });
    expect(reads).toEqual([]);

    states.set('e2', state('e2', 'running'));
    const bare = track(follower.follow(async () => state('e2', 'queued')));
    await settle();
    states.set('e2', state('e2', 'ok', [stream('read')]));
    follower.done(end('e2', 'ok'));
    await settle();
    expect(bare.value).toMatchObject({ status: 'ok', outputs: [stream('read')] });
    expect(reads).toEqual(['e2']);
  });

  it('takes the status from the events when the last read still shows the execution unfinished', async () => {
    const { states, follower } = setUp();
    states.set('e1', state('e1', 'running'));
    const result = track(follower.follow(async () => state('e1', 'queued')));
    await settle();
    expect(result.settled()).toBe(false);
    follower.done(end('e1', 'error'));
    await settle();
    expect(result.value?.status).toBe('error');
  });

  it('takes the status of the last read over the one the events named when the read shows an end', async () => {
    const { sequence, follower } = setUp();
    sequence('e1', state('e1', 'error', [stream('trace')]));
    const result = track(follower.follow(async () => state('e1', 'queued')));
    await settle();
    follower.done(end('e1', 'something-new'));
    await settle();
    expect(result.value).toMatchObject({ status: 'error', outputs: [stream('trace')] });
  });

  it('counts an end with a status that is not final as aborted', async () => {
    const { states, follower } = setUp();
    states.set('e1', state('e1', 'running'));
    const result = track(follower.follow(async () => state('e1', 'queued')));
    await settle();
    follower.done(end('e1', 'exploded'));
    await settle();
    expect(result.value?.status).toBe('aborted');
  });

  it('does not replay events that came while no start was on its way (a late follow sees only later ones)', async () => {
    const { states, follower } = setUp();
    follower.output('e1', stream('before'));
    follower.done(end('e1', 'ok'));
    states.set('e1', state('e1', 'running'));
    const seen: CellOutput[] = [];
    const result = track(follower.follow(async () => state('e1', 'queued'), { onOutput: (o) => seen.push(o) }));
    await settle();
    expect(result.settled()).toBe(false);
    follower.output('e1', stream('after'));
    expect(seen).toEqual([stream('after')]);
    follower.done(end('e1', 'ok'));
    await settle();
    expect(result.value?.status).toBe('ok');
  });

  it('resolves at once when the start answers a final state (a replayed key of a finished execution), reading nothing', async () => {
    const { reads, follower } = setUp();
    const direct = await follower.follow(async () => state('e1', 'error', [stream('boom')]));
    expect(direct).toMatchObject({ executionId: 'e1', status: 'error', outputs: [stream('boom')] });
    expect(reads).toEqual([]);
  });

  it('routes interleaved events of several executions to their own follows', async () => {
    const { states, follower } = setUp();
    states.set('e1', state('e1', 'running'));
    states.set('e2', state('e2', 'running'));
    const seen1: CellOutput[] = [];
    const seen2: CellOutput[] = [];
    const first = track(follower.follow(async () => state('e1', 'queued'), { onOutput: (o) => seen1.push(o) }));
    const second = track(follower.follow(async () => state('e2', 'queued'), { onOutput: (o) => seen2.push(o) }));
    await settle();
    follower.output('e1', stream('1a'));
    follower.output('e2', stream('2a'));
    follower.output('e1', stream('1b'));
    follower.done(end('e2', 'ok'));
    await settle();
    expect(second.value?.status).toBe('ok');
    expect(first.settled()).toBe(false);
    follower.output('e1', stream('1c'));
    follower.done(end('e1', 'error'));
    await settle();
    expect(first.value?.status).toBe('error');
    expect(seen1).toEqual([stream('1a'), stream('1b'), stream('1c')]);
    expect(seen2).toEqual([stream('2a')]);
  });

  it('buffers per start: events of another execution are not handed to this one and are dropped afterwards', async () => {
    const { states, follower } = setUp();
    const start = deferred<ExecutionState>();
    const seen: CellOutput[] = [];
    const result = track(follower.follow(() => start.promise, { onOutput: (o) => seen.push(o) }));
    follower.output('other', stream('not mine'));
    follower.done(end('other', 'ok'));
    states.set('e1', state('e1', 'running'));
    start.resolve(state('e1', 'queued'));
    await settle();
    expect(seen).toEqual([]);
    expect(result.settled()).toBe(false);
    // A later follow of `other` does not get what was buffered for the first start.
    states.set('other', state('other', 'running'));
    const other: CellOutput[] = [];
    const late = track(follower.follow(async () => state('other', 'queued'), { onOutput: (o) => other.push(o) }));
    await settle();
    expect(late.settled()).toBe(false);
    expect(other).toEqual([]);
  });

  it('hands buffered events to the first start that names their execution only', async () => {
    const { states, follower } = setUp();
    const firstStart = deferred<ExecutionState>();
    const secondStart = deferred<ExecutionState>();
    const firstSeen: CellOutput[] = [];
    const secondSeen: CellOutput[] = [];
    const first = track(follower.follow(() => firstStart.promise, { onOutput: (o) => firstSeen.push(o) }));
    const second = track(follower.follow(() => secondStart.promise, { onOutput: (o) => secondSeen.push(o) }));
    follower.output('e1', stream('once'));
    follower.done(end('e1', 'ok'));
    states.set('e1', state('e1', 'running'));
    // Both answers name e1 (a repeated idempotency key); the second comes after the first.
    firstStart.resolve(state('e1', 'queued'));
    await settle();
    secondStart.resolve(state('e1', 'queued'));
    await settle();
    expect(first.value?.status).toBe('ok');
    expect(firstSeen).toEqual([stream('once')]);
    expect(second.settled()).toBe(false);
    expect(secondSeen).toEqual([]);
  });

  it('ignores events of ids nobody follows', async () => {
    const { states, follower } = setUp();
    states.set('e1', state('e1', 'running'));
    const seen: CellOutput[] = [];
    const result = track(follower.follow(async () => state('e1', 'queued'), { onOutput: (o) => seen.push(o) }));
    await settle();
    expect(() => {
      follower.output('nobody', stream('x'));
      follower.done(end('nobody', 'ok'));
    }).not.toThrow();
    await settle();
    expect(result.settled()).toBe(false);
    expect(seen).toEqual([]);
    follower.done(end('e1', 'ok'));
    await settle();
    expect(result.value?.status).toBe('ok');
  });

  it('resolves timeout with the state read then, and cancels its timer when the execution ends first', async () => {
    const { clock, states, follower } = setUp();
    states.set('e1', state('e1', 'running', [stream('so far')]));
    const slow = track(follower.follow(async () => state('e1', 'queued'), { timeoutMs: 1000 }));
    await settle();
    await clock.advanceAndSettle(999);
    expect(slow.settled()).toBe(false);
    await clock.advanceAndSettle(1);
    expect(slow.value).toMatchObject({ status: 'timeout', outputs: [stream('so far')] });

    states.set('e2', state('e2', 'running'));
    const quick = track(follower.follow(async () => state('e2', 'queued'), { timeoutMs: 1000 }));
    await settle();
    follower.done(end('e2', 'ok'));
    await settle();
    expect(quick.value?.status).toBe('ok');
    expect(clock.pendingTimerCount).toBe(0);
  });

  it('reports an onOutput callback that throws and goes on', async () => {
    const { states, callbackErrors, follower } = setUp();
    states.set('e1', state('e1', 'running'));
    const failure = new Error('callback broke');
    const result = track(
      follower.follow(async () => state('e1', 'queued'), {
        onOutput: () => {
          throw failure;
        },
      }),
    );
    await settle();
    follower.output('e1', stream('x'));
    follower.done(end('e1', 'ok'));
    await settle();
    expect(result.value?.status).toBe('ok');
    expect(callbackErrors).toEqual([failure]);
  });

  it('rejects pending follows on close, follows whose start answers later, and every later follow', async () => {
    const { states, reads, follower } = setUp();
    states.set('e1', state('e1', 'running'));
    const watching = track(follower.follow(async () => state('e1', 'queued')));
    const start = deferred<ExecutionState>();
    const starting = track(follower.follow(() => start.promise));
    await settle();
    const closed = new Error('connection closed');
    follower.close(closed);
    await settle();
    expect(watching.error).toBe(closed);
    start.resolve(state('e2', 'queued'));
    await settle();
    expect(starting.error).toBe(closed);
    let started = false;
    await expect(
      follower.follow(async () => {
        started = true;
        return state('e3', 'queued');
      }),
    ).rejects.toBe(closed);
    expect(started).toBe(false);
    expect(reads).toEqual([]);
    // Events after close reach nobody.
    expect(() => follower.done(end('e1', 'ok'))).not.toThrow();
  });

  it('passes on a start that fails and drops what it buffered', async () => {
    const { states, follower } = setUp();
    const start = deferred<ExecutionState>();
    const failing = track(follower.follow(() => start.promise));
    follower.output('e1', stream('buffered'));
    follower.done(end('e1', 'ok'));
    const failure = new Error('execute_cell failed');
    start.reject(failure);
    await settle();
    expect(failing.error).toBe(failure);
    states.set('e1', state('e1', 'running'));
    const seen: CellOutput[] = [];
    const later = track(follower.follow(async () => state('e1', 'queued'), { onOutput: (o) => seen.push(o) }));
    await settle();
    expect(later.settled()).toBe(false);
    expect(seen).toEqual([]);
  });
});
