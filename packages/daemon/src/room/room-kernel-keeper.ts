import type { Clock, Logger, Timer } from '@nteract-mcp/foundation';
import type { WireRuntimeState } from '@nteract-mcp/runtimed-protocol';
import { DaemonError } from '../daemon-error.js';
import type { KernelInterruptOutcome } from '../kernel/jupyter-kernel.js';
import type { KernelClient, KernelLauncher, KernelRequest, RoomKernel } from './kernel-launcher.js';
import type { RoomSignals } from './room-peers.js';

export interface RoomKernelKeeperInit {
  /** The kernel the notebook asks for now (its metadata may change between starts). */
  readonly kernelRequest: () => KernelRequest;
  readonly launcher: KernelLauncher;
  readonly workingDir: string;
  /** `workingDir` is a default (an untitled notebook reopened without a client): the first client's cwd replaces it. */
  readonly workingDirIsDefault: boolean;
  /** The client whose environment the kernels get (see {@link RoomKernelKeeper.adoptClient}). */
  readonly client: KernelClient | undefined;
  /** Why the kernel that ran this notebook's code is gone before any started (it ran in an earlier one). */
  readonly kernelGone: string | undefined;
  readonly signals: Pick<RoomSignals, 'broadcast' | 'setCondition'>;
  /** The runtime state changed (told to the daemon, for `subscribe` streams). */
  readonly onRuntime: (runtime: WireRuntimeState) => void;
  /** How many peers the room has now (a teardown rechecks it before it destroys anything). */
  readonly peerCount: () => number;
  /** The keep-alive ran out and the kernel is being shut down: the room saves. */
  readonly onTeardown: () => void;
  readonly clock: Clock;
  readonly logger: Logger;
}

/**
 * The kernel of one room: starting it (once, for everyone waiting), its runtime state, restarting,
 * interrupting, and shutting it down when the keep-alive after the last peer runs out.
 *
 * Only the last peer leaving schedules the teardown; it rechecks the peer count and the connection
 * generation before it destroys anything, and while it runs the destructive latch (`#teardown`)
 * makes anyone asking for the kernel wait for a fresh one instead of reusing the doomed one.
 */
export class RoomKernelKeeper {
  readonly #init: RoomKernelKeeperInit;
  #workingDir: string;
  #workingDirIsDefault: boolean;
  #client: KernelClient | undefined;
  #interpreter: string | undefined;
  #runtime: WireRuntimeState = { state: 'not_started', kernel_status: null };
  #kernel: RoomKernel | undefined;
  #starting: Promise<RoomKernel | undefined> | undefined;
  #teardown: Promise<void> | undefined;
  #teardownTimer: Timer | undefined;
  #connectionGeneration = 0;
  #closed = false;
  /**
   * Why the kernel that ran this notebook's code is gone (it exited, was shut down, or ran before
   * the room was opened), until the next execution starts a new one and says so.
   */
  #kernelGone: string | undefined;

  public constructor(init: RoomKernelKeeperInit) {
    this.#init = init;
    this.#workingDir = init.workingDir;
    this.#workingDirIsDefault = init.workingDirIsDefault;
    this.#client = init.client;
    this.#kernelGone = init.kernelGone;
  }

  /** A kernel is running, starting, or being torn down. */
  public get hasKernel(): boolean {
    return this.#kernel !== undefined || this.#starting !== undefined || this.#teardown !== undefined;
  }

  /** The running kernel, if any. */
  public get current(): RoomKernel | undefined {
    return this.#kernel;
  }

  public get runtime(): WireRuntimeState {
    return this.#runtime;
  }

  /** The program running the last kernel started (for Python, the interpreter). */
  public get interpreter(): string | undefined {
    return this.#interpreter;
  }

  /** Where kernels start. */
  public get workingDir(): string {
    return this.#workingDir;
  }

  public get kernelGone(): string | undefined {
    return this.#kernelGone;
  }

  /** Why the last kernel is gone, now said (cleared). */
  public takeKernelGone(): string | undefined {
    const gone = this.#kernelGone;
    this.#kernelGone = undefined;
    return gone;
  }

