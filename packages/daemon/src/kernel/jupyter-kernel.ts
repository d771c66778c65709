import type { Logger, Subscription } from '@nteract-mcp/foundation';
import { type DisplayUpdate, type OutputChange, OutputCollector } from '@nteract-mcp/output-shaping';
import type { WireOutput } from '@nteract-mcp/runtimed-protocol';
import { DaemonError } from '../daemon-error.js';
import type { Kernelspec } from './find-kernelspec.js';
import type { JupyterMessage } from './jupyter-message.js';
import { KernelProcess, type KernelProcessExit, type KernelProcessOptions } from './kernel-process.js';
import type { KernelRecords } from './kernel-records.js';

/**
 * What an interrupt did: the execution that was running ended (`interrupted`), nothing was running
 * (`nothing_running`), or it still runs after the kernel had a few seconds to stop it
 * (`still_running`: e.g. code that ignores SIGINT; only a restart stops it).
 */
export type KernelInterruptOutcome = 'interrupted' | 'nothing_running' | 'still_running';

/**
 * `starting` until the first kernel answers; `idle`/`busy` mirror the kernel's iopub status for
 * our shell requests; `restarting` during {@link JupyterKernel.restart}; `dead` after an
 * unexpected exit, a failed restart, or {@link JupyterKernel.shutdown}.
 */
export type KernelStatus = 'starting' | 'idle' | 'busy' | 'restarting' | 'dead';

/** A change of an execution's outputs (see {@link ExecuteOptions.onOutput}). */
export type ExecutionOutputChange = Exclude<OutputChange, { readonly kind: 'displayUpdate' }>;

/** The outcome of one {@link JupyterKernel.execute}. */
export interface KernelExecution {
  /**
   * `ok`/`error` as the kernel replied. `aborted`: the kernel skipped it (an earlier queued
   * execution failed), or it was still pending when the kernel restarted, died or shut down.
   */
  readonly status: 'ok' | 'error' | 'aborted';
  readonly executionCount: number | null;
  /** nbformat 4 outputs; see `OutputCollector` (`@nteract-mcp/output-shaping`) for merging and clearing rules. */
  readonly outputs: readonly WireOutput[];
}

export interface ExecuteOptions {
  /** Jupyter's `store_history` (default true); a scratch run passes false (no history, no new execution count). */
  readonly storeHistory?: boolean;
  /**
   * Called for each change of the outputs: an output added or changed at an index (a merged stream
   * says what it appended; an updated display is passed whole), or all cleared by `clear_output`
   * (with `wait`, just before the next output); with the outputs as they are now, not copied (read
   * them before returning). Thrown errors are logged and ignored.
   */
  readonly onOutput?: (change: ExecutionOutputChange, outputs: readonly WireOutput[]) => void;
  /**
   * Jupyter's `stop_on_error` (default true): when this execution fails, executions already
   * queued behind it in the kernel are skipped and resolve `aborted`.
   */
  readonly stopOnError?: boolean;
  /**
   * Answers the code's `input()` / `getpass()` (Jupyter's `allow_stdin: true`): called with the
   * prompt and whether it is a password; the kernel gets what it resolves with. Without it the
   * code's `input()` raises `StdinNotImplementedError`.
   */
  readonly onInput?: (prompt: string, password: boolean) => Promise<string>;
}

export interface StartKernelOptions {
  readonly spec: Kernelspec;
  /** Working directory of the kernel process. */
  readonly cwd: string;
  /** Diagnostics and the kernel's own stdout/stderr lines; without it they go to our stderr. */
  readonly logger?: Logger;
  /** How long the kernel may take to answer `kernel_info_request`; default 60 000 ms. */
  readonly startupTimeoutMs?: number;
  /** Base environment of the kernel; default `process.env` (`spec.env` and `JPY_PARENT_PID` go on top). */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Where each kernel process is recorded while it runs (for reaping after a daemon crash). */
  readonly records?: KernelRecords;
  /** Where connection files go (a private 0700 directory each, made under it); default the temp dir. */
  readonly connectionDir?: string;
}

