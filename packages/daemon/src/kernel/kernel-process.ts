import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import type { Logger } from '@nteract-mcp/foundation';
import { Dealer, Subscriber } from 'zeromq';
import { DaemonError } from '../daemon-error.js';
import { findFreePorts } from './find-free-ports.js';
import type { Kernelspec } from './find-kernelspec.js';
import {
  createJupyterMessage,
  decodeJupyterMessage,
  encodeJupyterMessage,
  type JupyterMessage,
  type JupyterSender,
} from './jupyter-message.js';
import { connectionDirPrefix, type KernelRecords } from './kernel-records.js';

/** How a kernel process ended: exit code, or the signal that killed it. */
export interface KernelProcessExit {
  readonly code: number | null;
  readonly signal: string | null;
}

/** The channels a request can go on. */
export type KernelRequestChannel = 'shell' | 'control';

export interface KernelProcessOptions {
  readonly spec: Kernelspec;
  readonly cwd: string;
  /** Base environment of the kernel; default `process.env`. `spec.env` and `JPY_PARENT_PID` go on top. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  readonly logger?: Logger;
  /** Where the running process is recorded, so that a next daemon can reap it if this one dies. */
  readonly records?: KernelRecords;
  /**
   * Where the private 0700 directory of the connection file is made (made 0700 itself when
   * missing; the daemon's runtime dir); default the system temp dir.
   */
  readonly connectionDir?: string;
  readonly startupTimeoutMs: number;
  /** Every correctly signed iopub message, in arrival order (the caller filters by parent). */
  readonly onIopub: (process: KernelProcess, message: JupyterMessage) => void;
  /** Every correctly signed stdin message (`input_request`s of executions that allowed stdin). */
  readonly onStdin?: (process: KernelProcess, message: JupyterMessage) => void;
  /** Called once when the process has exited, for whatever reason. */
  readonly onExit: (process: KernelProcess, exit: KernelProcessExit) => void;
}

interface ConnectionInfo {
  readonly ip: string;
  readonly transport: 'tcp';
  readonly shell_port: number;
  readonly iopub_port: number;
  readonly stdin_port: number;
  readonly control_port: number;
  readonly hb_port: number;
  readonly key: string;
  readonly signature_scheme: 'hmac-sha256';
  readonly kernel_name: string;
}

const host = '127.0.0.1';
const shutdownGraceMs = 3_000;
const reinterruptAfterMs = 1_000;
const terminateGraceMs = 2_000;
const killWaitMs = 5_000;
const iopubNudgeMs = 250;
const stderrTailLines = 20;
const launchAttempts = 2;

/**
 * One life of one kernel process: its connection file, its ZeroMQ sockets (shell, control and
 * stdin DEALER, iopub SUB; heartbeat is not used: liveness comes from the child process itself)
 * and the request/reply bookkeeping.
 *
 * Guarantees: `launch` resolves only once the kernel answered `kernel_info_request` on shell,
 * iopub delivers messages to us (so no output of a later request is lost to a late subscription)
 * and our stdin socket is known to the kernel (so no `input_request` is lost);
 * otherwise it kills the process, cleans up and rejects with `kernelStartFailed`. Messages with a
 * bad signature are dropped. `stop` always ends with the process gone (shutdown_request, then
 * SIGTERM, then SIGKILL to its process group), the sockets closed and the connection file removed.
 * Does not guarantee: that grandchildren outliving a graceful shutdown are killed.
 */
