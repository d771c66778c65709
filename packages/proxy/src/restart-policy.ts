import type { ChildExit, ChildExitClass } from '@nteract-mcp/core';
import { Clock, defineToken } from '@nteract-mcp/core';
import { inject, injectable, optional } from 'inversify';

/** The numbers of the restart policy (ARCHITECTURE.md decision 1). Every duration is in ms. */
export interface RestartPolicySettings {
  /** Crash restarts allowed within {@link RestartPolicySettings.crashWindowMs}. Default 5. */
  readonly crashBudget: number;
  /** The sliding window of the crash budget. Default 30 s. */
  readonly crashWindowMs: number;
  /**
   * Delay before the second consecutive crash restart (the first is immediate); it doubles for
   * each further one. Default 250 ms (0, 250, 500, 1 s, 2 s, 4 s, 5 s …).
   */
  readonly firstCrashDelayMs: number;
  /** Cap of the crash-restart delay. Default 5 s. */
  readonly maxCrashDelayMs: number;
  /** Uptime after which a child counts as healthy: the delay resets, a half-open breaker closes. Default 60 s. */
  readonly healthyUptimeMs: number;
  /** How long an open breaker refuses before it half-opens. Default 60 s. */
  readonly coolDownMs: number;
  /** Handoffs (exit 75) restarted without charge within {@link RestartPolicySettings.handoffWindowMs}. Default 10. */
  readonly handoffCap: number;
  /** The sliding window of the handoff cap. Default 60 s. */
  readonly handoffWindowMs: number;
}

/** The defaults of ARCHITECTURE.md decision 1. */
export const defaultRestartPolicySettings: RestartPolicySettings = Object.freeze({
  crashBudget: 5,
  crashWindowMs: 30_000,
  firstCrashDelayMs: 250,
  maxCrashDelayMs: 5_000,
  healthyUptimeMs: 60_000,
  coolDownMs: 60_000,
  handoffCap: 10,
  handoffWindowMs: 60_000,
});

/**
 * Overrides of the restart policy numbers (e.g. from the proxy's command line). Core binds it to
 * {@link defaultRestartPolicySettings}; a partial binding keeps the defaults for the rest.
 */
export const RestartPolicySettings = defineToken<Partial<RestartPolicySettings>>('proxy', 'RestartPolicySettings');

/**
 * - `closed`: restarts are allowed within the crash budget.
 * - `open`: restarts are refused (budget exhausted, or a fatal exit) until the cool-down ends, or
 *   until {@link RestartPolicy.reset}; a fatal exit has no cool-down.
 * - `half-open`: one attempt is allowed; a crash before it is healthy re-opens, a healthy run closes.
 */
export type BreakerState = 'closed' | 'open' | 'half-open';

/**
 * - `restart`: start a child after `delayMs`.
 * - `refuse`: do not start one now. `cause` is `budget-exhausted` (too many crashes; `nextAttemptAt`
 *   says when an attempt is allowed again) or `fatal` (restarting cannot help; no automatic
 *   attempt, only a reset). `reason` is a sentence for the agent naming the last exit.
 * - `stop`: the child stopped on purpose; do not restart by itself (a later call may start one).
 */
export type RestartDecision =
  | { readonly kind: 'restart'; readonly delayMs: number }
  | {
      readonly kind: 'refuse';
      readonly cause: 'budget-exhausted' | 'fatal';
      readonly reason: string;
      readonly lastExit: ChildExit | undefined;
      /** Milliseconds since the epoch, by the policy's clock; absent when no attempt will be allowed by itself. */
      readonly nextAttemptAt?: number;
    }
  | { readonly kind: 'stop'; readonly reason: string };

/** What `session_status` shows of the policy. */
export interface RestartPolicySnapshot {
  readonly breaker: BreakerState;
  /** Crash restarts within the sliding crash window. */
  readonly restartsInWindow: number;
  /** Crash restarts still allowed in the window (0 while the breaker is open). */
  readonly budgetLeft: number;
  /** Uncharged handoff restarts within the sliding handoff window. */
  readonly handoffsInWindow: number;
  readonly lastExitClass: ChildExitClass | undefined;
  readonly lastExit: ChildExit | undefined;
  /** Set while the breaker is open with a cool-down: when an attempt is allowed again. */
  readonly nextAttemptAt?: number;
}

/** A short description of a child exit for messages and logs: `exit code 1`, `signal SIGKILL`, … */
export function describeChildExit(exit: ChildExit): string {
  if (exit.spawnError !== undefined) return `spawn failed (${exit.spawnError})`;
  if (exit.signal !== null) return `signal ${exit.signal}`;
  if (exit.code !== null) return `exit code ${exit.code}`;
  return 'unknown exit';
}

