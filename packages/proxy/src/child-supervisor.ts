import type { ChildExitClass, Subscription } from '@nteract-mcp/core';
import {
  type ChildExit,
  type ChildProcessHandle,
  ChildProcessPort,
  type ChildSpawnSpec,
  Clock,
  CoreError,
  failedChildHandle,
  Logger,
  type Timer,
} from '@nteract-mcp/core';
import { inject, injectable } from 'inversify';
import { ChildExitClassifier } from './child-exit-classifier.js';
import {
  describeChildExit,
  type RestartDecision,
  RestartPolicy,
  type RestartPolicySnapshot,
} from './restart-policy.js';

/** Default time a child gets between SIGTERM and SIGKILL (and between stdout EOF and SIGTERM). */
export const defaultChildKillGraceMs = 5_000;

export interface ChildSupervisorOptions {
  /** Time between SIGTERM and SIGKILL when the supervisor kills a child. Default {@link defaultChildKillGraceMs}. */
  readonly killGraceMs?: number;
}

/** Why a child was spawned: `start`, `on-demand`, `after crash`, `after handoff`, … or the reason given to `restart`. */
export interface ChildSpawnInfo {
  /** Successful spawns after the first one (0 for the first child). */
  readonly restartCount: number;
  readonly reason: string;
}

/**
 * A child has exited. `decision` is what follows: the policy's answer for an exit on its own;
 * `restart` (delay 0) when `restart()` killed it; `stop` when `stop()` did.
 */
export interface ChildExitEvent {
  readonly child: ChildProcessHandle;
  readonly exit: ChildExit;
  readonly exitClass: ChildExitClass;
  readonly decision: RestartDecision;
  /** True when the supervisor itself killed the child (`restart` or `stop`). */
  readonly intentional: boolean;
}

export type ChildRefusal = Extract<RestartDecision, { kind: 'refuse' }>;

/** What `session_status` shows of the proxy's supervision. */
export interface ChildSupervisorStatus extends RestartPolicySnapshot {
  readonly restartCount: number;
  /** Pid of the live child, when there is one. */
  readonly pid: number | undefined;
  /** A (re)start is in progress (waiting for a delay or for the old child to exit). */
  readonly restarting: boolean;
  readonly stopped: boolean;
}

interface Waiter {
  readonly resolve: (child: ChildProcessHandle) => void;
  readonly reject: (error: unknown) => void;
  readonly timer: Timer;
}

type Intent = 'restart' | 'stop';

/**
 * Supervises the child MCP server of the proxy: spawns it, notices its death at once (the handle's
 * `exited`, which follows stdout EOF; a child whose stdout ends but that does not exit within the
 * grace period is killed), classifies the exit with {@link ChildExitClassifier}, asks the
 * {@link RestartPolicy}, waits the delay on the {@link Clock} and spawns again.
 *
 * Guarantees:
 * - Never two children: a new child is spawned only after the previous one has exited.
 * - The command is resolved again (`resolveCommand`) for every spawn, so an upgraded binary is used.
 * - One (re)start at a time: a restart requested while one is in progress gets the same promise.
 * - After `stop()` nothing is spawned again.
 * - Every `waitForChild` settles: with the next live child, or a {@link CoreError}
 *   (`restartBudgetExhausted` / `childStartFailed` at once while the breaker is open,
 *   `childUnavailable` on timeout or stop).
 * - While the breaker is open after crashes, one attempt is made by itself when the cool-down ends;
 *   after a fatal exit only `restart()` or a call arriving later (`waitForChild`) tries again.
 *
 * A handle without a pid is taken as a failed spawn (Node's contract): it never becomes `current`,
 * is not announced by `onDidSpawn`, and its exit (with `spawnError`) is classified like any other.
 *
 * Does not guarantee: that a child ignoring SIGKILL ever goes away (a restart then waits for it);
 * anything about the child's protocol (the proxy speaks MCP to it).
 */