/**
 * How the kernel process ended. `reason` is `died` for an exit nobody asked for, `shutdown` for
 * the exit caused by {@link JupyterKernel.shutdown}. Exits caused by `restart()` are not reported.
 */
export interface KernelExitInfo {
  readonly code: number | null;
  readonly signal: string | null;
  readonly reason: 'died' | 'shutdown';
}

/**
 * How long a kernel has to answer `kernel_info_request` before it is killed and its start fails:
 * well under an MCP client's 60 s request timeout, so the agent hears why (ipykernel answers in 1–3 s).
 */
const defaultStartupTimeoutMs = 20_000;
const interruptReplyTimeoutMs = 10_000;
/** How long an interrupted execution has to end before the interrupt is reported as not effective. */
const interruptVerifyMs = 5_000;
/** How often an interrupt is sent again while the execution it was for still runs. */
const interruptResendMs = 1_000;
/** After the `idle` of a request not answered yet, how long its reply may take before the execution ends `aborted`. */
const missingReplyGraceMs = 2_000;
/** After the reply, how long iopub may stay silent before we stop waiting for the `idle` status. */
const idleGraceMs = 5_000;

class PendingExecution {
  public readonly collector = new OutputCollector();
  public msgId: string | undefined;
  public reply: { readonly status: KernelExecution['status']; readonly executionCount: number | null } | undefined;
  public idle = false;
  public done = false;
  /** Resolves when the execution has finished, however. */
  public readonly finished: Promise<void>;
  public markFinished: () => void = () => undefined;
  /**
   * Resolves once the kernel shows it runs this code (`execute_input` or a first output): from
   * then on an interrupt reaches the code (ipykernel ignores SIGINT until its handler runs).
   */
  public readonly started: Promise<void>;
  public markStarted: () => void = () => undefined;
  public graceTimer: NodeJS.Timeout | undefined;

  public constructor(
    public readonly code: string,
    public readonly options: ExecuteOptions,
    public readonly resolve: (result: KernelExecution) => void,
  ) {
    this.finished = new Promise((done) => {
      this.markFinished = done;
    });
    this.started = new Promise((started) => {
      this.markStarted = started;
    });
  }
}

/**
 * A running Jupyter kernel (e.g. ipykernel) spoken to over ZeroMQ with signed messages.
 *
 * Guarantees: executions run in call order (also across a restart: calls made while restarting
 * wait for the new kernel); every execution promise settles, resolving `aborted` when the kernel
 * restarts, dies or shuts down before it finished; only iopub messages answering our own requests
 * are looked at; the kernel's stdout/stderr never reach our stdout; after `shutdown()` no process,
 * socket or connection file is left behind. Public methods reject only with {@link DaemonError}.
 * `interrupt` says whether the running execution ended within a few seconds of it.
 * Does not guarantee: that interrupting stops the code (the kernel decides); that the kernel
 * survives its code (a crash makes the status `dead`; `restart()` brings a new one); that
 * grandchildren started by the kernel die with a graceful shutdown; an answer to `input()` for an
 * execution without `onInput` (its requests say `allow_stdin: false`: `input()` raises in the kernel).
 */
export class JupyterKernel {
  private process: KernelProcess;
  private state: KernelStatus = 'idle';
  private shutdownRequested = false;
  private shutdownDone: Promise<void> | undefined;
  private readonly pending = new Set<PendingExecution>();
  private readonly byMsgId = new Map<string, PendingExecution>();
  private readonly retired = new WeakSet<KernelProcess>();
  private submitChain: Promise<void> = Promise.resolve();
  private lifecycle: Promise<void> = Promise.resolve();
  private readonly statusListeners = new Set<(status: KernelStatus) => void>();
  private readonly exitListeners = new Set<(info: KernelExitInfo) => void>();
  private readonly displayListeners = new Set<(update: DisplayUpdate) => void>();
  private readonly logger: Logger | undefined;

  private constructor(
    private readonly options: StartKernelOptions,
    first: KernelProcess,
  ) {
    this.process = first;
    this.logger = options.logger;
  }

