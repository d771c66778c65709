import { ManualClock, RecordingLogger } from '@nteract-mcp/foundation/testing';
import { ContainerModule } from 'inversify';
import { describe, expect, it } from 'vitest';
import { NotebookBackend } from '../contributions/notebook-backend.js';
import { RecoveryContribution, type RecoveryControl } from '../contributions/recovery-contribution.js';
import { definePlugin } from '../di/mcp-plugin.js';
import { CoreError } from '../errors/core-error.js';
import { childExitCodes } from '../handoff/handoff-contract.js';
import type { NotebookTarget } from '../notebook-target/notebook-target.js';
import { Clock } from '../ports/clock.js';
import { Logger } from '../ports/logger.js';
import { SessionActivation } from '../session/session-activation.js';
import { SessionRecoveryState } from '../session/session-recovery-state.js';
import { SessionSlot } from '../session/session-slot.js';
import { createTestContainer } from '../testing/create-test-container.js';
import { type FakeNotebookBackend, fakeReopeningBackend } from '../testing/fake-notebook-backend.js';
import { FakeNotebookHandle } from '../testing/fake-notebook-handle.js';
import { type RecoveryHandoff, RecoveryLoop } from './recovery-loop.js';

/** A contribution the test drives by hand through the control it was given. */
class ManualRecovery implements RecoveryContribution {
  public readonly specificationVersion = 'v1';
  public control: RecoveryControl | undefined;
  public stopped = false;

  public constructor(
    public readonly id: string,
    private readonly kinds: readonly NotebookTarget['kind'][],
  ) {}

  public handles(target: NotebookTarget): boolean {
    return this.kinds.includes(target.kind);
  }

  public start(control: RecoveryControl): void {
    this.control = control;
  }

  public stop(): void {
    this.stopped = true;
  }

  public async idle(): Promise<void> {}
}

/** What a scripted reopen does: connect, or fail for now (`retry-later`) or for good (`evicted`). */
type ScriptedAnswer = 'connect' | { readonly kind: 'retry-later' | 'evicted'; readonly reason: string };

/**
 * Notebook backends of the given kinds (local paths and notebook ids unless told otherwise) whose
 * `reopen` answers as `answer` says for its target; records the targets tried, in order.
 */
class ScriptedBackends {
  public readonly tried: NotebookTarget[] = [];
  public readonly handles: FakeNotebookHandle[] = [];

  public constructor(
    private readonly answer: (target: NotebookTarget) => ScriptedAnswer,
    private readonly kinds: readonly ('local-path' | 'notebook-id' | 'hosted-url')[] = ['local-path', 'notebook-id'],
  ) {}

  public backends(): FakeNotebookBackend[] {
    return this.kinds.map((kind) => fakeReopeningBackend(kind, (target) => this.reopen(target)));
  }

  private async reopen(target: NotebookTarget): Promise<FakeNotebookHandle> {
    this.tried.push(target);
    const answer = this.answer(target);
    if (answer !== 'connect') {
      throw new CoreError(answer.kind === 'evicted' ? 'notebookUnavailable' : 'daemonUnavailable', answer.reason);
    }
    const handle = new FakeNotebookHandle({
      notebookId: target.kind === 'notebook-id' ? target.notebookId : `nb-${this.handles.length + 1}`,
      notebookPath: target.kind === 'local-path' ? target.path : undefined,
    });
    this.handles.push(handle);
    return handle;
  }
}

const saved: NotebookTarget = { kind: 'local-path', path: '/n/a.ipynb', existed: true };
const byId: NotebookTarget = { kind: 'notebook-id', notebookId: '0b9f2c44-5d1e-4a7b-9c3d-2e8f6a1b7c90' };

function setup(
  options: {
    handoff?: RecoveryHandoff;
    contributions?: ManualRecovery[];
    answer?: (target: NotebookTarget) => ScriptedAnswer;
    /** Whether hosted URLs have a backend too (standing for a kind no recovery contribution handles). */
    hostedBackend?: boolean;
  } = {},
) {
  const contributions = options.contributions ?? [new ManualRecovery('test.local', ['local-path', 'notebook-id'])];
  const rejoins = new ScriptedBackends(
    options.answer ?? (() => 'connect'),
    options.hostedBackend ? ['local-path', 'notebook-id', 'hosted-url'] : undefined,
  );
  const plugin = definePlugin({
    id: 'test.recovery',
    module: new ContainerModule(({ bind }) => {
      for (const contribution of contributions) bind(RecoveryContribution).toConstantValue(contribution);
      for (const backend of rejoins.backends()) bind(NotebookBackend).toConstantValue(backend);
    }),
  });
  const clock = new ManualClock();
  const container = createTestContainer({ plugins: [plugin] })
    .override(Clock, clock)
    .override(Logger, new RecordingLogger())
    .build();
  const loop = container.get(RecoveryLoop);
  const slot = container.get(SessionSlot);
  const recovery = container.get(SessionRecoveryState);
  const exits: string[] = [];
  loop.start({
    handoff: options.handoff,
    peerLabel: () => 'agent',
    exit: (code, why) => exits.push(`${code}: ${why}`),
  });
  const [first] = contributions;
  const control = (contribution = first) => {
    if (!contribution?.control) throw new Error('not started');
    return contribution.control;
  };
  return { loop, slot, recovery, rejoins, exits, control, contributions, container, clock };
}