@injectable()
export class ChildSupervisor {
  readonly #logger: Logger;
  #resolveCommand: (() => ChildSpawnSpec) | undefined;
  #killGraceMs = defaultChildKillGraceMs;
  #current: ChildProcessHandle | undefined;
  /** A child taken out of service by `restart` or `stop` that has not exited yet. */
  #dying: ChildProcessHandle | undefined;
  #restarting: Promise<ChildProcessHandle> | undefined;
  #stopped = false;
  #stopping: Promise<void> | undefined;
  #successfulSpawns = 0;
  #halfOpenTimer: Timer | undefined;
  #lastExitClass: ChildExitClass | undefined;
  readonly #abort = new AbortController();
  readonly #intents = new Map<ChildProcessHandle, Intent>();
  readonly #terminations = new Map<ChildProcessHandle, Promise<ChildExit>>();
  readonly #waiters = new Set<Waiter>();
  readonly #spawnListeners = new Set<(child: ChildProcessHandle, info: ChildSpawnInfo) => void>();
  readonly #exitListeners = new Set<(event: ChildExitEvent) => void>();
  readonly #refuseListeners = new Set<(refusal: ChildRefusal) => void>();

  public constructor(
    @inject(ChildProcessPort) private readonly port: ChildProcessPort,
    @inject(ChildExitClassifier) private readonly classification: ChildExitClassifier,
    @inject(Clock) private readonly clock: Clock,
    @inject(Logger) logger: Logger,
    @inject(RestartPolicy) private readonly policy: RestartPolicy,
  ) {
    this.#logger = logger.child('core:ChildSupervisor');
  }

  /** The live child, or undefined while none is up. */
  public get current(): ChildProcessHandle | undefined {
    return this.#current;
  }