export class KernelProcess {
  /** The content of the `kernel_info_reply` the kernel started with. */
  public kernelInfo: Readonly<Record<string, unknown>> = {};
  private readonly sender: JupyterSender = { session: randomUUID(), username: 'nteract-mcp' };
  // The kernel routes an `input_request` on stdin to the identity its execute_request came from on
  // shell: both sockets carry the session's id (as jupyter_client's do).
  private readonly shell = new Dealer({ linger: 0, routingId: this.sender.session });
  private readonly stdin = new Dealer({ linger: 0, routingId: this.sender.session });
  private readonly control = new Dealer({ linger: 0 });
  private readonly iopub = new Subscriber({ linger: 0, receiveHighWaterMark: 0 });
  private readonly sendQueues: Record<KernelRequestChannel, Promise<void>> = {
    shell: Promise.resolve(),
    control: Promise.resolve(),
  };
  private stdinQueue: Promise<void> = Promise.resolve();
  private readonly replyHandlers = new Map<string, (reply: JupyterMessage) => void>();
  private readonly stderrTail: string[] = [];
  private child: ChildProcess | undefined;
  private exitValue: KernelProcessExit | undefined;
  private readonly exited: Promise<KernelProcessExit>;
  private markExited: (exit: KernelProcessExit) => void = () => undefined;
  private iopubSeen = false;
  private onIopubSeen: () => void = () => undefined;
  /**
   * Settles once our stdin socket finished its ZMTP handshake with the kernel: until then the
   * kernel's stdin ROUTER does not know our identity and drops an `input_request` meant for us
   * (the code waiting on `input()` would then wait for ever).
   */
  private readonly stdinReady = new Promise<void>((resolve) => {
    this.stdin.events.on('handshake', () => resolve());
  });
  private stopping: Promise<void> | undefined;
  private closed = false;

  private constructor(
    private readonly options: KernelProcessOptions,
    private readonly connection: ConnectionInfo,
    private readonly dir: string,
    private readonly connectionFile: string,
  ) {
    this.exited = new Promise((resolve) => {
      this.markExited = resolve;
    });
  }

  /**
   * Starts a kernel for `options.spec` in `options.cwd`. Retries once with fresh ports when the
   * first process dies during startup (a port may have been taken between picking and binding).
   */
  public static async launch(options: KernelProcessOptions): Promise<KernelProcess> {
    let lastError: unknown;
    for (let attempt = 1; attempt <= launchAttempts; attempt += 1) {
      try {
        return await KernelProcess.launchOnce(options);
      } catch (error) {
        lastError = error;
        if (!(error instanceof DaemonError) || !/address already in use/i.test(error.message)) throw error;
      }
    }
    throw lastError;
  }

  private static async launchOnce(options: KernelProcessOptions): Promise<KernelProcess> {
    let dir: string;
    let ports: number[];
    try {
      ports = await findFreePorts(5, host);
      dir = await mkdtemp(join(await connectionRoot(options.connectionDir), connectionDirPrefix));
    } catch (error) {
      throw new DaemonError('kernelStartFailed', `Cannot prepare a kernel connection: ${describeError(error)}`, {
        cause: error,
      });
    }
    const [shellPort = 0, iopubPort = 0, stdinPort = 0, controlPort = 0, hbPort = 0] = ports;
    const connection: ConnectionInfo = {
      ip: host,
      transport: 'tcp',
      shell_port: shellPort,
      iopub_port: iopubPort,
      stdin_port: stdinPort,
      control_port: controlPort,
      hb_port: hbPort,
      key: randomBytes(32).toString('hex'),
      signature_scheme: 'hmac-sha256',
      kernel_name: options.spec.name,
    };
    const kernel = new KernelProcess(options, connection, dir, join(dir, `kernel-${randomUUID()}.json`));
    try {
      await kernel.boot();
      return kernel;
    } catch (error) {
      await kernel.kill();
      if (error instanceof DaemonError) throw error;
      throw new DaemonError(
        'kernelStartFailed',
        `Kernel '${options.spec.name}' failed to start: ${describeError(error)}`,
        {
          cause: error,
        },
      );
    }
  }

  /** The operating-system process id. */
  public get pid(): number {
    return this.child?.pid ?? -1;
  }

  /** The last lines the kernel wrote to stderr (for diagnosing a death). */
  public get recentStderr(): readonly string[] {
    return this.stderrTail.slice();
  }

  /** How the process ended, or `undefined` while it runs. */
  public get exit(): KernelProcessExit | undefined {
    return this.exitValue;
  }