  /**
   * Launches `spec.argv` (with `{connection_file}` replaced by a fresh 0600 connection file in a
   * private 0700 dir under `connectionDir`, default the temp dir: random free ports on 127.0.0.1,
   * random HMAC key) in `cwd`, with env `env` (default `process.env`) + `spec.env` +
   * `JPY_PARENT_PID` (an orphaned ipykernel exits), and resolves once
   * the kernel has answered `kernel_info_request` and its iopub is flowing.
   * Rejects with `kernelStartFailed` (after killing the process) if it cannot be spawned, exits,
   * or does not answer within `startupTimeoutMs`; the message carries the tail of its stderr.
   */
  public static async start(options: StartKernelOptions): Promise<JupyterKernel> {
    const logger = options.logger?.child('daemon:JupyterKernel');
    const scoped: StartKernelOptions = logger === undefined ? options : { ...options, logger };
    let kernel: JupyterKernel | undefined;
    const first = await KernelProcess.launch(JupyterKernel.processOptions(scoped, () => kernel));
    kernel = new JupyterKernel(scoped, first);
    if (first.exit !== undefined) kernel.handleExit(first, first.exit);
    return kernel;
  }

  private static processOptions(
    options: StartKernelOptions,
    owner: () => JupyterKernel | undefined,
  ): KernelProcessOptions {
    return {
      spec: options.spec,
      cwd: options.cwd,
      env: options.env,
      logger: options.logger,
      ...(options.records === undefined ? {} : { records: options.records }),
      ...(options.connectionDir === undefined ? {} : { connectionDir: options.connectionDir }),
      startupTimeoutMs: options.startupTimeoutMs ?? defaultStartupTimeoutMs,
      onIopub: (process: KernelProcess, message: JupyterMessage) => owner()?.handleIopub(process, message),
      onStdin: (process: KernelProcess, message: JupyterMessage) => owner()?.handleStdin(process, message),
      onExit: (process: KernelProcess, exit: KernelProcessExit) => owner()?.handleExit(process, exit),
    };
  }

  /** The spec this kernel runs. */
  public get spec(): Kernelspec {
    return this.options.spec;
  }

  /** The current kernel process id (it changes with `restart()`). */
  public get pid(): number {
    return this.process.pid;
  }

  /** The content of the current kernel's `kernel_info_reply` (`language_info`, `implementation`, ...). */
  public get kernelInfo(): Readonly<Record<string, unknown>> {
    return this.process.kernelInfo;
  }

  /** The current status; see {@link KernelStatus}. */
  public get status(): KernelStatus {
    return this.state;
  }

  /** Called on every status change (not for repeats). */
  public onStatus(listener: (status: KernelStatus) => void): Subscription {
    return subscribe(this.statusListeners, listener);
  }

  /** Called once per kernel process exit not caused by `restart()`; see {@link KernelExitInfo}. */
  public onExit(listener: (info: KernelExitInfo) => void): Subscription {
    return subscribe(this.exitListeners, listener);
  }

  /**
   * Called for every `update_display_data` answering one of our executions, so outputs of earlier
   * executions that show that display id can be updated (the execution's own outputs already are).
   */
  public onDisplayUpdate(listener: (update: DisplayUpdate) => void): Subscription {
    return subscribe(this.displayListeners, listener);
  }

  /**
   * Runs `code` (`store_history: true`; `allow_stdin` only with `onInput`) after every execution requested
   * before it. Resolves when the kernel has replied and published all outputs of it.
   * Rejects with `kernelShutdown` after `shutdown()`, with `kernelDied` while the kernel is dead.
   */
  public execute(code: string, options: ExecuteOptions = {}): Promise<KernelExecution> {
    const unusable = this.unusableError();
    if (unusable !== undefined) return Promise.reject(unusable);
    return new Promise((resolve) => {
      const execution = new PendingExecution(code, options, resolve);
      this.pending.add(execution);
      this.submitChain = this.submitChain
        .then(() => this.lifecycle)
        .then(() => {
          if (execution.done) return;
          if (this.state === 'dead' || this.shutdownRequested) {
            this.finish(execution, 'aborted');
            return;
          }
          this.submit(execution);
        })
        .catch((error: unknown) => {
          this.logger?.error('Could not submit an execution', { error: describeError(error) });
          this.finish(execution, 'aborted');
        });
    });
  }

