import {
  type CellOutput,
  type Clock,
  type ExecuteOptions,
  type ExecutionResult,
  type ExecutionState,
  executionResultOf,
  type Timer,
} from '@nteract-mcp/core';
import { applyOutputEdit, type OutputEdit, type WireRoomEvent } from '@nteract-mcp/runtimed-protocol';
import { isFinalExecutionStatus, toExecutionState } from './runtimed-wire-readers.js';

/** An `execution_done` broadcast. */
export type ExecutionDoneEvent = Extract<WireRoomEvent, { event: 'execution_done' }>;

/** What an {@link ExecutionFollower} needs. */
export interface ExecutionFollowerOptions {
  /** Times `timeoutMs` of {@link ExecutionFollower.follow}. */
  readonly clock: Clock;
  /**
   * Reads an execution's current state (the daemon's `get_execution`): only when a follow times
   * out, or when an end came without its final state (an older daemon).
   */
  readonly readExecution: (executionId: string) => Promise<ExecutionState>;
  /** Told when an `onOutput` callback threw; the execution goes on. */
  readonly onCallbackError: (error: unknown) => void;
  /** Cancels one execution (the daemon's `cancel_execution`), when a follow's `signal` aborts. */
  readonly cancelExecution?: (executionId: string) => Promise<unknown>;
}

/** Someone waiting for one execution's events. */
interface ExecutionWatcher {
  output(output: CellOutput): void;
  edited(seq: number, edit: OutputEdit): void;
  done(end: ExecutionDoneEvent): void;
  fail(error: Error): void;
}

/** Execution events that arrived before we knew whose execution they were, in order. */
interface EarlyExecutionEvents {
  readonly events: Array<
    | { readonly kind: 'output'; readonly output: CellOutput }
    | { readonly kind: 'edited'; readonly seq: number; readonly edit: OutputEdit }
  >;
  done: ExecutionDoneEvent | undefined;
}

/**
 * One execution's outputs as its output edits built them, and whether they are whole: every edit
 * came, in its sequence, and fitted (else the end is read with `get_execution`).
 */
class OutputsMirror {
  public outputs: CellOutput[] = [];
  public seen = 0;
  public whole = true;

  /**
   * Applies one edit; the output it added or changed, if any. In place: the list is this mirror's
   * own until the end, so an edit costs its change, not the count of outputs so far.
   */
  public edited(seq: number, edit: OutputEdit): CellOutput | undefined {
    if (!this.whole) return undefined;
    if (edit.kind === 'clear' && seq === this.seen + 1) {
      this.seen = seq;
      this.outputs = [];
      return undefined;
    }
    const index = edit.kind === 'clear' ? -1 : edit.index;
    // Only the output the edit names is looked at: applied to it alone, the edit keeps its index 0.
    const changed =
      seq === this.seen + 1 && index <= this.outputs.length
        ? applyOutputEdit(this.outputs.slice(index, index + 1), { ...edit, index: 0 } as OutputEdit)
        : undefined;
    const output = changed?.[0] as CellOutput | undefined;
    if (output === undefined) {
      this.whole = false;
      return undefined;
    }
    this.seen = seq;
    this.outputs[index] = output;
    return output;
  }

  /** The final state `end` and these outputs make, when they are all of it. */
  public final(end: ExecutionDoneEvent): ExecutionState | undefined {
    if (end.outputs !== undefined) return toExecutionState({ ...end, outputs: end.outputs });
    if (!this.whole || end.output_events === undefined || end.output_events !== this.seen) return undefined;
    return toExecutionState({ ...end, outputs: this.outputs });
  }
}

/**
 * Follows executions of one notebook from their start to their end: the owner reports each
 * execution's events ({@link ExecutionFollower.output}, {@link ExecutionFollower.done}) as they
 * come, and {@link ExecutionFollower.follow} turns a start and those events into one result. No
 * socket and no I/O of its own: starting and reading an execution are functions it is given.
 *
 * Guarantees:
 * - Events that arrive while a start is on its way are kept, per execution id; those of the
 *   execution a start's answer names are replayed to that follow only (outputs first, then the
 *   end), the others are dropped once no start is on its way.
 * - Events of an execution nobody follows and no start may name are ignored.
 * - A follow resolves with the final state its end and its output edits make: one round trip, the
 *   start, and the broadcasts. An end that names more edits than came in sequence, or one
 *   without its outputs from an older daemon, is followed by one read. After
 *   `timeoutMs` it reads the state once and resolves with status `timeout` unless the read shows it
 *   ended. A start that answers with a final state (a replayed key of a finished execution)
 *   resolves at once.
 * - `onStarted` is called once with the execution's id, before any of its outputs.
 * - When the follow's `signal` aborts (also before the start answered) while the execution has
 *   not ended, `cancelExecution` is asked once for that execution; the follow goes on to its end.
 * - Every `onOutput` / `onStarted` callback error goes to `onCallbackError` and the follow goes on.
 * - {@link ExecutionFollower.close} rejects every pending follow with its error, and every later
 *   follow too, and drops what was buffered.
 *
 * Does not guarantee that `onOutput` sees every output of an execution whose events came before
 * its start was asked for (a replayed idempotency key): those are only in the result.
 */
export class ExecutionFollower {
  readonly #options: ExecutionFollowerOptions;
  readonly #watchers = new Map<string, Set<ExecutionWatcher>>();
  readonly #early = new Map<string, EarlyExecutionEvents>();
  #startsInFlight = 0;
  #closedWith: Error | undefined;

  public constructor(options: ExecutionFollowerOptions) {
    this.#options = options;
  }