  /** Successful spawns after the first one. */
  public get restartCount(): number {
    return Math.max(0, this.#successfulSpawns - 1);
  }

  public status(): ChildSupervisorStatus {
    return {
      ...this.policy.snapshot(),
      restartCount: this.restartCount,
      pid: this.#current?.pid,
      restarting: this.#restarting !== undefined,
      stopped: this.#stopped,
    };
  }

  /**
   * Spawns the first child. `resolveCommand` is called again before every spawn. Resolves with the
   * child; rejects when it cannot be started (the breaker is then open). Callable once.
   */
  public start(
    resolveCommand: () => ChildSpawnSpec,
    options: ChildSupervisorOptions = {},
  ): Promise<ChildProcessHandle> {
    if (this.#resolveCommand) throw new CoreError('invalidRequest', 'ChildSupervisor.start was already called.');
    if (this.#stopped) return Promise.reject(this.stoppedError());
    this.#resolveCommand = resolveCommand;
    this.#killGraceMs = options.killGraceMs ?? defaultChildKillGraceMs;
    return this.beginSpawn(0, 'start');
  }

  /**
   * For `reconnect`: resets the breaker, kills the current child (SIGTERM, SIGKILL after the grace
   * period), waits for its exit, and spawns a new one at once. While another (re)start is in
   * progress it returns that one's promise instead. Rejects when the new child cannot be started.
   */
  public restart(reason: string): Promise<ChildProcessHandle> {
    if (this.#restarting) return this.#restarting;
    if (this.#stopped) return Promise.reject(this.stoppedError());
    if (!this.#resolveCommand) return Promise.reject(this.notStartedError());
    this.policy.reset();
    this.cancelHalfOpenTimer();
    const old = this.#current;
    return this.track(async () => {
      if (old) {
        this.#logger.info('restarting the child', { reason, pid: old.pid });
        await this.terminate(old, 'restart');
      }
      return this.spawnLoop(0, reason);
    });
  }

  /**
   * Stops the child as a client ending its session does: its stdin is closed, so it leaves its
   * notebooks and exits by itself (clean, exit code 0); SIGTERM only when it has not after the
   * grace period, SIGKILL after another. Rejects every waiter and never spawns again. Resolves once
   * the child has exited. Idempotent.
   */
  public stop(): Promise<void> {
    if (this.#stopping) return this.#stopping;
    this.#stopped = true;
    this.#abort.abort(this.stoppedError());
    this.cancelHalfOpenTimer();
    this.rejectWaiters(this.stoppedError());
    const child = this.#current ?? this.#dying;
    this.#stopping = (async () => {
      if (!child) return;
      await this.terminate(child, 'stop');
    })();
    return this.#stopping;
  }

  /**
   * The live child, or the next one. While none is up and none is coming, asks the policy whether
   * one may be started now and starts it. Rejects at once while the breaker is open
   * (`restartBudgetExhausted`, or `childStartFailed` after a fatal exit), and with
   * `childUnavailable` after `timeoutMs`, when stopped, or before `start`.
   */
  public waitForChild(timeoutMs: number): Promise<ChildProcessHandle> {
    if (this.#stopped) return Promise.reject(this.stoppedError());
    if (this.#current) return Promise.resolve(this.#current);
    if (!this.#resolveCommand) return Promise.reject(this.notStartedError());
    if (!this.#restarting) {
      const decision = this.policy.canAttemptNow();
      if (decision.kind === 'refuse') return Promise.reject(this.refusalError(decision));
      this.beginSpawn(decision.kind === 'restart' ? decision.delayMs : 0, 'on-demand');
      // A spawn without delay is synchronous: the child may already be up.
      const spawned = this.#current as ChildProcessHandle | undefined;
      if (spawned) return Promise.resolve(spawned);
    }
    return new Promise<ChildProcessHandle>((resolve, reject) => {
      const waiter: Waiter = {
        resolve,
        reject,
        timer: this.clock.setTimer(timeoutMs, () => {
          this.#waiters.delete(waiter);
          reject(
            new CoreError(
              'childUnavailable',
              `The child MCP server did not come up within ${Math.ceil(timeoutMs / 1000)} s.`,
            ),
          );
        }),
      };
      this.#waiters.add(waiter);
    });
  }

  public onDidSpawn(listener: (child: ChildProcessHandle, info: ChildSpawnInfo) => void): Subscription {
    this.#spawnListeners.add(listener);
    return { dispose: () => this.#spawnListeners.delete(listener) };
  }

  public onDidExit(listener: (event: ChildExitEvent) => void): Subscription {
    this.#exitListeners.add(listener);
    return { dispose: () => this.#exitListeners.delete(listener) };
  }

  /** The policy refused a restart (the breaker is open); `refusal.reason` is meant for the agent. */
  public onDidRefuse(listener: (refusal: ChildRefusal) => void): Subscription {
    this.#refuseListeners.add(listener);
    return { dispose: () => this.#refuseListeners.delete(listener) };
  }

  /** Starts a (re)start unless one is in progress; returns the one in progress. */
  private beginSpawn(delayMs: number, reason: string): Promise<ChildProcessHandle> {
    if (this.#restarting) return this.#restarting;
    return this.track(() => this.spawnLoop(delayMs, reason));
  }

  /**
   * Records `run` as the (re)start in progress, from before it begins until it settles or spawns
   * a child (a child that dies at once must get a restart of its own, not this finished one).
   */
  private track(run: () => Promise<ChildProcessHandle>): Promise<ChildProcessHandle> {
    let resolve!: (child: ChildProcessHandle) => void;
    let reject!: (error: unknown) => void;
    const tracked = new Promise<ChildProcessHandle>((onResolve, onReject) => {
      resolve = onResolve;
      reject = onReject;
    });
    this.#restarting = tracked;
    tracked.catch((error: unknown) => {
      // Waiters are normally settled already (spawn, refusal, stop); this covers anything else.
      if (!this.#current && !this.#restarting) this.rejectWaiters(error);
    });
    const done = (): void => {
      if (this.#restarting === tracked) this.#restarting = undefined;
    };
    run().then(
      (child) => {
        done();
        resolve(child);
      },
      (error: unknown) => {
        done();
        reject(error);
      },
    );
    return tracked;
  }

  /** Waits `delayMs`, spawns; a spawn that fails is classified and may be retried per the policy. */
  private async spawnLoop(initialDelayMs: number, reason: string): Promise<ChildProcessHandle> {
    let delayMs = initialDelayMs;
    let why = reason;
    for (;;) {
      if (delayMs > 0) await this.clock.sleep(delayMs, this.#abort.signal);
      // Never two children: a child being killed must be gone first.
      for (let dying = this.#dying; dying; dying = this.#dying) await dying.exited;
      if (this.#stopped) throw this.stoppedError();
      const spawned = this.spawnOnce(why);
      if ('child' in spawned) return spawned.child;
      const exit = await spawned.exited;
      const decision = this.afterExit(spawned.handle, exit, undefined);
      if (decision.kind === 'refuse') throw this.refusalError(decision);
      if (decision.kind === 'stop' || this.#stopped) throw this.stoppedError();
      delayMs = decision.delayMs;
      why = 'after a failed spawn';
    }
  }

  private spawnOnce(
    reason: string,
  ):
    | { readonly child: ChildProcessHandle }
    | { readonly handle: ChildProcessHandle; readonly exited: Promise<ChildExit> } {
    let handle: ChildProcessHandle;
    try {
      const resolve = this.#resolveCommand;
      if (!resolve) throw this.notStartedError();
      handle = this.port.spawn(resolve());
    } catch (error) {
      const spawnError = error instanceof Error ? error.message : String(error);
      handle = failedChildHandle(spawnError);
    }
    if (handle.pid === undefined) return { handle, exited: handle.exited };

    const child = handle;
    this.#current = child;
    this.#restarting = undefined;
    this.#successfulSpawns += 1;
    this.policy.recordStart();
    const info: ChildSpawnInfo = { restartCount: this.restartCount, reason };
    this.#logger.info('child spawned', { pid: child.pid, restartCount: info.restartCount, reason });
    this.watchStdoutEnd(child);
    void child.exited.then((exit) => this.onLiveChildExit(child, exit));
    for (const listener of [...this.#spawnListeners]) this.safely(() => listener(child, info));
    for (const waiter of [...this.#waiters]) {
      waiter.timer.cancel();
      waiter.resolve(child);
    }
    this.#waiters.clear();
    return { child };
  }

  private onLiveChildExit(child: ChildProcessHandle, exit: ChildExit): void {
    if (this.#current === child) this.#current = undefined;
    if (this.#dying === child) this.#dying = undefined;
    const intent = this.#intents.get(child);
    this.#intents.delete(child);
    const decision = this.afterExit(child, exit, intent);
    if (intent || this.#stopped) return;
    if (decision.kind === 'restart') {
      this.beginSpawn(decision.delayMs, `after ${this.#lastExitClass ?? 'exit'}`);
    }
  }

  /** Classifies an exit, asks the policy (unless the exit was intended), and tells the listeners. */
  private afterExit(child: ChildProcessHandle, exit: ChildExit, intent: Intent | undefined): RestartDecision {
    const exitClass = this.classification.classify(exit);
    this.#lastExitClass = exitClass;
    let decision: RestartDecision;
    if (intent === 'restart') decision = { kind: 'restart', delayMs: 0 };
    else if (intent === 'stop' || this.#stopped) decision = { kind: 'stop', reason: 'The supervisor was stopped.' };
    else decision = this.policy.onExit(exitClass, exit);

    const fields = { pid: child.pid, exit: describeChildExit(exit), exitClass, decision: decision.kind };
    if (intent || this.#stopped) this.#logger.info('child exited as asked', fields);
    else if (exitClass === 'crash' || exitClass === 'fatal') this.#logger.warn('child exited', fields);
    else this.#logger.info('child exited', fields);

    const event: ChildExitEvent = { child, exit, exitClass, decision, intentional: intent !== undefined };
    for (const listener of [...this.#exitListeners]) this.safely(() => listener(event));
    if (decision.kind === 'refuse') this.refuse(decision);
    return decision;
  }

  private refuse(refusal: ChildRefusal): void {
    this.#logger.error('child restart refused', {
      cause: refusal.cause,
      reason: refusal.reason,
      nextAttemptAt: refusal.nextAttemptAt,
    });
    this.rejectWaiters(this.refusalError(refusal));
    for (const listener of [...this.#refuseListeners]) this.safely(() => listener(refusal));
    this.cancelHalfOpenTimer();
    if (refusal.nextAttemptAt !== undefined) {
      this.#halfOpenTimer = this.clock.setTimer(refusal.nextAttemptAt - this.clock.now(), () => {
        this.#halfOpenTimer = undefined;
        this.attemptAfterCoolDown();
      });
    }
  }

  private attemptAfterCoolDown(): void {
    if (this.#stopped || this.#current || this.#restarting) return;
    const decision = this.policy.canAttemptNow();
    if (decision.kind === 'restart') {
      this.beginSpawn(decision.delayMs, 'half-open attempt after the cool-down').catch(() => undefined);
    }
  }

  /**
   * Takes the child out of service and kills it: SIGTERM, SIGKILL after the grace period. Resolves
   * when it has exited. A second call for the same child only updates the intent.
   */
  private terminate(child: ChildProcessHandle, intent: Intent): Promise<ChildExit> {
    this.#intents.set(child, intent);
    if (this.#current === child) {
      this.#current = undefined;
      this.#dying = child;
    }
    const running = this.#terminations.get(child);
    if (running) return running;
    let escalation: Timer | undefined;
    const signal = (): void => {
      child.kill('SIGTERM');
      escalation = this.clock.setTimer(this.#killGraceMs, () => {
        this.#logger.warn('child ignored SIGTERM; sending SIGKILL', { pid: child.pid });
        child.kill('SIGKILL');
      });
    };
    if (intent === 'stop') {
      // The end of its input is the child's cue to leave its rooms and exit 0: the daemon then
      // keeps the kernel for its keep-alive, not for a vanished peer's longer wait.
      child.stdin.end();
      escalation = this.clock.setTimer(this.#killGraceMs, () => {
        this.#logger.warn('child did not exit after its input closed; sending SIGTERM', { pid: child.pid });
        signal();
      });
    } else signal();
    const termination = child.exited.finally(() => {
      escalation?.cancel();
      this.#terminations.delete(child);
    });
    this.#terminations.set(child, termination);
    return termination;
  }

  /** A child whose stdout ended can no longer answer; if it does not exit by itself, kill it. */
  private watchStdoutEnd(child: ChildProcessHandle): void {
    let exited = false;
    let timer: Timer | undefined;
    void child.exited.then(() => {
      exited = true;
      timer?.cancel();
    });
    child.stdout.once('end', () => {
      if (exited) return;
      timer = this.clock.setTimer(this.#killGraceMs, () => {
        if (exited || this.#intents.has(child) || this.#current !== child) return;
        this.#logger.warn('child closed stdout but did not exit; killing it', { pid: child.pid });
        child.kill('SIGTERM');
        this.clock.setTimer(this.#killGraceMs, () => child.kill('SIGKILL'));
      });
    });
  }

  private rejectWaiters(error: unknown): void {
    for (const waiter of [...this.#waiters]) {
      waiter.timer.cancel();
      waiter.reject(error);
    }
    this.#waiters.clear();
  }

  private cancelHalfOpenTimer(): void {
    this.#halfOpenTimer?.cancel();
    this.#halfOpenTimer = undefined;
  }

  private refusalError(refusal: ChildRefusal): CoreError {
    return new CoreError(refusal.cause === 'fatal' ? 'childStartFailed' : 'restartBudgetExhausted', refusal.reason);
  }

  private stoppedError(): CoreError {
    return new CoreError('childUnavailable', 'The child MCP server is stopped (the proxy is shutting down).');
  }

  private notStartedError(): CoreError {
    return new CoreError('childUnavailable', 'The child MCP server has not been started yet.');
  }

  private safely(run: () => void): void {
    try {
      run();
    } catch (error) {
      this.#logger.error('a ChildSupervisor listener threw', { error });
    }
  }
}