  /**
   * Interrupts the running execution: SIGINT to the kernel's process group for interrupt mode
   * `signal`, `interrupt_request` on control for `message`. ipykernel turns it into a
   * `KeyboardInterrupt` error in the running code. A no-op while starting or restarting.
   * ipykernel ignores SIGINT while idle and for a moment after it takes a request, before the code
   * starts: an interrupt asked before the kernel shows it runs the code (`execute_input` or a first
   * output) waits for that, up to the verify time, so that it is not lost in that window; and it is
   * sent again each second while that execution runs, within the verify time (one that reached
   * the kernel between its execute_input and the code can be lost too).
   * Rejects with `kernelShutdown` / `kernelDied` when there is no kernel to interrupt.
   */
  public async interrupt(verifyMs = interruptVerifyMs): Promise<KernelInterruptOutcome> {
    const unusable = this.unusableError();
    if (unusable !== undefined) throw unusable;
    if (this.state === 'starting' || this.state === 'restarting') return 'nothing_running';
    // The execution running now is the oldest not finished (the kernel runs them in order), also
    // when its request is still on its way to the kernel.
    const running = [...this.pending].find((execution) => !execution.done);
    if (running === undefined) return 'nothing_running';
    const begun = await Promise.race([
      running.started.then(() => 'started' as const),
      running.finished.then(() => 'finished' as const),
      new Promise<'silent'>((resolve) => setTimeout(resolve, verifyMs, 'silent').unref()),
    ]);
    // It ended before it started to run: nothing to interrupt. A kernel that never says it started
    // the code (no execute_input, no output) is signalled anyway once the wait is over.
    if (begun === 'finished') return 'nothing_running';
    // Asked again each second while it runs: an interrupt that reaches ipykernel between its
    // execute_input and the code (compiling the cell, its event loop) can be lost.
    const process = this.process;
    const deadline = Date.now() + verifyMs;
    for (;;) {
      if (this.options.spec.interruptMode === 'message') {
        const reply = await process.requestReply('control', 'interrupt_request', {}, interruptReplyTimeoutMs);
        if (reply === undefined) this.logger?.warn('Kernel did not answer interrupt_request', { pid: process.pid });
      } else if (!process.signal('SIGINT')) this.logger?.warn('Could not signal the kernel', { pid: process.pid });
      const wait = Math.max(0, Math.min(interruptResendMs, deadline - Date.now()));
      const ended = await Promise.race([
        running.finished.then(() => true),
        new Promise<false>((resolve) => setTimeout(resolve, wait, false).unref()),
      ]);
      if (ended) return 'interrupted';
      if (Date.now() >= deadline || running.done || process !== this.process) break;
    }
    this.logger?.warn('The kernel is still running the execution it was interrupted in', { pid: process.pid });
    return running.done ? 'interrupted' : 'still_running';
  }

  /**
   * Replaces the kernel process with a fresh one (all kernel state is gone; this object keeps
   * working, with a new `pid`). Executions pending when it is called resolve `aborted`; those
   * requested while it runs wait for the new kernel. A busy kernel is interrupted before it is
   * asked to shut down. Also revives a dead kernel.
   * Rejects with `kernelShutdown` after `shutdown()`, with `kernelStartFailed` if the new process
   * does not start (the status is then `dead`).
   */
  public restart(): Promise<void> {
    if (this.shutdownRequested) return Promise.reject(shutdownError());
    const wasBusy = this.state === 'busy';
    this.abortPending();
    this.setStatus('restarting');
    const run = this.lifecycle.then(() => this.replaceProcess(wasBusy));
    this.lifecycle = run.catch(() => undefined);
    return run;
  }