  /**
   * Keeps the first client environment it gets; a default working directory becomes the client's
   * cwd while the notebook has no file (see `NotebookRoom.adoptClient`).
   */
  public adoptClient(client: KernelClient, hasFile: boolean): void {
    if (this.#client?.env === undefined && client.env !== undefined) this.#client = client;
    if (this.#workingDirIsDefault && !hasFile && client.cwd !== undefined) {
      this.#workingDir = client.cwd;
      this.#workingDirIsDefault = false;
    }
  }

  /** The notebook moved to a file in `dir`: the next kernel starts there. */
  public moveWorkingDir(dir: string): void {
    this.#workingDir = dir;
  }

  /** A peer joined: a scheduled teardown is off, and one scheduled before it cannot fire. */
  public peerJoined(): void {
    this.#connectionGeneration += 1;
    this.#teardownTimer?.cancel();
    this.#teardownTimer = undefined;
  }

  /** The kernel, started when there is none (waiting for a teardown under way first). */
  public async ensureKernel(): Promise<RoomKernel | undefined> {
    if (this.#teardown) await this.#teardown;
    if (this.#kernel) return this.#kernel;
    if (this.#runtime.state === 'unavailable') return undefined;
    if (!this.#starting) {
      this.#starting = this.launchKernel().finally(() => {
        this.#starting = undefined;
      });
    }
    return this.#starting;
  }

  /** Interrupts the running kernel (refused when there is none). */
  public async interrupt(): Promise<KernelInterruptOutcome> {
    const kernel = this.requireKernelForControl();
    const outcome = await kernel.interrupt();
    this.#init.logger.info('kernel interrupted', { pid: kernel.pid, outcome });
    return outcome;
  }

  /** Restarts the kernel (starting one when there is none). */
  public async restart(): Promise<void> {
    const kernel = await this.ensureKernel();
    if (!kernel) throw new DaemonError('runtimeUnavailable', this.#runtime.reason ?? 'No kernel is available');
    await kernel.restart();
    this.#kernelGone = undefined;
    this.#init.logger.info('kernel restarted', { pid: kernel.pid, kernelspec: this.#init.kernelRequest().name });
  }

  /**
   * The last peer left: the kernel is shut down after `keepAliveMs` unless a peer joins meanwhile.
   */
  public scheduleTeardown(keepAliveMs: number): void {
    this.#teardownTimer?.cancel();
    const generation = this.#connectionGeneration;
    this.#teardownTimer = this.#init.clock.setTimer(keepAliveMs, () => {
      this.#teardownTimer = undefined;
      // Revalidate: a peer may have joined (and even left again) since this was scheduled.
      if (this.#init.peerCount() > 0 || this.#connectionGeneration !== generation || this.#teardown) return;
      this.#teardown = this.stop(`no peer for ${keepAliveMs} ms (keep-alive)`).finally(() => {
        this.#teardown = undefined;
      });
      this.#init.onTeardown();
    });
  }

  /** The room closes: no teardown is scheduled any more, and a kernel that starts now is shut down at once. */
  public close(): void {
    this.#closed = true;
    this.#teardownTimer?.cancel();
  }

  /** Shuts the kernel down (after a start under way); `why` is logged. */
  public async stop(why: string): Promise<void> {
    const starting = this.#starting;
    if (starting) await starting.catch(() => undefined);
    const kernel = this.#kernel;
    if (!kernel) return;
    this.#kernel = undefined;
    this.#init.logger.info('kernel shut down', { pid: kernel.pid, why });
    this.#kernelGone = 'The kernel was shut down after no client had this notebook open for a while';
    this.setRuntime({ state: 'stopped', kernel_status: null, reason: 'kernel shut down after the last peer left' });
    await kernel.shutdown().catch((error: unknown) => this.#init.logger.warn('kernel shutdown failed', { error }));
  }

  private requireKernelForControl(): RoomKernel {
    if (!this.#kernel) {
      if (this.#runtime.state === 'unavailable')
        throw new DaemonError('runtimeUnavailable', this.#runtime.reason ?? 'No kernel');
      throw new DaemonError('runtimeUnavailable', 'No kernel is running in this notebook yet');
    }
    return this.#kernel;
  }

  private async launchKernel(): Promise<RoomKernel | undefined> {
    this.setRuntime({ state: 'starting', kernel_status: 'starting' });
    const request = this.#init.kernelRequest();
    const { logger, signals } = this.#init;
    logger.info('kernel starting', { kernelspec: request.name, cwd: this.#workingDir });
    let launch: Awaited<ReturnType<KernelLauncher['launch']>>;
    try {
      launch = await this.#init.launcher.launch(this.#workingDir, request, this.#client);
    } catch (error) {
      const why = (error as Error).message;
      logger.warn('kernel failed to start', { kernelspec: request.name, error: why });
      // `failed`, not a plain `stopped`: a client must not call this room's runtime ready. The next
      // execution (or restart_kernel) tries again.
      this.setRuntime({ state: 'stopped', kernel_status: 'failed', reason: `kernel failed to start: ${why}` });
      signals.setCondition(
        'kernel_failed',
        `The kernel '${request.name}' did not start, so nothing runs; the next run or restart_kernel tries again. ${why}`,
      );
      return undefined;
    }
    if (launch.kind === 'unavailable') {
      logger.info('no kernel can run this notebook', { kernelspec: request.name, reason: launch.reason });
      this.setRuntime({ state: 'unavailable', kernel_status: null, reason: launch.reason });
      return undefined;
    }
    const kernel = launch.kernel;
    this.#interpreter = launch.interpreter;
    if (this.#closed) {
      await kernel.shutdown();
      return undefined;
    }
    this.#kernel = kernel;
    logger.info('kernel started', { kernelspec: request.name, pid: kernel.pid });
    signals.setCondition('kernel_failed', undefined);
    kernel.onStatus((status) => {
      if (this.#kernel === kernel) this.setRuntime({ state: 'ready', kernel_status: status });
    });
    kernel.onExit((info) => {
      if (this.#kernel !== kernel) return;
      this.#kernel = undefined;
      logger.warn('kernel exited unexpectedly', { pid: kernel.pid, code: info.code, signal: info.signal });
      this.#kernelGone = `The kernel exited unexpectedly (${info.signal ?? `exit code ${info.code}`})`;
      this.setRuntime({
        state: 'stopped',
        kernel_status: 'dead',
        reason: `kernel exited (${info.signal ?? info.code})`,
      });
    });
    this.setRuntime({ state: 'ready', kernel_status: kernel.status });
    return kernel;
  }

  private setRuntime(runtime: WireRuntimeState): void {
    const before = this.#runtime;
    this.#runtime = runtime;
    if (before.state === runtime.state && before.kernel_status === runtime.kernel_status) return;
    this.#init.signals.broadcast({ event: 'runtime', runtime });
    this.#init.onRuntime(runtime);
  }
}