  /**
   * Starts an execution with `start` (its answer names the execution) and follows it to its end.
   * Rejects with what `start` or `readExecution` rejected with, or with the close error.
   */
  public async follow(start: () => Promise<ExecutionState>, options?: ExecuteOptions): Promise<ExecutionResult> {
    if (this.#closedWith) throw this.#closedWith;
    this.#startsInFlight += 1;
    let started: ExecutionState;
    let early: EarlyExecutionEvents | undefined;
    try {
      started = await start();
      // Events of this execution that came in the same read as the answer were buffered.
      early = this.#early.get(started.executionId);
      this.#early.delete(started.executionId);
    } finally {
      this.#startsInFlight -= 1;
      if (this.#startsInFlight === 0) this.#early.clear();
    }
    this.callback(() => options?.onStarted?.(started.executionId));
    if (isFinalExecutionStatus(started.status)) return executionResultOf(started, started.status);
    const signal = options?.signal;
    if (!signal || !this.#options.cancelExecution) return this.watch(started.executionId, early, options);
    const cancel = (): void => {
      this.#options
        .cancelExecution?.(started.executionId)
        .catch((error: unknown) => this.#options.onCallbackError(error));
    };
    if (signal.aborted) cancel();
    else signal.addEventListener('abort', cancel, { once: true });
    try {
      return await this.watch(started.executionId, early, options);
    } finally {
      signal.removeEventListener('abort', cancel);
    }
  }

  /** Whether a follow of `executionId` is waiting for its end (an execution this handle started and follows). */
  public follows(executionId: string): boolean {
    return this.#watchers.has(executionId);
  }

  /** An output of `executionId`, whole (a daemon before the output edits). */
  public output(executionId: string, output: CellOutput): void {
    const watchers = this.#watchers.get(executionId);
    if (watchers) for (const watcher of [...watchers]) watcher.output(output);
    else this.earlyEvents(executionId)?.events.push({ kind: 'output', output });
  }

  /** The output edit number `seq` of `executionId`. */
  public edited(executionId: string, seq: number, edit: OutputEdit): void {
    const watchers = this.#watchers.get(executionId);
    if (watchers) for (const watcher of [...watchers]) watcher.edited(seq, edit);
    else this.earlyEvents(executionId)?.events.push({ kind: 'edited', seq, edit });
  }

  /** The end of an execution, as its `execution_done` broadcast tells it. */
  public done(end: ExecutionDoneEvent): void {
    const watchers = this.#watchers.get(end.execution_id);
    if (watchers) for (const watcher of [...watchers]) watcher.done(end);
    else {
      const early = this.earlyEvents(end.execution_id);
      if (early) early.done = end;
    }
  }

  /** Rejects every pending and later follow with `error`. Idempotent (the first error stays). */
  public close(error: Error): void {
    if (this.#closedWith) return;
    this.#closedWith = error;
    for (const watchers of this.#watchers.values()) for (const watcher of [...watchers]) watcher.fail(error);
    this.#watchers.clear();
    this.#early.clear();
  }

  private async watch(
    executionId: string,
    early: EarlyExecutionEvents | undefined,
    options: ExecuteOptions | undefined,
  ): Promise<ExecutionResult> {
    if (this.#closedWith) throw this.#closedWith;
    let timer: Timer | undefined;
    let watcher: ExecutionWatcher | undefined;
    const mirror = new OutputsMirror();
    const outcome = new Promise<ExecutionDoneEvent | 'timeout'>((resolve, reject) => {
      watcher = {
        output: (output) => this.deliver(options, output),
        edited: (seq, edit) => {
          const changed = mirror.edited(seq, edit);
          if (changed !== undefined) this.deliver(options, changed);
        },
        done: resolve,
        fail: reject,
      };
      for (const event of early?.events ?? []) {
        if (event.kind === 'output') watcher.output(event.output);
        else watcher.edited(event.seq, event.edit);
      }
      if (early?.done !== undefined) resolve(early.done);
      if (options?.timeoutMs !== undefined) {
        timer = this.#options.clock.setTimer(options.timeoutMs, () => resolve('timeout'));
      }
    });
    // Settled by `fail` on close, possibly while nobody awaits it yet.
    outcome.catch(() => undefined);
    const registered = watcher as ExecutionWatcher;
    let watchers = this.#watchers.get(executionId);
    if (!watchers) {
      watchers = new Set();
      this.#watchers.set(executionId, watchers);
    }
    watchers.add(registered);
    try {
      // The start's answer came before any later event of the execution (one ordered stream), and
      // those that came with it were replayed above: nothing needs a look before the end.
      const end = await outcome;
      const endStatus = end === 'timeout' ? 'timeout' : isFinalExecutionStatus(end.status) ? end.status : 'aborted';
      const final = end === 'timeout' ? undefined : mirror.final(end);
      if (final !== undefined && endStatus !== 'timeout') return executionResultOf(final, endStatus);
      const now = await this.#options.readExecution(executionId);
      const status = endStatus;
      return executionResultOf(now, isFinalExecutionStatus(now.status) ? now.status : status);
    } finally {
      timer?.cancel();
      watchers.delete(registered);
      if (watchers.size === 0 && this.#watchers.get(executionId) === watchers) this.#watchers.delete(executionId);
    }
  }

  private deliver(options: ExecuteOptions | undefined, output: CellOutput): void {
    this.callback(() => options?.onOutput?.(output));
  }

  private callback(call: () => void): void {
    try {
      call();
    } catch (error) {
      this.#options.onCallbackError(error);
    }
  }

  /** Buffers events only while a start is on its way (its answer may name them). */
  private earlyEvents(executionId: string): EarlyExecutionEvents | undefined {
    if (this.#startsInFlight === 0) return undefined;
    let events = this.#early.get(executionId);
    if (!events) {
      events = { events: [], done: undefined };
      this.#early.set(executionId, events);
    }
    return events;
  }
}