  /**
   * Sends a request; `onReply` gets the matching reply (never if the process dies first or the
   * kernel does not answer). Returns the request's `msg_id`. A no-op after `stop`.
   */
  public request(
    channel: KernelRequestChannel,
    msgType: string,
    content: Readonly<Record<string, unknown>>,
    onReply?: (reply: JupyterMessage) => void,
  ): string {
    const message = createJupyterMessage(this.sender, msgType, content);
    if (onReply !== undefined) this.replyHandlers.set(message.header.msg_id, onReply);
    const socket = channel === 'shell' ? this.shell : this.control;
    const frames = encodeJupyterMessage(message, this.connection.key);
    this.sendQueues[channel] = this.sendQueues[channel]
      .then(async () => {
        if (!this.closed) await socket.send(frames);
      })
      .catch((error: unknown) => {
        if (!this.closed) this.logger?.warn('Could not send to the kernel', { channel, error: describeError(error) });
      });
    return message.header.msg_id;
  }

  /** Like {@link request}, resolving with the reply, or `undefined` after `timeoutMs` or on exit. */
  public requestReply(
    channel: KernelRequestChannel,
    msgType: string,
    content: Readonly<Record<string, unknown>>,
    timeoutMs: number,
  ): Promise<JupyterMessage | undefined> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => finish(undefined), timeoutMs);
      timer.unref();
      const finish = (reply: JupyterMessage | undefined): void => {
        clearTimeout(timer);
        this.replyHandlers.delete(msgId);
        resolve(reply);
      };
      const msgId = this.request(channel, msgType, content, finish);
      void this.exited.then(() => finish(undefined));
    });
  }

  /**
   * Answers an `input_request` (Jupyter's `input_reply {value}` on stdin, its parent the request).
   * The value is never logged. A no-op after `stop`.
   */
  public replyInput(request: JupyterMessage, value: string): void {
    const message = createJupyterMessage(this.sender, 'input_reply', { value }, request.header);
    const frames = encodeJupyterMessage(message, this.connection.key);
    this.stdinQueue = this.stdinQueue
      .then(async () => {
        if (!this.closed) await this.stdin.send(frames);
      })
      .catch((error: unknown) => {
        if (!this.closed)
          this.logger?.warn('Could not send to the kernel', { channel: 'stdin', error: describeError(error) });
      });
  }

  /** Sends `signal` to the kernel's process group (falling back to the process). False if it has exited. */
  public signal(signal: NodeJS.Signals): boolean {
    if (this.exitValue !== undefined || this.child?.pid === undefined) return false;
    try {
      process.kill(-this.child.pid, signal);
      return true;
    } catch {
      try {
        process.kill(this.child.pid, signal);
        return true;
      } catch {
        return false;
      }
    }
  }

  /**
   * Ends this life: `shutdown_request` (with `restart` as given) on control, SIGTERM after a few
   * seconds, SIGKILL after a few more; then closes the sockets and removes the connection file.
   * With `interruptFirst` (the kernel is busy) it interrupts before asking: ipykernel only leaves
   * once its shell loop is free, so a busy kernel would otherwise wait for SIGTERM.
   * Idempotent; never rejects.
   */
  public stop(restart: boolean, interruptFirst = false): Promise<void> {
    this.stopping ??= (async () => {
      if (this.exitValue === undefined && this.child !== undefined) {
        if (interruptFirst) this.interruptNow();
        this.request('control', 'shutdown_request', { restart });
        let exited = await this.waitForExit(interruptFirst ? reinterruptAfterMs : shutdownGraceMs);
        if (!exited && interruptFirst) {
          // ipykernel ignores SIGINT for a moment after it reports `busy`; one more try.
          this.interruptNow();
          exited = await this.waitForExit(shutdownGraceMs - reinterruptAfterMs);
        }
        if (!exited) {
          this.logger?.warn('Kernel ignored shutdown_request; terminating it', { pid: this.pid });
          this.signal('SIGTERM');
          if (!(await this.waitForExit(terminateGraceMs))) {
            this.signal('SIGKILL');
            await this.waitForExit(killWaitMs);
          }
        }
      }
      await this.release();
    })();
    return this.stopping;
  }

  private interruptNow(): void {
    if (this.options.spec.interruptMode === 'message') this.request('control', 'interrupt_request', {});
    else this.signal('SIGINT');
  }

  /** Kills the process group at once and cleans up (used when startup fails). Never rejects. */
  private kill(): Promise<void> {
    this.stopping ??= (async () => {
      if (this.signal('SIGKILL')) await this.waitForExit(killWaitMs);
      await this.release();
    })();
    return this.stopping;
  }

  private get logger(): Logger | undefined {
    return this.options.logger;
  }

  private async boot(): Promise<void> {
    const { spec } = this.options;
    await writeFile(this.connectionFile, JSON.stringify(this.connection, null, 1), { mode: 0o600 });

    const address = (port: number): string => `tcp://${host}:${port}`;
    this.shell.connect(address(this.connection.shell_port));
    this.control.connect(address(this.connection.control_port));
    this.stdin.connect(address(this.connection.stdin_port));
    this.iopub.connect(address(this.connection.iopub_port));
    this.iopub.subscribe();
    void this.pump(this.shell, 'shell');
    void this.pump(this.control, 'control');
    void this.pump(this.stdin, 'stdin');
    void this.pump(this.iopub, 'iopub');

    const argv = spec.argv.map((arg) =>
      arg.replaceAll('{connection_file}', this.connectionFile).replaceAll('{resource_dir}', spec.resourceDir ?? ''),
    );
    const [command, ...args] = argv;
    if (command === undefined)
      throw new DaemonError('kernelStartFailed', `Kernelspec '${spec.name}' has an empty argv`);
    const env: Record<string, string> = {};
    for (const [key, value] of Object.entries({ ...(this.options.env ?? process.env), ...spec.env })) {
      if (value !== undefined) env[key] = value;
    }
    env.JPY_PARENT_PID = String(process.pid);

    const child = spawn(command, args, {
      cwd: this.options.cwd,
      env,
      // Never our stdout: in MCP processes stdout carries protocol bytes only.
      stdio: ['ignore', 'pipe', 'pipe'],
      // Own process group: a Ctrl-C aimed at the daemon does not hit the kernel, and signals can
      // reach the kernel's own children.
      detached: true,
      windowsHide: true,
    });
    this.child = child;
    await new Promise<void>((resolve, reject) => {
      child.once('spawn', resolve);
      child.once('error', (error) =>
        reject(
          new DaemonError(
            'kernelStartFailed',
            `Cannot launch kernel '${spec.name}' (${command} in ${this.options.cwd}): ${describeError(error)}`,
            { cause: error },
          ),
        ),
      );
    });
    child.on('error', (error) => this.logger?.warn('Kernel process error', { error: describeError(error) }));
    child.once('exit', (code, signal) => {
      const exit: KernelProcessExit = { code, signal };
      this.exitValue = exit;
      this.replyHandlers.clear();
      this.markExited(exit);
      this.options.onExit(this, exit);
    });
    this.forwardOutput(child.stdout, 'stdout');
    this.forwardOutput(child.stderr, 'stderr');
    if (child.pid !== undefined) await this.options.records?.add(child.pid, this.connectionFile, this.dir);

    await this.handshake();
  }

  /**
   * Asks for kernel_info until a reply has come on shell AND some iopub message answering one of
   * our requests has arrived: a SUB socket misses whatever the kernel publishes before our
   * subscription reaches it, so the first status messages may be lost.
   */
  private async handshake(): Promise<void> {
    const { startupTimeoutMs, spec } = this.options;
    let timer: NodeJS.Timeout | undefined;
    const failure = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(
            this.startFailure(`did not answer kernel_info_request within ${startupTimeoutMs} ms`, /* timedOut */ true),
          ),
        startupTimeoutMs,
      );
      void this.exited.then((exit) =>
        reject(this.startFailure(`exited during startup (${describeExit(exit)})`, false)),
      );
    });
    failure.catch(() => undefined);
    const iopubSeen = new Promise<void>((resolve) => {
      this.onIopubSeen = resolve;
    });
    try {
      for (;;) {
        const reply = await Promise.race([
          this.requestReply('shell', 'kernel_info_request', {}, startupTimeoutMs),
          failure,
        ]);
        if (reply !== undefined) this.kernelInfo = reply.content;
        const ready = await Promise.race([
          iopubSeen.then(() => true),
          delay(iopubNudgeMs).then(() => this.iopubSeen),
          failure,
        ]);
        if (ready && reply !== undefined) break;
      }
      await Promise.race([this.stdinReady, failure]);
    } finally {
      clearTimeout(timer);
      this.logger?.debug('Kernel handshake finished', { kernel: spec.name, pid: this.pid });
    }
  }

  private startFailure(what: string, timedOut: boolean): DaemonError {
    const tail = this.stderrTail.length > 0 ? `\nKernel stderr (last lines):\n${this.stderrTail.join('\n')}` : '';
    const hint = timedOut ? ' (it was killed)' : '';
    return new DaemonError('kernelStartFailed', `Kernel '${this.options.spec.name}' ${what}${hint}.${tail}`);
  }

  private async pump(socket: Dealer | Subscriber, channel: KernelRequestChannel | 'iopub' | 'stdin'): Promise<void> {
    try {
      for await (const frames of socket) {
        const message = decodeJupyterMessage(frames, this.connection.key);
        if (message === undefined) {
          this.logger?.warn('Dropped a kernel message with a bad signature or shape', { channel });
          continue;
        }
        try {
          this.dispatch(channel, message);
        } catch (error) {
          this.logger?.error('A kernel message handler threw', { channel, error: describeError(error) });
        }
      }
    } catch (error) {
      if (!this.closed) this.logger?.warn('Kernel socket failed', { channel, error: describeError(error) });
    }
  }

  private dispatch(channel: KernelRequestChannel | 'iopub' | 'stdin', message: JupyterMessage): void {
    if (channel === 'stdin') {
      this.options.onStdin?.(this, message);
      return;
    }
    if (channel === 'iopub') {
      if (!this.iopubSeen && message.parentHeader.session === this.sender.session) {
        this.iopubSeen = true;
        this.onIopubSeen();
      }
      this.options.onIopub(this, message);
      return;
    }
    const parentId = message.parentHeader.msg_id;
    const handler = parentId === undefined ? undefined : this.replyHandlers.get(parentId);
    if (handler === undefined || parentId === undefined) return;
    this.replyHandlers.delete(parentId);
    handler(message);
  }

  private forwardOutput(stream: Readable | null, name: 'stdout' | 'stderr'): void {
    if (stream === null) return;
    const lines = createInterface({ input: stream, crlfDelay: Number.POSITIVE_INFINITY });
    lines.on('line', (line) => {
      if (name === 'stderr') {
        this.stderrTail.push(line);
        if (this.stderrTail.length > stderrTailLines) this.stderrTail.shift();
      }
      if (this.logger !== undefined) {
        const fields = { pid: this.pid, stream: name, line };
        if (name === 'stderr') this.logger.info('kernel output', fields);
        else this.logger.debug('kernel output', fields);
      } else {
        process.stderr.write(`[kernel ${this.pid} ${name}] ${line}\n`);
      }
    });
  }

  private waitForExit(timeoutMs: number): Promise<boolean> {
    if (this.exitValue !== undefined) return Promise.resolve(true);
    return Promise.race([this.exited.then(() => true), delay(timeoutMs).then(() => this.exitValue !== undefined)]);
  }

  private async release(): Promise<void> {
    this.closed = true;
    this.replyHandlers.clear();
    for (const socket of [this.shell, this.control, this.stdin, this.iopub]) socket.close();
    await rm(this.dir, { recursive: true, force: true }).catch(() => undefined);
    if (this.child?.pid !== undefined) await this.options.records?.remove(this.child.pid);
  }
}

/** `dir` (created 0700 when missing, and made 0700); the system temp dir without one, or when `dir` is not ours. */
async function connectionRoot(dir: string | undefined): Promise<string> {
  if (dir === undefined) return tmpdir();
  try {
    await mkdir(dir, { recursive: true, mode: 0o700 });
    await chmod(dir, 0o700);
    return dir;
  } catch {
    return tmpdir();
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

function describeExit(exit: KernelProcessExit): string {
  return exit.signal !== null ? `signal ${exit.signal}` : `exit code ${exit.code ?? 'unknown'}`;
}

function describeError(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