/**
 * The restart policy of the proxy (ARCHITECTURE.md decision 1), as pure bookkeeping over the
 * injected {@link Clock}: it schedules nothing and starts nothing; {@link ChildSupervisor} asks it.
 *
 * Protocol: call {@link RestartPolicy.recordStart} when a child is up, {@link RestartPolicy.onExit}
 * when a child the caller did not kill on purpose has exited, {@link RestartPolicy.canAttemptNow}
 * when a child is wanted while none is up or coming, and {@link RestartPolicy.reset} on `reconnect`.
 *
 * Rules:
 * - A `crash` is restarted while fewer than `crashBudget` crash restarts happened in the last
 *   `crashWindowMs` (a crash exactly `crashWindowMs` old no longer counts). The delay is 0 for the
 *   first crash of a streak, then `firstCrashDelayMs` doubling, capped at `maxCrashDelayMs`; a
 *   child that was up for `healthyUptimeMs` ends the streak. Over budget the breaker opens for
 *   `coolDownMs`; the refused crash is not counted.
 * - A `handoff` restarts at once and is not charged, up to `handoffCap` within `handoffWindowMs`;
 *   beyond that it is treated as a crash.
 * - `clean-stop` ⇒ `stop`. `fatal` ⇒ the breaker opens without a cool-down (only `reset` reopens).
 * - Open ⇒ every question is refused until the cool-down has passed; then half-open: attempts
 *   are allowed; a crash (or a handoff over the cap) of a child started while half-open before
 *   `healthyUptimeMs` re-opens the breaker for another cool-down; once such a child has been up for
 *   `healthyUptimeMs` the breaker closes and the crash window and delay streak start afresh.
 *
 * Does not guarantee: anything about a child the caller does not report; the state is evaluated
 * lazily at each call, so "healthy" is noticed on the next call, not by a timer.
 */
@injectable()
export class RestartPolicy {
  readonly #settings: RestartPolicySettings;
  #breaker: BreakerState = 'closed';
  #openedForCause: 'budget-exhausted' | 'fatal' = 'budget-exhausted';
  #nextAttemptAt: number | undefined;
  #openReason = '';
  #crashes: number[] = [];
  #handoffs: number[] = [];
  #streak = 0;
  #startedAt: number | undefined;
  #startedHalfOpen = false;
  #lastExit: ChildExit | undefined;
  #lastExitClass: ChildExitClass | undefined;

  public constructor(
    @inject(Clock) private readonly clock: Clock,
    @inject(RestartPolicySettings) @optional() settings?: Partial<RestartPolicySettings>,
  ) {
    this.#settings = { ...defaultRestartPolicySettings, ...settings };
  }

  /** The effective numbers (defaults merged with the overrides). */
  public get settings(): RestartPolicySettings {
    return this.#settings;
  }

  /** A child is up from now on (its uptime counts from here). */
  public recordStart(): void {
    this.refresh();
    this.#startedAt = this.clock.now();
    this.#startedHalfOpen = this.#breaker === 'half-open';
  }

