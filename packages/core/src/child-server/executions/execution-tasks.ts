import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import type { EraDialect } from '../../contributions/protocol-admission.js';
import type { Timer } from '../../ports/clock.js';
import type { NotebookHandle } from '../../ports/notebook-handle.js';
import { accessWhenReady } from '../access-when-ready.js';
import type { ChildServerDependencies } from '../child-server-dependencies.js';
import { subKey } from '../idempotency-sub-key.js';
import { errorResult, type ToolCallContext, type ToolTaskDeclaration } from '../tools/child-tool-registry.js';
import { InvalidParamsError, ToolError, toToolFailure } from '../tools/to-tool-failure.js';
import { type ExecutionRecord, executionRecordOf } from './execution-store.js';
import type { TaskRuns } from './task-runs.js';
import { type TaskState, type TaskStatus, taskStateOf } from './task-state.js';

/** `_meta` key tying a message to a task (2025-11-25). */
export const relatedTaskMetaKey = 'io.modelcontextprotocol/related-task';

/** How often a client is asked to poll a task (`pollInterval` / `pollIntervalMs`). */
export const taskPollIntervalMs = 1_000;

/** How many tasks this child remembers (when each was created, whether it was cancelled). */
const maxRememberedTasks = 256;

/** Prefix of the task id of a `run_all_cells` task; the execution ids of its cells follow, comma-separated. */
const runAllPrefix = 'run_all_cells:';

/** What this child remembers of a task it created or was asked about (the daemon holds the rest). */
interface TaskEntry {
  readonly createdAt: string;
  lastUpdatedAt: string;
  lastStatus: TaskStatus | undefined;
  /** The client cancelled it (`tasks/cancel`): it stays `cancelled` whatever the execution does. */
  cancelled: boolean;
}

export interface ExecutionTasksInit {
  readonly deps: ChildServerDependencies;
  /** The `get_results` answer for an execution id (as `execute_cell` would have answered it). */
  readonly readResult: (executionId: string) => Promise<CallToolResult>;
  /** Sends a task's status notification (the connection's era delivers it: see `TaskDialect.statusNotification`). */
  readonly notify: (method: string, params: Record<string, unknown>) => void;
  /** How the connection speaks of tasks (see `EraDialect`). */
  readonly dialect: () => EraDialect;
  /** How long a task request waits for a session being brought back. */
  readonly recoveryWaitMs: number;
}

/**
 * Executions as MCP tasks, worded as the connection's era has them (`TaskDialect`). The task id is
 * the daemon's execution id (a `run_code` task's is that of a scratch run the daemon keeps as an
 * execution; a `run_all_cells` task's is `run_all_cells:` and the execution ids of its cells, in
 * order), so any child answers for any task by asking the daemon (`get_execution`): after a child SIGKILL, an
 * exit 75 and a daemon restart (the daemon journals finished executions) alike. Only the active or
 * a parked session's notebook is asked, the one this child last saw the execution in first.
 *
 * Statuses: queued or running ⇒ `working`; ended (`done`, or `error` for an exception in the cell)
 * ⇒ `completed`; `aborted` (the kernel died, the daemon stopped under it) ⇒ `failed` where the
 * client asks for the result (the legacy rule: a tool result with `isError`), `completed` with an
 * `isError` result where the task carries its result (native: `failed` is for JSON-RPC errors
 * there); a task the client cancelled ⇒ `cancelled`.
 * Cancelling stops the execution (the daemon's `cancel_execution`: dequeued, or the kernel
 * interrupted). What this child alone knows (created when, cancelled) is lost with it: a later
 * child says `createdAt` is when it first heard of the task.
 */
export class ExecutionTasks implements TaskRuns {
  readonly #init: ExecutionTasksInit;
  readonly #entries = new Map<string, TaskEntry>();
  /** The executions this child follows to their end, by id: settled (and removed) when each ends. */
  readonly #follows = new Map<string, Promise<void>>();
  /** The task ids each open notification stream watches (native `taskIds`), by stream. */
  readonly #watched = new Map<string, readonly string[]>();
  #watchTimer: Timer | undefined;

