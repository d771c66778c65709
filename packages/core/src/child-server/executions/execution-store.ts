import type { ExecutionResult, ExecutionState } from '../../ports/notebook-handle.js';

/** How an execution looks to an agent (the original server's words). */
export type ExecutionStatus = 'queued' | 'running' | 'done' | 'error' | 'aborted';

/**
 * The last known state of one execution this child started or read: the port's
 * {@link ExecutionState} (or a finished {@link ExecutionResult}) with its notebook, and its status
 * in the agent's words. Made by {@link executionRecordOf} (tests and a lost execution's end aside).
 */
export interface ExecutionRecord extends Omit<ExecutionState, 'status'> {
  readonly notebookId: string;
  readonly status: ExecutionStatus;
}

/** The record of an execution of notebook `notebookId`, as its handle answered it. */
export function executionRecordOf(state: ExecutionState | ExecutionResult, notebookId: string): ExecutionRecord {
  return {
    executionId: state.executionId,
    notebookId,
    cellId: state.cellId,
    status: executionStatusOf(state.status),
    outputs: state.outputs,
    executionCount: state.executionCount,
    ...(state.kernelNotice === undefined ? {} : { kernelNotice: state.kernelNotice }),
    ...(state.note === undefined ? {} : { note: state.note }),
  };
}

/** How many executions the store remembers by default. */
export const defaultExecutionStoreCapacity = 256;

/**
 * Characters of outputs above which a record is kept without them: its notebook (the daemon)
 * holds them and `get_results` reads them from there; a copy here would hold every large output
 * twice in this process (the notebook handle's cells hold them too).
 */
export const defaultMaxKeptOutputChars = 1_000_000;

/** Characters of every string in `value` (an output's texts, data, traceback lines). */
function charsOf(value: unknown): number {
  if (typeof value === 'string') return value.length;
  if (Array.isArray(value)) return value.reduce<number>((sum, item) => sum + charsOf(item), 0);
  if (typeof value === 'object' && value !== null) {
    let sum = 0;
    for (const item of Object.values(value)) sum += charsOf(item);
    return sum;
  }
  return 0;
}

/** The agent-facing status of a port result or state (`ok` ⇒ `done`, `timeout` ⇒ `running`). */
export function executionStatusOf(status: ExecutionResult['status'] | ExecutionState['status']): ExecutionStatus {
  switch (status) {
    case 'ok':
      return 'done';
    case 'timeout':
      return 'running';
    default:
      return status;
  }
}

/**
 * Executions by id (id → notebook, cell, last known state), so `get_results` can find the
 * notebook of an execution without an active session. Bounded: beyond the capacity the least
 * recently recorded entry is forgotten, and a record whose outputs exceed `maxKeptOutputChars` is
 * kept without them (its note says so; its notebook answers them). In memory only: it does not
 * survive the child process.
 */
export class ExecutionStore {
  readonly #records = new Map<string, ExecutionRecord>();

  public constructor(
    private readonly capacity = defaultExecutionStoreCapacity,
    private readonly maxKeptOutputChars = defaultMaxKeptOutputChars,
  ) {}

  /** Records (or refreshes) an execution; it becomes the most recent entry. */
  public record(record: ExecutionRecord): void {
    this.#records.delete(record.executionId);
    this.#records.set(record.executionId, this.kept(record));
    while (this.#records.size > this.capacity) {
      const oldest = this.#records.keys().next().value as string;
      this.#records.delete(oldest);
    }
  }

  /** `record`, or it without its outputs when they are over the size kept here. */
  private kept(record: ExecutionRecord): ExecutionRecord {
    const chars = charsOf(record.outputs);
    if (chars <= this.maxKeptOutputChars) return record;
    const omitted = `Its ${record.outputs.length} output(s) (${chars} characters) are not kept in this process: connect its notebook (${record.notebookId}) to read them.`;
    return { ...record, outputs: [], note: record.note === undefined ? omitted : `${record.note} ${omitted}` };
  }

  public get(executionId: string): ExecutionRecord | undefined {
    return this.#records.get(executionId);
  }

  public get size(): number {
    return this.#records.size;
  }
}