  /**
   * Stops the kernel for good: pending executions resolve `aborted`, a busy kernel is interrupted,
   * then `shutdown_request`, SIGTERM and SIGKILL as needed; sockets closed, connection file
   * removed, status `dead`.
   * Idempotent (every call returns the same promise); never rejects.
   */
  public shutdown(): Promise<void> {
    if (this.shutdownDone !== undefined) return this.shutdownDone;
    this.shutdownRequested = true;
    const wasBusy = this.state === 'busy';
    this.abortPending();
    this.shutdownDone = this.lifecycle.then(async () => {
      await this.process.stop(false, wasBusy && this.state === 'busy');
      this.setStatus('dead');
    });
    return this.shutdownDone;
  }

  private async replaceProcess(interruptFirst: boolean): Promise<void> {
    if (this.shutdownRequested) throw shutdownError();
    const old = this.process;
    this.retired.add(old);
    await old.stop(true, interruptFirst);
    this.setStatus('restarting');
    try {
      const next = await KernelProcess.launch(JupyterKernel.processOptions(this.options, () => this));
      this.process = next;
      if (next.exit !== undefined) {
        this.handleExit(next, next.exit);
        return;
      }
      this.setStatus('idle');
    } catch (error) {
      this.setStatus('dead');
      throw error;
    }
  }

  private unusableError(): DaemonError | undefined {
    if (this.shutdownRequested) return shutdownError();
    if (this.state === 'dead') {
      return new DaemonError('kernelDied', `Kernel '${this.options.spec.name}' is dead; restart it to run code again`);
    }
    return undefined;
  }

  private submit(execution: PendingExecution): void {
    const content = {
      code: execution.code,
      silent: false,
      store_history: execution.options.storeHistory ?? true,
      user_expressions: {},
      allow_stdin: execution.options.onInput !== undefined,
      stop_on_error: execution.options.stopOnError ?? true,
    };
    const msgId = this.process.request('shell', 'execute_request', content, (reply) =>
      this.handleExecuteReply(execution, reply),
    );
    execution.msgId = msgId;
    this.byMsgId.set(msgId, execution);
  }

  private handleExecuteReply(execution: PendingExecution, reply: JupyterMessage): void {
    if (execution.done) return;
    const status = reply.content.status;
    const count = reply.content.execution_count;
    execution.reply = {
      status: status === 'ok' || status === 'error' ? status : 'aborted',
      executionCount: typeof count === 'number' && Number.isInteger(count) ? count : null,
    };
    // ipykernel publishes `idle` after the last output; an aborted request has none.
    if (execution.idle || execution.reply.status === 'aborted') this.finish(execution);
    else this.armGraceTimer(execution);
  }

  /** An `input_request` of one of our executions: asked of its `onInput`, answered on stdin (an empty line when it fails). */
  private handleStdin(process: KernelProcess, message: JupyterMessage): void {
    if (process !== this.process || message.header.msg_type !== 'input_request') return;
    const parentId = message.parentHeader.msg_id;
    const execution = parentId === undefined ? undefined : this.byMsgId.get(parentId);
    const ask = execution?.options.onInput;
    if (!execution || !ask || execution.done) {
      process.replyInput(message, '');
      return;
    }
    const prompt = typeof message.content.prompt === 'string' ? message.content.prompt : '';
    ask(prompt, message.content.password === true).then(
      (value) => process.replyInput(message, value),
      (error: unknown) => {
        this.logger?.warn('An input request could not be answered; the kernel gets an empty line', {
          error: describeError(error),
        });
        process.replyInput(message, '');
      },
    );
  }

