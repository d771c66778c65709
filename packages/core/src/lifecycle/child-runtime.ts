import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { inject, injectable } from 'inversify';
import type { ChildMcpServer } from '../child-server/create-child-mcp-server.js';
import type { ChildHandoff } from '../handoff/handoff-contract.js';
import { Clock } from '../ports/clock.js';
import { Logger } from '../ports/logger.js';
import { type ChildLifecycleContext, RecoveryLoop } from '../recovery/recovery-loop.js';
import { SessionSlot } from '../session/session-slot.js';

/** How long the child waits for the start-up work (the handoff rejoin) before it serves anyway. */
export const defaultStartupWaitMs = 15_000;

export interface ChildRuntimeOptions {
  /** The child's MCP server, not yet connected. */
  readonly child: ChildMcpServer;
  /** The transport it serves on. */
  readonly transport: Transport;
  /** What the proxy handed over in the environment (`handoffFromEnvironment`). */
  readonly handoff: ChildHandoff;
  /** The child's working directory. */
  readonly cwd: string;
  /** The bound on the wait before serving (default {@link defaultStartupWaitMs}). */
  readonly startupWaitMs?: number;
}

/**
 * Runs the child process's lifecycle around its MCP server: starts the {@link RecoveryLoop},
 * serves, and on stop stops the loop, closes the server and the peers of every session.
 *
 * Start-up: with a handoff (a restart by the proxy) the loop starts before the child serves, and
 * the transport connects once its first attempt settled or
 * `startupWaitMs` passed on the {@link Clock} (so the first call after a restart finds the notebook
 * installed, and still comes when the rejoin fails). Without one it starts when the client has
 * initialized, so an invalid first request starts no daemon or recovery work.
 *
 * Guarantees: {@link ChildRuntime.run} resolves exactly once, with the code of the first stop
 * (0 when the transport closes, the code the loop asked for, 1 when the transport fails); the
 * loop starts at most once and is stopped only when started; nothing goes to stdout.
 */
@injectable()
export class ChildRuntime {
  #started = false;
  #stopping: Promise<void> | undefined;
  #finish: ((code: number) => void) | undefined;
  #child: ChildMcpServer | undefined;

  public constructor(
    @inject(RecoveryLoop) private readonly recoveryLoop: RecoveryLoop,
    @inject(SessionSlot) private readonly slot: SessionSlot,
    @inject(Clock) private readonly clock: Clock,
    @inject(Logger) private readonly logger: Logger,
  ) {}

  /** Serves until {@link ChildRuntime.stop} (or the transport closes); resolves with the exit code. */
  public run(options: ChildRuntimeOptions): Promise<number> {
    const { child, handoff } = options;
    this.#child = child;
    const context: ChildLifecycleContext = {
      handoff,
      cwd: options.cwd,
      // Before the (replayed) initialize arrives, the proxy's label keeps the client's name.
      peerLabel: () => (child.client() ? child.peerLabel() : (handoff.peerLabel ?? child.peerLabel())),
      requestExit: (code, why) => void this.stop(code, why),
    };
    const exited = new Promise<number>((resolve) => {
      this.#finish = resolve;
    });
    child.server.oninitialized = () => void this.startRecovery(context);
    child.server.onclose = () => void this.stop(0, 'the MCP transport closed');
    const ready =
      handoff.rejoinNotebook !== undefined
        ? this.within(this.startRecovery(context), options.startupWaitMs ?? defaultStartupWaitMs)
        : Promise.resolve();
    void ready
      .then(() => (this.#stopping ? undefined : child.connect(options.transport)))
      .catch((error: unknown) => {
        this.logger.error('could not start the MCP transport', { error });
        void this.stop(1, 'transport failed');
      });
    return exited;
  }

  /**
   * Stops once (later calls wait for the first): the recovery loop, the server,
   * then the peers of every session; {@link ChildRuntime.run} then resolves with `code`.
   */
  public stop(code: number, why: string): Promise<void> {
    if (this.#stopping) return this.#stopping;
    this.logger.info('child stopping', { code, why });
    // Recorded before any of it runs: closing the server closes the transport, whose own stop
    // request (code 0) must find this one under way.
    this.#stopping = Promise.resolve().then(() => this.stopNow(code));
    return this.#stopping;
  }

  private async stopNow(code: number): Promise<void> {
    if (this.#started) {
      try {
        this.recoveryLoop.onStop();
      } catch (error) {
        this.logger.warn('the recovery loop failed to stop', { error });
      }
    }
    await this.#child?.close().catch(() => undefined);
    await this.slot.closeAllPeers();
    this.#finish?.(code);
  }

  /** Starts the recovery loop once; resolves when its start-up work (the handoff rejoin) settled. */
  private startRecovery(context: ChildLifecycleContext): Promise<void> {
    if (this.#started || this.#stopping) return Promise.resolve();
    this.#started = true;
    try {
      return (this.recoveryLoop.onStart(context) ?? Promise.resolve()).catch((error: unknown) =>
        this.failedStart(error),
      );
    } catch (error) {
      this.failedStart(error);
      return Promise.resolve();
    }
  }

  private failedStart(error: unknown): void {
    this.logger.error('the recovery loop failed to start', { error });
  }

  /** `work`, or nothing after `ms` on the clock, whichever comes first. */
  private within(work: Promise<void>, ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = this.clock.setTimer(ms, () => {
        this.logger.info('serving before the start-up work finished', { waitedMs: ms });
        resolve();
      });
      void work.then(() => {
        timer.cancel();
        resolve();
      });
    });
  }
}