describe(RecoveryLoop, () => {
  it('fails a handoff at once that is not a target, or that no contribution brings back', () => {
    const unusable = setup({ handoff: { requested: 'ftp://x', problem: 'unsupported scheme' } });
    expect(unusable.recovery.rejoin).toEqual({
      requested: 'ftp://x',
      outcome: 'failed',
      reason:
        'The notebook to rejoin is not a usable target (unsupported scheme). Call connect_notebook or create_notebook.',
    });
    const hosted: NotebookTarget = {
      kind: 'hosted-url',
      url: 'http://h/lab/tree/a.ipynb',
      serverUrl: 'http://h/',
      notebookPath: 'a.ipynb',
      token: undefined,
    };
    const nobody = setup({ handoff: { requested: 'http://h/lab/tree/a.ipynb?token=s3cret', target: hosted } });
    expect(nobody.recovery.rejoin).toEqual({
      requested: 'http://h/lab/tree/a.ipynb',
      outcome: 'failed',
      reason:
        'No loaded plugin brings back hosted-url targets, so http://h/lab/tree/a.ipynb was not rejoined. Call connect_notebook or create_notebook.',
    });
    expect(nobody.control().pending()).toBeUndefined();
  });

  it("brings back a kind with a backend but no recovery of its own by core's bounded retry: at once, then on the clock, then gives up", async () => {
    // Hosted here stands for any kind no contribution handles (the test contributes local recovery only).
    const archived: NotebookTarget = {
      kind: 'hosted-url',
      url: 'http://h/lab/tree/report.ipynb',
      serverUrl: 'http://h/',
      notebookPath: 'report.ipynb',
      token: undefined,
    };
    let refusals = 3;
    const t = setup({
      handoff: { requested: archived.url, target: archived },
      hostedBackend: true,
      answer: () => (refusals-- > 0 ? { kind: 'retry-later', reason: 'archive offline' } : 'connect'),
    });
    await t.loop.idle();
    expect(t.rejoins.tried).toHaveLength(1);
    expect(t.recovery.rejoin?.outcome).toBe('pending');
    for (const wait of [1_000, 2_000, 4_000]) {
      await t.clock.advance(wait);
      await t.loop.idle();
    }
    expect(t.rejoins.tried).toHaveLength(4);
    expect(t.recovery.rejoin?.outcome).toBe('rejoined');
    expect(t.slot.active?.origin).toBe('rejoin');

    const never = setup({
      handoff: { requested: archived.url, target: archived },
      hostedBackend: true,
      answer: () => ({ kind: 'retry-later', reason: 'archive offline' }),
    });
    for (let round = 0; round < 12; round++) {
      await never.loop.idle();
      await never.clock.advance(30_000);
    }
    await never.loop.idle();
    expect(never.rejoins.tried).toHaveLength(10);
    expect(never.recovery.rejoin).toMatchObject({ outcome: 'failed' });
    expect(never.recovery.rejoin?.reason).toMatch(
      /after 10 attempts \(last: archive offline\)\. Call connect_notebook/,
    );
  });

  it("notices a lost session of a kind with no recovery of its own (its handle closed by itself) and brings it back by core's bounded retry", async () => {
    // Hosted here stands for a remote third-party kind: its backend reopens it, nothing else watches it.
    const remote: NotebookTarget = {
      kind: 'hosted-url',
      url: 'http://h/lab/tree/remote.ipynb',
      serverUrl: 'http://h/',
      notebookPath: 'remote.ipynb',
      token: undefined,
    };
    let refusals = 1;
    const t = setup({
      hostedBackend: true,
      answer: () => (refusals-- > 0 ? { kind: 'retry-later', reason: 'server restarting' } : 'connect'),
    });
    const lost = new FakeNotebookHandle({ notebookId: 'nb-remote' });
    t.slot.installActivated({ handle: lost, target: remote, origin: 'connect' });
    lost.simulateClose('disconnected');
    await Promise.resolve();
    await t.loop.idle();
    expect(t.slot.lastDrop).toMatchObject({ reason: 'disconnected' });
    expect(t.slot.active).toBeUndefined();
    expect(t.rejoins.tried).toEqual([remote]);
    await t.clock.advance(1_000);
    await t.loop.idle();
    expect(t.rejoins.tried).toEqual([remote, remote]);
    expect(t.slot.active?.origin).toBe('rejoin');
    expect(t.slot.active?.target).toEqual(remote);

    // A close of our own (disconnect_notebook, shutdown) is not a loss: nothing is tried.
    const ours = setup({ hostedBackend: true });
    const closed = new FakeNotebookHandle({ notebookId: 'nb-ours' });
    ours.slot.installActivated({ handle: closed, target: remote, origin: 'connect' });
    closed.simulateClose('closed');
    await Promise.resolve();
    await ours.loop.idle();
    expect(ours.rejoins.tried).toEqual([]);
  });

  it('tries the handoff first, then the preserved target, and reports the handoff rejoined', async () => {
    const t = setup({ handoff: { requested: byId.kind, target: byId } });
    t.control().preserve(saved);
    expect(t.control().pending()).toEqual(byId);
    expect(t.recovery.report().target).toBe(byId.notebookId);
    expect(await t.control().recover()).toEqual({ kind: 'settled' });
    expect(t.rejoins.tried).toEqual([byId]);
    expect(t.slot.active?.origin).toBe('rejoin');
    expect(t.recovery.rejoin?.outcome).toBe('rejoined');
    // A published handoff ends every waiting recovery.
    expect(t.loop.pendingRecovery).toBeUndefined();
  });

  it('goes on to the preserved target when the handoff is refused for good', async () => {
    const t = setup({
      handoff: { requested: byId.notebookId, target: byId },
      answer: (target) => (target.kind === 'notebook-id' ? { kind: 'evicted', reason: 'unknown id' } : 'connect'),
    });
    t.control().preserve(saved);
    await t.control().recover();
    expect(t.rejoins.tried).toEqual([byId, saved]);
    expect(t.slot.active?.handle.notebookPath).toBe('/n/a.ipynb');
    expect(t.recovery.rejoin?.outcome).toBe('failed');
  });

  it("publishes nothing when the contribution's verify says no, and keeps the target", async () => {
    const t = setup();
    t.control().preserve(saved);
    expect(await t.control().recover(async () => false)).toEqual({
      kind: 'retry-later',
      reason: 'the daemon changed while rejoining',
    });
    expect(t.slot.active).toBeUndefined();
    expect(t.rejoins.handles[0]?.isClosed).toBe(true);
    expect(t.control().pending()).toEqual(saved);
    expect(t.recovery.isRecovering).toBe(true);
    t.control().setAttempting(false);
    expect(t.recovery.isRecovering).toBe(false);
  });

  it('cancels on an explicit disconnect at once, and lets an installed session settle the handoff', async () => {
    const cancelled = setup({ handoff: { requested: saved.kind, target: saved } });
    cancelled.slot.disconnect();
    expect(cancelled.recovery.rejoin?.outcome).toBe('failed');
    expect(cancelled.recovery.report().target).toBeNull();
    expect(await cancelled.control().recover()).toEqual({ kind: 'idle' });
    expect(cancelled.rejoins.tried).toEqual([]);

    const superseded = setup({ handoff: { requested: saved.path, target: saved } });
    await superseded.container.get(SessionActivation).activate({
      key: saved.path,
      target: saved,
      origin: 'connect',
      connect: async () => new FakeNotebookHandle({ notebookId: 'nb-x', notebookPath: saved.path }),
    });
    expect(superseded.recovery.rejoin).toEqual({ requested: saved.path, outcome: 'rejoined' });
    expect(superseded.control().pending()).toBeUndefined();
  });

  it("gives up only the giving contribution's targets, with its text", () => {
    const local = new ManualRecovery('test.local', ['local-path']);
    const ids = new ManualRecovery('test.ids', ['notebook-id']);
    const t = setup({ contributions: [local, ids], handoff: { requested: byId.notebookId, target: byId } });
    t.control(local).preserve(saved);
    t.control(local).giveUp('not this one');
    expect(t.control(local).pending()).toBeUndefined();
    expect(t.control(ids).pending()).toEqual(byId);
    t.control(ids).giveUp('the server never answered');
    expect(t.recovery.rejoin).toEqual({
      requested: byId.notebookId,
      outcome: 'failed',
      reason: 'the server never answered',
    });
  });

  it('asks for the upgrade handoff exit once, and stops its contributions on stop', () => {
    const t = setup();
    t.control().requestUpgradeExit('1.0.0', '1.1.0');
    t.control().requestUpgradeExit('1.0.0', '1.2.0');
    expect(t.exits).toEqual([`${childExitCodes.upgradeHandoff}: daemon version changed from 1.0.0 to 1.1.0`]);
    expect(t.recovery.watched).toBe(true);
    t.loop.stop();
    expect(t.contributions[0]?.stopped).toBe(true);
    expect(t.recovery.watched).toBe(false);
  });
});
