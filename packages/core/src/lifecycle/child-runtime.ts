import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { inject, injectable, named } from 'inversify';
import type { ChildMcpServer } from '../child-server/create-child-mcp-server.js';
import {
  type ChildLifecycleContext,
  ChildLifecycleContribution,
} from '../contributions/child-lifecycle-contribution.js';
import { ContributionProvider } from '../di/contribution-provider.js';
import type { ChildHandoff } from '../handoff/handoff-contract.js';
import { Clock } from '../ports/clock.js';
import { Logger } from '../ports/logger.js';
import { SessionSlot } from '../session/session-slot.js';

/** How long the child waits for its lifecycle contributions (the handoff rejoin) before it serves anyway. */
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
 * Runs the child process's lifecycle around its MCP server: starts every
 * {@link ChildLifecycleContribution} in order (core's recovery loop first), serves, and on stop
 * stops them in reverse order, closes the server and the peers of every session.
 *
 * Start-up: with a handoff (a restart by the proxy) the contributions start before the child
 * serves, and the transport connects once their `onStart` promises settled or
 * `startupWaitMs` passed on the {@link Clock} (so the first call after a restart finds the notebook
 * installed, and still comes when the rejoin fails). Without one they start when the client has
 * initialized, so an invalid first request starts no daemon or recovery work.
 *
 * Guarantees: {@link ChildRuntime.run} resolves exactly once, with the code of the first stop
 * (0 when the transport closes, the code a contribution asked for, 1 when the transport fails);
 * contributions start at most once and only started ones are stopped; nothing goes to stdout.
 */
@injectable()
export class ChildRuntime {
  #started: ChildLifecycleContribution[] | undefined;
  #stopping: Promise<void> | undefined;
  #finish: ((code: number) => void) | undefined;
  #child: ChildMcpServer | undefined;

  public constructor(
    @inject(ContributionProvider)
    @named(ChildLifecycleContribution)
    private readonly lifecycle: ContributionProvider<ChildLifecycleContribution>,
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
    child.server.oninitialized = () => void this.startContributions(context);
    child.server.onclose = () => void this.stop(0, 'the MCP transport closed');
    const ready =
      handoff.rejoinNotebook !== undefined
        ? this.within(this.startContributions(context), options.startupWaitMs ?? defaultStartupWaitMs)
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
   * Stops once (later calls wait for the first): the contributions in reverse order, the server,
   * then the peers of every session; {@link ChildRuntime.run} then resolves with `code`.
   */
  public stop(code: number, why: string): Promise<void> {
    if (this.#stopping) return this.#stopping;
    this.logger.info('child stopping', { code, why });
    this.#stopping = (async () => {
      for (const contribution of [...(this.#started ?? [])].reverse()) {
        try {
          await contribution.onStop();
        } catch (error) {
          this.logger.warn('a lifecycle contribution failed to stop', { contribution: contribution.id, error });
        }
      }
      await this.#child?.close().catch(() => undefined);
      await this.slot.closeAllPeers();
      this.#finish?.(code);
    })();
    return this.#stopping;
  }

  /** Starts every contribution once, in order; resolves when all their start promises settled. */
  private startContributions(context: ChildLifecycleContext): Promise<void> {
    if (this.#started || this.#stopping) return Promise.resolve();
    const started: ChildLifecycleContribution[] = [];
    this.#started = started;
    const ready: Promise<unknown>[] = [];
    for (const contribution of this.lifecycle.getContributions()) {
      started.push(contribution);
      try {
        const result = contribution.onStart(context);
        if (result) ready.push(result.catch((error: unknown) => this.failedStart(contribution, error)));
      } catch (error) {
        this.failedStart(contribution, error);
      }
    }
    return Promise.all(ready).then(() => undefined);
  }

  private failedStart(contribution: ChildLifecycleContribution, error: unknown): void {
    this.logger.error('a lifecycle contribution failed to start', { contribution: contribution.id, error });
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
