import {
  Clock,
  definePlugin,
  type HostedUrlTarget,
  Logger,
  type NotebookTarget,
  RecoveryContribution,
  RecoveryLoop,
  type RejoinOutcome,
  RejoinStrategy,
  SessionRecoveryState,
  SessionSlot,
} from '@nteract-mcp/core';
import { createTestContainer, FakeNotebookHandle, ManualClock, RecordingLogger } from '@nteract-mcp/core/testing';
import { ContainerModule } from 'inversify';
import { describe, expect, it } from 'vitest';
import { createHostedPlugin } from './create-hosted-plugin.js';
import { HostedRejoinRetry } from './hosted-rejoin-retry.js';

const url = 'http://127.0.0.1:8888/lab/tree/a.ipynb';
const target: HostedUrlTarget = {
  kind: 'hosted-url',
  url,
  serverUrl: 'http://127.0.0.1:8888/',
  notebookPath: 'a.ipynb',
  token: undefined,
};

/** A hosted backend as a fake: answers each attempt from `outcomes` (then the last one again), noting when (ms since made). */
class FakeHostedStrategy implements RejoinStrategy {
  public readonly id = 'test.hosted-backend';
  public readonly specificationVersion = 'v1';
  public readonly attempts: number[] = [];
  readonly #since: number;

  public constructor(
    private readonly clock: ManualClock,
    private readonly outcomes: (() => RejoinOutcome)[],
  ) {
    this.#since = clock.now();
  }

  public supports(candidate: NotebookTarget): boolean {
    return candidate.kind === 'hosted-url';
  }

  public async rejoin(): Promise<RejoinOutcome> {
    this.attempts.push(this.clock.now() - this.#since);
    const next = this.outcomes.length > 1 ? this.outcomes.shift() : this.outcomes[0];
    if (!next) throw new Error('FakeHostedStrategy: no outcome');
    return next();
  }
}

const refused = (): RejoinOutcome => ({ kind: 'retry-later', reason: 'connect ECONNREFUSED 127.0.0.1:8888' });

function setup(outcomes: (() => RejoinOutcome)[], options: { backend?: boolean } = {}) {
  const clock = new ManualClock();
  const strategy = new FakeHostedStrategy(clock, outcomes);
  const backend = definePlugin({
    id: 'test.hosted-backend',
    module: new ContainerModule(({ bind }) => {
      bind(RejoinStrategy).toConstantValue(strategy);
    }),
  });
  const container = createTestContainer({
    plugins: [createHostedPlugin({ env: {} }), ...(options.backend === false ? [] : [backend])],
  })
    .override(Clock, clock)
    .override(Logger, new RecordingLogger())
    .build();
  const loop = container.get(RecoveryLoop);
  const slot = container.get(SessionSlot);
  const recovery = container.get(SessionRecoveryState);
  loop.start({ handoff: { requested: url, target }, peerLabel: () => 'agent', exit: () => undefined });
  /** Moves time in 100 ms steps, letting each attempt finish, until no retry is pending (bounded). */
  const runOut = async () => {
    for (let i = 0; i < 10_000 && clock.pendingTimerCount > 0; i++) {
      await clock.advanceAndSettle(100);
      await loop.idle();
    }
  };
  return { clock, strategy, loop, slot, recovery, runOut };
}

describe(HostedRejoinRetry, () => {
  it('is the hosted plugin’s contribution to the recovery loop', () => {
    const contributions = createTestContainer({ plugins: [createHostedPlugin({ env: {} })] })
      .build()
      .getAll(RecoveryContribution);
    expect(contributions.map((contribution) => contribution.id)).toEqual(['hosted.rejoin-retry']);
  });

  it('tries at once, then after 1 s doubling to 30 s, and gives up after 10 attempts with a failed outcome', async () => {
    const t = setup([refused]);
    await t.loop.idle();
    expect(t.strategy.attempts).toEqual([0]);
    expect(t.recovery.rejoin).toEqual({ requested: url, outcome: 'pending' });
    await t.runOut();
    const gaps = t.strategy.attempts.slice(1).map((at, i) => at - (t.strategy.attempts[i] as number));
    expect(gaps).toEqual([1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000, 30_000, 30_000]);
    expect(t.strategy.attempts).toHaveLength(10);
    expect(t.recovery.rejoin).toEqual({
      requested: url,
      outcome: 'failed',
      reason: `Could not rejoin ${url} after 10 attempts (last: connect ECONNREFUSED 127.0.0.1:8888). Reconnect with: connect_notebook(url="${url}") once the server answers.`,
    });
    expect(t.loop.pendingRecovery).toBeUndefined();
    expect(t.recovery.report().target).toBeNull();
    expect(t.clock.pendingTimerCount).toBe(0);
    expect(t.recovery.isRecovering).toBe(false);
  });

  it('rejoins once the server answers', async () => {
    const handle = new FakeNotebookHandle({ notebookId: 'hosted-1' });
    const t = setup([refused, refused, () => ({ kind: 'connected', handle })]);
    await t.loop.idle();
    await t.runOut();
    expect(t.strategy.attempts).toHaveLength(3);
    expect(t.slot.active?.handle).toBe(handle);
    expect(t.slot.active?.origin).toBe('rejoin');
    expect(t.recovery.rejoin).toEqual({ requested: url, outcome: 'rejoined' });
    expect(t.clock.pendingTimerCount).toBe(0);
  });

  it('stops retrying when the agent disconnects', async () => {
    const t = setup([refused]);
    await t.loop.idle();
    t.slot.disconnect();
    await t.runOut();
    expect(t.strategy.attempts).toEqual([0]);
    expect(t.recovery.rejoin?.outcome).toBe('failed');
    expect(t.clock.pendingTimerCount).toBe(0);
  });

  it('fails at once, without retrying, when no backend can open hosted notebooks', async () => {
    const t = setup([refused], { backend: false });
    await t.loop.idle();
    expect(t.recovery.rejoin).toEqual({
      requested: url,
      outcome: 'failed',
      reason: `No active notebook session (notebook was evicted (idle timeout)). Reconnect with: connect_notebook(url="${url}")`,
    });
    expect(t.clock.pendingTimerCount).toBe(0);
  });
});