  /** The child that was recorded last has exited on its own, with this class; what now? */
  public onExit(exitClass: ChildExitClass, exit: ChildExit): RestartDecision {
    this.refresh();
    const now = this.clock.now();
    const uptime = this.#startedAt === undefined ? 0 : now - this.#startedAt;
    const probe = this.#startedHalfOpen && this.#startedAt !== undefined;
    this.#startedAt = undefined;
    this.#startedHalfOpen = false;
    this.#lastExit = exit;
    this.#lastExitClass = exitClass;
    if (uptime >= this.#settings.healthyUptimeMs) this.#streak = 0;
    this.prune(now);

    switch (exitClass) {
      case 'clean-stop':
        return { kind: 'stop', reason: `The child MCP server stopped on its own (${describeChildExit(exit)}).` };
      case 'fatal':
        return this.open(
          'fatal',
          undefined,
          `The child MCP server cannot run (${describeChildExit(exit)}); restarting it cannot help, so it is not ` +
            'restarted automatically. Fix the cause, then call reconnect to try again.',
        );
      case 'handoff':
        if (this.#handoffs.length < this.#settings.handoffCap) {
          this.#handoffs.push(now);
          return { kind: 'restart', delayMs: 0 };
        }
        return this.onCrash(
          now,
          probe,
          `${describeChildExit(exit)}, a handoff beyond the cap of ${this.#settings.handoffCap} in ` +
            `${seconds(this.#settings.handoffWindowMs)}`,
        );
      case 'crash':
        return this.onCrash(now, probe, describeChildExit(exit));
    }
  }

  /**
   * May a child be started now, for a call that arrived while none is up or coming? Never charges
   * the budget. `restart` (delay 0) while closed or half-open; `refuse` while open, with a reason
   * computed for the current time.
   */
  public canAttemptNow(): RestartDecision {
    this.refresh();
    if (this.#breaker === 'open') return this.refusal();
    return { kind: 'restart', delayMs: 0 };
  }

  /** For `reconnect`: closes the breaker at once and forgets the crash window, the handoffs and the delay streak. */
  public reset(): void {
    this.#breaker = 'closed';
    this.#nextAttemptAt = undefined;
    this.#crashes = [];
    this.#handoffs = [];
    this.#streak = 0;
    this.#startedHalfOpen = false;
  }

  public snapshot(): RestartPolicySnapshot {
    this.refresh();
    this.prune(this.clock.now());
    return {
      breaker: this.#breaker,
      restartsInWindow: this.#crashes.length,
      budgetLeft: this.#breaker === 'open' ? 0 : Math.max(0, this.#settings.crashBudget - this.#crashes.length),
      handoffsInWindow: this.#handoffs.length,
      lastExitClass: this.#lastExitClass,
      lastExit: this.#lastExit,
      ...(this.#breaker === 'open' && this.#nextAttemptAt !== undefined ? { nextAttemptAt: this.#nextAttemptAt } : {}),
    };
  }

  private onCrash(now: number, probe: boolean, lastExit: string): RestartDecision {
    if (probe) {
      return this.open(
        'budget-exhausted',
        now + this.#settings.coolDownMs,
        `The child MCP server failed again after the cool-down (last exit: ${lastExit}).`,
      );
    }
    if (this.#crashes.length >= this.#settings.crashBudget) {
      return this.open(
        'budget-exhausted',
        now + this.#settings.coolDownMs,
        `The child MCP server failed ${this.#crashes.length + 1} times within ${seconds(this.#settings.crashWindowMs)} ` +
          `(last exit: ${lastExit}); the restart budget of ${this.#settings.crashBudget} is exhausted.`,
      );
    }
    this.#crashes.push(now);
    const delayMs =
      this.#streak === 0
        ? 0
        : Math.min(this.#settings.maxCrashDelayMs, this.#settings.firstCrashDelayMs * 2 ** (this.#streak - 1));
    this.#streak += 1;
    return { kind: 'restart', delayMs };
  }

  private open(
    cause: 'budget-exhausted' | 'fatal',
    nextAttemptAt: number | undefined,
    reason: string,
  ): RestartDecision {
    this.#breaker = 'open';
    this.#openedForCause = cause;
    this.#nextAttemptAt = nextAttemptAt;
    this.#openReason = reason;
    return this.refusal();
  }

  private refusal(): RestartDecision {
    const next = this.#nextAttemptAt;
    const when =
      next === undefined
        ? ''
        : ` Next attempt at ${new Date(next).toISOString()} (in ${seconds(Math.max(0, next - this.clock.now()))}), or ` +
          'call reconnect to retry now.';
    return {
      kind: 'refuse',
      cause: this.#openedForCause,
      reason: `${this.#openReason}${when}`,
      lastExit: this.#lastExit,
      ...(next !== undefined ? { nextAttemptAt: next } : {}),
    };
  }

  /** Applies the transitions that only depend on time: open → half-open, half-open → closed. */
  private refresh(): void {
    const now = this.clock.now();
    if (this.#breaker === 'open' && this.#nextAttemptAt !== undefined && now >= this.#nextAttemptAt) {
      this.#breaker = 'half-open';
      this.#nextAttemptAt = undefined;
    }
    if (
      this.#breaker === 'half-open' &&
      this.#startedHalfOpen &&
      this.#startedAt !== undefined &&
      now - this.#startedAt >= this.#settings.healthyUptimeMs
    ) {
      this.#breaker = 'closed';
      this.#startedHalfOpen = false;
      this.#crashes = [];
      this.#streak = 0;
    }
  }

  private prune(now: number): void {
    this.#crashes = this.#crashes.filter((at) => now - at < this.#settings.crashWindowMs);
    this.#handoffs = this.#handoffs.filter((at) => now - at < this.#settings.handoffWindowMs);
  }
}

function seconds(ms: number): string {
  return `${Math.ceil(ms / 1000)} s`;
}