  public constructor(init: ExecutionTasksInit) {
    this.#init = init;
  }

  /**
   * Whether this `tools/call` of a tool declaring `task` runs as a task: the client asked for one
   * as its era has it (`TaskDialect.requested`).
   */
  public requested(
    task: ToolTaskDeclaration | undefined,
    params: Readonly<Record<string, unknown>>,
    declared: Readonly<Record<string, unknown>> | undefined,
  ): boolean {
    return task !== undefined && this.#init.dialect().tasks.requested(params, declared);
  }

  /**
   * Starts the call as a task (the tool's `task.start`): the execution is queued in the daemon
   * (so `tasks/get` finds it) before the answer goes out. Where the server decides
   * (`resultWithinMs`), a run that ends within that time is answered as the tool would, and bad
   * arguments and refusals are the tool's error result; where the client asked for a task, which
   * must be answered with a task or an error, they are an invalid-params error.
   */
  public async start(
    declaration: ToolTaskDeclaration,
    args: unknown,
    context: ToolCallContext,
  ): Promise<Record<string, unknown>> {
    const { tasks } = this.#init.dialect();
    try {
      const taskId = await declaration.start(args, context, this);
      this.entry(taskId).lastStatus ??= 'working';
      if (tasks.resultWithinMs !== undefined && (await this.endsWithin(taskId, tasks.resultWithinMs, context.signal))) {
        this.#entries.delete(taskId);
        return (await this.result(taskId)) as Record<string, unknown>;
      }
      return tasks.created(this.taskJson(taskId, { status: 'working', statusMessage: 'Queued.', terminal: false }));
    } catch (error) {
      const failure = toToolFailure(error);
      if (!(failure instanceof ToolError || failure instanceof InvalidParamsError)) throw failure;
      if (tasks.resultWithinMs === undefined) throw new InvalidParamsError(failure.message);
      return errorResult(failure.message) as Record<string, unknown>;
    }
  }

