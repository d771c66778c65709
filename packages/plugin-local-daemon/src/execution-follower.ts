import type { CellOutput, Clock, ExecuteOptions, ExecutionResult, ExecutionState, Timer } from '@nteract-mcp/core';
import { type FinalExecutionStatus, isFinalExecutionStatus } from './runtimed-wire-readers.js';

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

/** How an execution ended: its final status and, when the end carried it, its final state. */
interface ExecutionEnd {
  readonly status: FinalExecutionStatus;
  readonly final: ExecutionState | undefined;
}

/** Someone waiting for one execution's events. */
interface ExecutionWatcher {
  output(output: CellOutput): void;
  done(end: ExecutionEnd): void;
  fail(error: Error): void;
}

/** Execution events that arrived before we knew whose execution they were. */
interface EarlyExecutionEvents {
  readonly outputs: CellOutput[];
  done: ExecutionEnd | undefined;
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
 * - A follow resolves with the final state its end carries: one round trip, the start, and the
 *   broadcasts (an end without it, from an older daemon, is followed by one read). After
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
    if (isFinalExecutionStatus(started.status)) return toResult(started, started.status);
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

  /** An output of `executionId`. */
  public output(executionId: string, output: CellOutput): void {
    const watchers = this.#watchers.get(executionId);
    if (watchers) for (const watcher of [...watchers]) watcher.output(output);
    else this.earlyEvents(executionId)?.outputs.push(output);
  }

  /**
   * The end of `executionId`, with its final state when the end carries it; a status that is not
   * a final one counts as `aborted`.
   */
  public done(executionId: string, status: string, final?: ExecutionState): void {
    const end: ExecutionEnd = { status: isFinalExecutionStatus(status) ? status : 'aborted', final };
    const watchers = this.#watchers.get(executionId);
    if (watchers) for (const watcher of [...watchers]) watcher.done(end);
    else {
      const early = this.earlyEvents(executionId);
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
    const outcome = new Promise<ExecutionEnd | 'timeout'>((resolve, reject) => {
      watcher = { output: (output) => this.deliver(options, output), done: resolve, fail: reject };
      for (const output of early?.outputs ?? []) watcher.output(output);
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
      if (end !== 'timeout' && end.final) return toResult(end.final, end.status);
      const now = await this.#options.readExecution(executionId);
      const status = end === 'timeout' ? 'timeout' : end.status;
      return toResult(now, isFinalExecutionStatus(now.status) ? now.status : status);
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
      events = { outputs: [], done: undefined };
      this.#early.set(executionId, events);
    }
    return events;
  }
}

function toResult(state: ExecutionState, status: ExecutionResult['status']): ExecutionResult {
  return {
    executionId: state.executionId,
    cellId: state.cellId,
    status,
    outputs: state.outputs,
    executionCount: state.executionCount,
    ...(state.kernelNotice === undefined ? {} : { kernelNotice: state.kernelNotice }),
  };
}