  private handleIopub(process: KernelProcess, message: JupyterMessage): void {
    if (process !== this.process) return;
    const parentId = message.parentHeader.msg_id;
    const execution = parentId === undefined ? undefined : this.byMsgId.get(parentId);
    if (execution === undefined) return;
    const msgType = message.header.msg_type;
    if (msgType === 'status') {
      const executionState = message.content.execution_state;
      if (executionState === 'busy' && this.state === 'idle') this.setStatus('busy');
      if (executionState === 'idle') {
        if (this.state === 'busy') this.setStatus('idle');
        execution.idle = true;
        if (execution.reply !== undefined) this.finish(execution);
        else this.armReplyTimer(execution);
      }
      return;
    }
    execution.markStarted();
    if (execution.reply !== undefined) this.armGraceTimer(execution);
    for (const change of execution.collector.apply(msgType, message.content)) {
      if (change.kind !== 'displayUpdate') {
        this.callSafely('onOutput', () => execution.options.onOutput?.(change, execution.collector.current));
      } else {
        for (const listener of [...this.displayListeners])
          this.callSafely('onDisplayUpdate', () => listener(change.update));
      }
    }
  }

  private handleExit(process: KernelProcess, exit: KernelProcessExit): void {
    if (process !== this.process || this.retired.has(process)) return;
    const reason = this.shutdownRequested ? 'shutdown' : 'died';
    if (reason === 'died') {
      this.logger?.warn('Kernel process exited unexpectedly', {
        pid: process.pid,
        code: exit.code,
        signal: exit.signal,
        stderr: process.recentStderr.join('\n'),
      });
      this.abortPending();
      void process.stop(false);
    }
    this.setStatus('dead');
    const info: KernelExitInfo = { code: exit.code, signal: exit.signal, reason };
    for (const listener of [...this.exitListeners]) this.callSafely('onExit', () => listener(info));
  }

  /**
   * The kernel went idle after this request without answering it: ipykernel does so when an
   * interrupt lands after it took the request and before the code ran ("KeyboardInterrupt caught
   * in kernel": the code never ran). A reply still on its way (it is sent before the idle, on
   * another socket) is waited for a moment; then the execution ends `aborted`, never left pending.
   */
  private armReplyTimer(execution: PendingExecution): void {
    clearTimeout(execution.graceTimer);
    execution.graceTimer = setTimeout(() => {
      this.logger?.warn('The kernel went idle without answering the execution; it ends aborted', {
        msgId: execution.msgId,
      });
      this.finish(execution, 'aborted');
    }, missingReplyGraceMs);
    execution.graceTimer.unref();
  }

  /** Stops waiting for an `idle` that may have been lost (e.g. dropped under heavy output). */
  private armGraceTimer(execution: PendingExecution): void {
    clearTimeout(execution.graceTimer);
    execution.graceTimer = setTimeout(() => {
      this.logger?.warn('No idle status after execute_reply; finishing the execution', { msgId: execution.msgId });
      if (this.state === 'busy') this.setStatus('idle');
      this.finish(execution);
    }, idleGraceMs);
    execution.graceTimer.unref();
  }

  private finish(execution: PendingExecution, status?: 'aborted'): void {
    if (execution.done) return;
    execution.done = true;
    clearTimeout(execution.graceTimer);
    this.pending.delete(execution);
    if (execution.msgId !== undefined) this.byMsgId.delete(execution.msgId);
    execution.markFinished();
    execution.resolve({
      status: status ?? execution.reply?.status ?? 'aborted',
      executionCount: execution.reply?.executionCount ?? execution.collector.executionCount,
      outputs: execution.collector.snapshot(),
    });
  }

  private abortPending(): void {
    for (const execution of [...this.pending]) this.finish(execution, 'aborted');
  }

  private setStatus(status: KernelStatus): void {
    if (this.state === status) return;
    this.state = status;
    for (const listener of [...this.statusListeners]) this.callSafely('onStatus', () => listener(status));
  }

  private callSafely(what: string, call: () => void): void {
    try {
      call();
    } catch (error) {
      this.logger?.error(`A kernel ${what} listener threw`, { error: describeError(error) });
    }
  }
}

function describeError(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function shutdownError(): DaemonError {
  return new DaemonError('kernelShutdown', 'The kernel has been shut down');
}

function subscribe<T>(listeners: Set<(value: T) => void>, listener: (value: T) => void): Subscription {
  const entry = (value: T): void => listener(value);
  listeners.add(entry);
  return { dispose: () => listeners.delete(entry) };
}