  /** Whether the task ends within `ms` (polled; sooner when an execution this child follows ends). */
  public async endsWithin(taskId: string, ms: number, signal: AbortSignal): Promise<boolean> {
    const deadline = this.#init.deps.clock.now() + ms;
    for (;;) {
      if ((await this.poll(taskId, signal)).terminal) return true;
      if (this.#init.deps.clock.now() >= deadline) return false;
      await this.settledOrLater(taskId, signal);
    }
  }

  /** `tasks/get`: the task now (with the result, once completed, where the task carries it). */
  public async get(taskId: string, signal: AbortSignal): Promise<Record<string, unknown>> {
    const state = await this.poll(taskId, signal);
    if (!this.#init.dialect().tasks.carriesResult) return this.taskJson(taskId, state);
    // An aborted run is a completed task whose result says so (`failed` is for JSON-RPC errors there).
    const shown: TaskState = state.status === 'failed' ? { ...state, status: 'completed' } : state;
    const task = this.taskJson(taskId, shown);
    return shown.status === 'completed' ? { ...task, result: await this.result(taskId) } : task;
  }

  /** `tasks/result` (where the client asks for the result): waits until the task ends, then answers what the call would have. */
  public async waitForResult(taskId: string, signal: AbortSignal): Promise<CallToolResult> {
    for (;;) {
      const state = await this.poll(taskId, signal);
      if (state.terminal) {
        const result = await this.result(taskId);
        const meta = { ...(result._meta ?? {}), [relatedTaskMetaKey]: { taskId } };
        return { ...result, ...(state.status === 'failed' ? { isError: true } : {}), _meta: meta };
      }
      await this.settledOrLater(taskId, signal);
    }
  }

  /**
   * Tasks the client created with earlier children (the proxy hands their ids over), oldest first:
   * listed by `tasks/list` before any this child creates or is asked about. Each is read from the
   * daemon when listed; nothing else is known of it here.
   */
  public remember(taskIds: readonly string[]): void {
    for (const taskId of taskIds) this.entry(taskId);
  }

  /**
   * `tasks/list`: the tasks handed over ({@link remember}), then those this child created
   * or was asked about, newest last.
   */
  public async list(signal: AbortSignal): Promise<Record<string, unknown>> {
    const tasks: Record<string, unknown>[] = [];
    for (const taskId of this.#entries.keys()) {
      try {
        tasks.push(this.taskJson(taskId, await this.poll(taskId, signal)));
      } catch (error) {
        this.#init.deps.logger.debug('a task could not be read for tasks/list', { taskId, error });
      }
    }
    return { tasks };
  }

  /**
   * `tasks/cancel`: stops the execution(s) (dequeued, or the kernel interrupted) and marks the
   * task `cancelled`; answered as the era has it (`TaskDialect.acknowledgesCancel`): with the
   * cancelled task, a task already ended refused (-32602), or with an acknowledgement either way.
   */
  public async cancel(taskId: string, signal: AbortSignal): Promise<Record<string, unknown>> {
    const { acknowledgesCancel } = this.#init.dialect().tasks;
    const state = await this.poll(taskId, signal);
    if (state.terminal) {
      if (!acknowledgesCancel) throw new InvalidParamsError(`Task ${taskId} already ended (${state.status}).`);
      return {};
    }
    const handle = this.handleFor(this.executionIds(taskId)[0] as string);
    let goesOn = false;
    for (const executionId of this.executionIds(taskId).reverse()) {
      if (!handle?.cancelExecution) {
        goesOn = (await handle?.interruptKernel()) === 'still_running';
        break;
      }
      if ((await handle.cancelExecution(executionId)) === 'still_running') goesOn = true;
    }
    // An execution that ignores the interrupt was not cancelled: the task goes on, and says so.
    if (goesOn) {
      throw new McpError(
        ErrorCode.InternalError,
        `Task ${taskId} was not cancelled: its code was interrupted and is still running (it ignores the interrupt). The task goes on; restart_kernel stops it (the kernel's variables are lost).`,
      );
    }
    const entry = this.entry(taskId);
    entry.cancelled = true;
    const cancelled: TaskState = { status: 'cancelled', statusMessage: 'Cancelled by the client.', terminal: true };
    this.changed(taskId, cancelled);
    return acknowledgesCancel ? {} : this.taskJson(taskId, cancelled);
  }

  public async cell(args: unknown, context: ToolCallContext): Promise<string> {
    const { cell_id: cellId, expected_version: expectedVersion } = (args ?? {}) as Record<string, unknown>;
    if (typeof cellId !== 'string' || cellId.length === 0) throw new ToolError('cell_id: a cell id is required.');
    const access = await accessWhenReady(this.#init.deps, 'runtime', context);
    return this.queue(access.handle, cellId, {
      idempotencyKey: context.idempotencyKey,
      expectedVersion: typeof expectedVersion === 'string' ? expectedVersion : undefined,
      allowInput: context.allowInput === true,
    });
  }

  /** `run_code` as a task: a scratch run the daemon keeps as an execution (its `cell_id` is `scratch`). */
  public async code(args: unknown, context: ToolCallContext): Promise<string> {
    const { code } = (args ?? {}) as Record<string, unknown>;
    if (typeof code !== 'string') throw new ToolError('code: the code to run is required.');
    const access = await accessWhenReady(this.#init.deps, 'runtime', context);
    const { handle } = access;
    if (!handle.startScratch) {
      throw new ToolError(
        `Notebook ${handle.notebookId} cannot keep a scratch run as a task (its backend does not offer it); call run_code without a task, or add a cell with create_cell(and_run=true).`,
      );
    }
    const state = await handle.startScratch(code, { allowInput: context.allowInput === true });
    this.#init.deps.executions.record(executionRecordOf(state, handle.notebookId));
    return state.executionId;
  }

  public async allCells(context: ToolCallContext): Promise<string> {
    const access = await accessWhenReady(this.#init.deps, 'runtime', context);
    const cells = (await access.handle.listCells()).filter((cell) => cell.cellType === 'code');
    if (cells.length === 0) throw new ToolError('The notebook has no code cell to run.');
    const ids: string[] = [];
    for (const cell of cells) {
      // Each runs only when the one before ended ok: the daemon stops the run at the first error.
      const runAfter = ids.at(-1);
      ids.push(
        await this.queue(access.handle, cell.id, {
          idempotencyKey: subKey(context, `execute:${cell.id}`),
          allowInput: context.allowInput === true,
          ...(runAfter === undefined ? {} : { runAfter }),
        }),
      );
    }
    return `${runAllPrefix}${ids.join(',')}`;
  }

  /**
   * Queues one cell and answers its execution id once the daemon accepted it; the execution is
   * followed on (this child records how it ended and tells the client its task's status).
   */
  private queue(
    handle: NotebookHandle,
    cellId: string,
    options: {
      readonly idempotencyKey: string | undefined;
      readonly expectedVersion?: string | undefined;
      readonly allowInput: boolean;
      readonly runAfter?: string;
    },
  ): Promise<string> {
    const { deps } = this.#init;
    let started: ((executionId: string) => void) | undefined;
    const accepted = new Promise<string>((resolve) => {
      started = resolve;
    });
    const run = handle.executeCell(cellId, {
      // Followed for as long as it runs; the task outlives this follow anyway.
      timeoutMs: 24 * 3_600_000,
      idempotencyKey: options.idempotencyKey,
      ...(options.expectedVersion === undefined ? {} : { expectedVersion: options.expectedVersion }),
      onStarted: (executionId) => started?.(executionId),
      ...(options.allowInput ? { allowInput: true } : {}),
      ...(options.runAfter === undefined ? {} : { runAfter: options.runAfter }),
    });
    let executionId: string | undefined;
    const settled = run.then(
      (result) => {
        deps.executions.record(executionRecordOf(result, handle.notebookId));
        this.#follows.delete(result.executionId);
        this.afterSettled(result.executionId);
      },
      (error: unknown) => {
        if (executionId !== undefined) this.#follows.delete(executionId);
        deps.logger.debug('following a task execution ended', { error });
      },
    );
    return Promise.race([accepted, run.then((result) => result.executionId)]).then((id) => {
      executionId = id;
      if (!deps.executions.get(id)) {
        deps.executions.record({
          executionId: id,
          notebookId: handle.notebookId,
          cellId,
          status: 'queued',
          outputs: [],
          executionCount: null,
        });
        this.#follows.set(id, settled);
      }
      return id;
    });
  }

  /** After an execution this child followed ended: the status of every task it belongs to, told. */
  private afterSettled(executionId: string): void {
    for (const taskId of this.#entries.keys()) {
      if (!this.executionIds(taskId).includes(executionId)) continue;
      const controller = new AbortController();
      this.poll(taskId, controller.signal).catch((error: unknown) =>
        this.#init.deps.logger.debug('a task status could not be read', { taskId, error }),
      );
    }
  }

  /** The task's state now, from the daemon; tells the client when its status changed. */
  private async poll(taskId: string, signal: AbortSignal): Promise<TaskState> {
    const ids = this.executionIds(taskId);
    const { deps } = this.#init;
    await deps.recovery.whenRecovered(this.#init.recoveryWaitMs, signal);
    const records: ExecutionRecord[] = [];
    for (const executionId of ids) records.push(await this.read(executionId, taskId));
    const entry = this.entry(taskId);
    const state = entry.cancelled
      ? { status: 'cancelled' as const, statusMessage: 'Cancelled by the client.', terminal: true }
      : taskStateOf(records);
    this.changed(taskId, state);
    return state;
  }

  /**
   * What the call would have answered: `get_results` of each execution, one after the other, up to
   * the first that did not end ok (a run of several cells then names the cells not run after it).
   */
  private async result(taskId: string): Promise<CallToolResult> {
    const ids = this.executionIds(taskId);
    const content: CallToolResult['content'] = [];
    const notRun: string[] = [];
    let stopped = false;
    for (const executionId of ids) {
      if (stopped) {
        notRun.push((await this.read(executionId, taskId)).cellId);
        continue;
      }
      content.push(...(await this.#init.readResult(executionId)).content);
      stopped = ids.length > 1 && (await this.read(executionId, taskId)).status !== 'done';
    }
    if (notRun.length > 0) content.push({ type: 'text', text: JSON.stringify({ not_run: notRun }) });
    const aborted = this.#entries.get(taskId)?.lastStatus === 'failed';
    // An aborted run's result says it failed (where the task carries it, its status says completed).
    return { content, ...(aborted ? { isError: true } : {}) };
  }

  /** One execution's record from its notebook, or as last known when its notebook is not connected. */
  private async read(executionId: string, taskId: string): Promise<ExecutionRecord> {
    const { deps } = this.#init;
    const handle = this.handleFor(executionId);
    const known = deps.executions.get(executionId);
    if (handle) {
      try {
        const state = await handle.getExecution(executionId);
        const record = executionRecordOf(state, handle.notebookId);
        deps.executions.record(record);
        return record;
      } catch (error) {
        deps.logger.debug('reading a task execution from its notebook failed', { executionId, error });
      }
    }
    if (known && (known.status === 'queued' || known.status === 'running') && this.lost(known.notebookId)) {
      // Its notebook is gone for good (not saved, and its daemon restarted): how it ended is unknown.
      const evalue = `Notebook ${known.notebookId} is no longer open (it was not saved to a file and its daemon restarted, or it was closed): how this execution ended is unknown.`;
      const gone = { output_type: 'error', ename: 'NotebookClosed', evalue, traceback: [] };
      return { ...known, status: 'aborted', outputs: [...known.outputs, gone] };
    }
    if (known) return known;
    throw new McpError(
      ErrorCode.InvalidParams,
      `Task not found: ${taskId} (no connected notebook knows execution ${executionId}; connect the notebook it ran in, then ask again).`,
    );
  }

  /** The notebook is not connected here and will not come back (its rejoin was refused, or gave up). */
  private lost(notebookId: string): boolean {
    const { slot } = this.#init.deps;
    const session = slot.find(notebookId);
    if (session && !session.handle.isClosed) return false;
    const drop = slot.lastDrop;
    return drop?.notebookId === notebookId && (drop.reason === 'evicted' || drop.detail !== undefined);
  }

  /** The handle of the notebook an execution is in: the one it was last seen in, else the active session's. */
  private handleFor(executionId: string): NotebookHandle | undefined {
    const { slot, executions } = this.#init.deps;
    const notebookId = executions.get(executionId)?.notebookId ?? slot.active?.handle.notebookId;
    const session = notebookId === undefined ? undefined : slot.find(notebookId);
    return session && !session.handle.isClosed ? session.handle : undefined;
  }

  /** The task (known to this child) an execution belongs to. */
  public taskOf(executionId: string): string | undefined {
    for (const taskId of this.#entries.keys()) if (this.executionIds(taskId).includes(executionId)) return taskId;
    return undefined;
  }

  /** The execution ids a task id names (refused, -32602, when it names none). */
  public executionIds(taskId: string): string[] {
    const ids = taskId.startsWith(runAllPrefix) ? taskId.slice(runAllPrefix.length).split(',') : [taskId];
    if (ids.some((id) => id.trim().length === 0))
      throw new McpError(ErrorCode.InvalidParams, `Task not found: ${taskId}`);
    return ids;
  }

  private entry(taskId: string): TaskEntry {
    let entry = this.#entries.get(taskId);
    if (!entry) {
      const now = new Date(this.#init.deps.clock.now()).toISOString();
      entry = { createdAt: now, lastUpdatedAt: now, lastStatus: undefined, cancelled: false };
      this.#entries.set(taskId, entry);
      // Bounded: the oldest is forgotten (the daemon still answers for it; only createdAt is lost).
      if (this.#entries.size > maxRememberedTasks) this.#entries.delete(this.#entries.keys().next().value as string);
    }
    return entry;
  }

  /** Records the state; a change of status is told ({@link announce}) and dated. */
  private changed(taskId: string, state: TaskState): void {
    const entry = this.entry(taskId);
    if (entry.lastStatus === state.status) return;
    const first = entry.lastStatus === undefined;
    entry.lastStatus = state.status;
    entry.lastUpdatedAt = new Date(this.#init.deps.clock.now()).toISOString();
    if (!first) this.announce(taskId, state);
  }

  /** Tells the client the task's state now, in its era's notification (with the result where the task carries it). */
  private announce(taskId: string, state: TaskState): void {
    const { statusNotification, carriesResult } = this.#init.dialect().tasks;
    if (!carriesResult) {
      this.#init.notify(statusNotification, this.taskJson(taskId, state));
      return;
    }
    const controller = new AbortController();
    this.get(taskId, controller.signal).then(
      (task) => this.#init.notify(statusNotification, task),
      (error: unknown) => this.#init.deps.logger.debug('a task notification was not made', { taskId, error }),
    );
  }

  /**
   * A notification stream (native `subscriptions/listen` with `taskIds`) watches these tasks: each
   * is told now as it stands, then whenever its status changes (polled every poll interval, as
   * runs of other children are followed by nobody here), until it ends or the stream closes.
   */
  public watch(stream: string, taskIds: readonly string[]): void {
    this.#watched.set(stream, taskIds);
    for (const taskId of taskIds) {
      const controller = new AbortController();
      this.poll(taskId, controller.signal).then(
        (state) => this.announce(taskId, state),
        (error: unknown) => this.#init.deps.logger.debug('a watched task could not be read', { taskId, error }),
      );
    }
    this.scheduleWatch();
  }

  /** The stream closed. */
  public unwatch(stream: string): void {
    this.#watched.delete(stream);
  }

  private scheduleWatch(): void {
    if (this.#watchTimer || this.#watched.size === 0) return;
    this.#watchTimer = this.#init.deps.clock.setTimer(taskPollIntervalMs, () => {
      this.#watchTimer = undefined;
      const open = [...new Set([...this.#watched.values()].flat())].filter((taskId) => {
        const status = this.#entries.get(taskId)?.lastStatus;
        return status !== 'completed' && status !== 'failed' && status !== 'cancelled';
      });
      if (open.length === 0) return;
      const controller = new AbortController();
      Promise.allSettled(open.map((taskId) => this.poll(taskId, controller.signal))).then(() => this.scheduleWatch());
    });
  }

  /** Resolves when one of the task's executions this child follows settled, or after one poll interval. */
  private settledOrLater(taskId: string, signal: AbortSignal): Promise<void> {
    const follows = this.executionIds(taskId).flatMap((id) => this.#follows.get(id) ?? []);
    const settled = follows.length > 0 ? Promise.race(follows) : undefined;
    return new Promise((resolve, reject) => {
      const timer = this.#init.deps.clock.setTimer(taskPollIntervalMs, () => done());
      const onAbort = (): void => {
        timer.cancel();
        reject(signal.reason ?? new Error('cancelled'));
      };
      const done = (): void => {
        timer.cancel();
        signal.removeEventListener('abort', onAbort);
        resolve();
      };
      if (signal.aborted) return onAbort();
      signal.addEventListener('abort', onAbort, { once: true });
      settled?.then(done, done);
    });
  }

  /** The task as the connection's era spells it. */
  private taskJson(taskId: string, state: TaskState): Record<string, unknown> {
    const entry = this.entry(taskId);
    return this.#init.dialect().tasks.spell({
      taskId,
      status: state.status,
      statusMessage: state.statusMessage,
      createdAt: entry.createdAt,
      lastUpdatedAt: entry.lastUpdatedAt,
      pollIntervalMs: taskPollIntervalMs,
    });
  }
}
