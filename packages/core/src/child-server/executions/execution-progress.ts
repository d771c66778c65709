import type { Clock, Timer } from '../../ports/clock.js';
import type { ToolCallContext } from '../tools/child-tool-registry.js';

/** How long a cell may be silent before the call reports that it still runs (and again after each such interval). */
export const executionKeepAliveMs = 4000;

/**
 * The progress notifications of one awaited execution: one per output, and while the cell is
 * silent a keep-alive every {@link executionKeepAliveMs} saying it still runs, with the time
 * elapsed and the execution id (once known), so clients that time out idle calls do not.
 *
 * Guarantees: progress values only grow (outputs seen plus keep-alives sent); keep-alives start
 * with the wait and stop at {@link ExecutionProgress.stop} (idempotent); an output restarts the
 * silence. Sends nothing itself when the call has no progress token (`reportProgress` is then a
 * no-op). Does not coalesce outputs.
 */
export class ExecutionProgress {
  readonly #clock: Clock;
  readonly #context: ToolCallContext;
  readonly #cellId: string;
  readonly #intervalMs: number;
  readonly #startedAt: number;
  #lastActivity: number;
  #executionId: string | undefined;
  #outputs = 0;
  #keepAlives = 0;
  #timer: Timer | undefined;
  #stopped = false;

  public constructor(options: {
    readonly clock: Clock;
    readonly context: ToolCallContext;
    readonly cellId: string;
    readonly intervalMs?: number;
  }) {
    this.#clock = options.clock;
    this.#context = options.context;
    this.#cellId = options.cellId;
    this.#intervalMs = options.intervalMs ?? executionKeepAliveMs;
    this.#startedAt = this.#clock.now();
    this.#lastActivity = this.#startedAt;
    this.arm();
  }

  /** The owner accepted the execution: keep-alives name it from now on. */
  public started(executionId: string): void {
    this.#executionId = executionId;
  }

  /** An output arrived. */
  public output(): void {
    if (this.#stopped) return;
    this.#outputs += 1;
    this.#lastActivity = this.#clock.now();
    this.#context.reportProgress(
      this.#outputs + this.#keepAlives,
      `cell ${this.#cellId}: ${this.#outputs} output${this.#outputs === 1 ? '' : 's'} so far`,
    );
    this.arm();
  }

  public stop(): void {
    this.#stopped = true;
    this.#timer?.cancel();
    this.#timer = undefined;
  }

  private arm(): void {
    this.#timer?.cancel();
    this.#timer = this.#clock.setTimer(this.#intervalMs, () => this.keepAlive());
  }

  private keepAlive(): void {
    if (this.#stopped) return;
    this.#keepAlives += 1;
    const now = this.#clock.now();
    const elapsed = seconds(now - this.#startedAt);
    const silent = seconds(now - this.#lastActivity);
    const execution =
      this.#executionId === undefined ? 'waiting for the execution to start' : `execution ${this.#executionId}`;
    const since = this.#outputs === 0 ? 'no output yet' : `no new output for ${silent} s`;
    this.#context.reportProgress(
      this.#outputs + this.#keepAlives,
      `cell ${this.#cellId} still running after ${elapsed} s (${since}; ${execution})`,
    );
    this.arm();
  }
}

function seconds(ms: number): number {
  return Math.round(ms / 1000);
}
