import {
  type ChannelCredential,
  Clock,
  type HostedUrlTarget,
  KeptCredentials,
  Logger,
  NotebookTargetResolver,
  RecoveryContribution,
  RecoveryLoop,
  type RetrySchedule,
  SessionRecoveryState,
  SessionSlot,
} from '@nteract-mcp/core';
import { createTestContainer, ManualClock, RecordingLogger } from '@nteract-mcp/core/testing';
import { describe, expect, it } from 'vitest';
import { createHostedPlugin } from './create-hosted-plugin.js';
import { kernelWatchMs } from './hosted-notebook-handle.js';
import { HostedRejoinRetry } from './hosted-rejoin-retry.js';
import { FakeJupyterServer } from './testing/fake-jupyter-server.js';

const url = 'http://127.0.0.1:8888/lab/tree/a.ipynb';
const notebook = { cells: [], metadata: {}, nbformat: 4, nbformat_minor: 5 };

function setup(
  options: {
    handoff?: boolean;
    retry?: RetrySchedule;
    env?: Record<string, string>;
    handed?: ChannelCredential[];
  } = {},
) {
  const clock = new ManualClock();
  const server = new FakeJupyterServer('s3cret');
  server.writeFile('a.ipynb', notebook);
  const logger = new RecordingLogger();
  const container = createTestContainer({
    plugins: [
      createHostedPlugin({
        env: options.env ?? { JUPYTER_TOKEN: 's3cret' },
        connector: server,
        ...(options.retry ? { retry: options.retry } : {}),
      }),
    ],
  })
    .override(Clock, clock)
    .override(Logger, logger)
    .build();
  const loop = container.get(RecoveryLoop);
  const slot = container.get(SessionSlot);
  const recovery = container.get(SessionRecoveryState);
  const resolver = container.get(NotebookTargetResolver);
  // What a restarted child's credential channel brings: the tokens earlier children kept.
  if (options.handed) container.get(KeptCredentials).connect(options.handed, () => undefined);
  const target = resolver.resolve(url, { cwd: '/' }) as HostedUrlTarget;
  const started: number[] = [];
  const since = clock.now();
  const startLoop = () =>
    loop.start({
      ...(options.handoff === false ? {} : { handoff: { requested: `${url}?token=s3cret`, target } }),
      peerLabel: () => 'agent',
      exit: () => undefined,
    });
  /** Moves time in 100 ms steps, letting each attempt finish, until no retry is pending (bounded). */
  const runOut = async (until: () => boolean = () => false) => {
    for (let i = 0; i < 10_000 && clock.pendingTimerCount > 0 && !until(); i++) {
      await clock.advanceAndSettle(100);
      await loop.idle();
    }
  };
  /** The times (ms on the clock) the server was asked for the notebook while it was down. */
  const attempts = () => started;
  const originalOpen = server.open.bind(server);
  server.open = (address) => {
    started.push(clock.now() - since);
    return originalOpen(address);
  };
  return { clock, server, loop, slot, recovery, resolver, target, runOut, attempts, startLoop, logger };
}

function gaps(times: readonly number[]): number[] {
  return times.slice(1).map((at, i) => at - (times[i] as number));
}

describe(HostedRejoinRetry, () => {
  it('is the hosted plugin’s contribution to the recovery loop', () => {
    const contributions = createTestContainer({ plugins: [createHostedPlugin({ env: {} })] })
      .build()
      .getAll(RecoveryContribution);
    expect(contributions.map((contribution) => contribution.id)).toEqual(['hosted.rejoin-retry']);
  });

  it('tries a handoff at once, then after 1 s doubling to 30 s, and gives up after 10 attempts with a drop reason', async () => {
    const t = setup();
    t.server.stop();
    t.startLoop();
    await t.loop.idle();
    expect(t.attempts()).toEqual([0]);
    expect(t.recovery.rejoin).toEqual({
      requested: url,
      outcome: 'pending',
      reason: 'the Jupyter Server at http://127.0.0.1:8888/ does not answer.',
    });
    await t.runOut();
    expect(gaps(t.attempts())).toEqual([1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000, 30_000, 30_000]);
    expect(t.recovery.rejoin).toEqual({
      requested: url,
      outcome: 'failed',
      reason: `Could not rejoin ${url} after 10 attempts (last: the Jupyter Server at http://127.0.0.1:8888/ does not answer.). Reconnect with: connect_notebook(url="${url}") once the server answers.`,
    });
    expect(t.loop.pendingRecovery).toBeUndefined();
    expect(t.clock.pendingTimerCount).toBe(0);
    expect(t.recovery.isRecovering).toBe(false);
  });

  it('rejoins a handoff (its URL has no token) with the token an earlier child kept for the server', async () => {
    const t = setup({ env: {}, handed: [{ scope: 'http://127.0.0.1:8888/', token: 's3cret' }] });
    t.startLoop();
    await t.loop.idle();
    expect(t.slot.active?.origin).toBe('rejoin');
    expect(t.recovery.rejoin).toMatchObject({ requested: url, outcome: 'rejoined' });
  });

  it('drops a handoff at once when the server refuses the credentials, with its reason (no retries)', async () => {
    const t = setup({ env: {}, handed: [{ scope: 'http://127.0.0.1:8888/', token: 'stale' }] });
    t.startLoop();
    await t.loop.idle();
    expect(t.attempts()).toEqual([0]);
    expect(t.recovery.rejoin).toMatchObject({ requested: url, outcome: 'failed' });
    expect(t.recovery.rejoin?.reason).toContain('refused the credentials (HTTP 403)');
    expect(t.clock.pendingTimerCount).toBe(0);
    expect(JSON.stringify([t.recovery.report(), t.logger.records])).not.toContain('stale');
  });

  it('follows the schedule given in the plugin options', async () => {
    const t = setup({ retry: { initialMs: 200, maxMs: 500, maxAttempts: 4 } });
    t.server.stop();
    t.startLoop();
    await t.loop.idle();
    await t.runOut();
    expect(gaps(t.attempts())).toEqual([200, 400, 500]);
    expect(t.recovery.rejoin?.outcome).toBe('failed');
    expect(t.recovery.rejoin?.reason).toMatch(/after 4 attempts/);
  });

  it('rejoins the handoff on the same kernel once the server answers', async () => {
    const t = setup();
    const kernel = (
      await t.server
        .open({ serverUrl: t.target.serverUrl, token: t.target.token })
        .findOrStartSession('a.ipynb', 'python3')
    ).kernelId;
    t.server.stop();
    t.startLoop();
    await t.loop.idle();
    await t.clock.advanceAndSettle(1_000);
    await t.loop.idle();
    t.server.start();
    await t.runOut(() => t.slot.active !== undefined);
    expect(t.slot.active?.origin).toBe('rejoin');
    expect((t.slot.active?.handle as unknown as { kernelId: string } | undefined)?.kernelId).toBe(kernel);
    expect(t.recovery.rejoin).toEqual({ requested: url, outcome: 'rejoined' });
    // Only the handle's watch of its kernel.
    expect(t.clock.pendingTimerCount).toBe(1);
  });

  it('a kernel culled by the server (its websocket left open) is noticed by the kernel watch; the notebook comes back on a new kernel, with the notice', async () => {
    const t = setup();
    await t.server
      .open({ serverUrl: t.target.serverUrl, token: t.target.token })
      .findOrStartSession('a.ipynb', 'python3');
    t.startLoop();
    await t.loop.idle();
    const first = t.slot.active?.handle as unknown as { kernelId: string; isClosed: boolean };
    expect(first.kernelId).toBeDefined();
    t.server.cull('a.ipynb');
    await t.clock.advanceAndSettle(kernelWatchMs);
    expect(first.isClosed).toBe(true);
    await t.runOut(() => t.slot.active !== undefined && !t.slot.active.handle.isClosed);
    const again = t.slot.active?.handle as unknown as { kernelId: string; kernelNotice?: string };
    expect(again.kernelId).not.toBe(first.kernelId);
    expect(again.kernelNotice).toMatch(
      /culled for idleness\); the notebook was reloaded from the server: code now runs in a new kernel/,
    );
  });

  it('a handoff rejoined on a new kernel (the server restarted) says so in the rejoin report', async () => {
    const t = setup();
    await t.server
      .open({ serverUrl: t.target.serverUrl, token: t.target.token })
      .findOrStartSession('a.ipynb', 'python3');
    t.server.restart();
    t.startLoop();
    await t.loop.idle();
    expect(t.slot.active?.origin).toBe('rejoin');
    expect(t.recovery.rejoin).toEqual({
      requested: url,
      outcome: 'rejoined',
      note: "The Jupyter Server at http://127.0.0.1:8888/ no longer had this notebook's kernel (the server restarted, or the kernel was shut down, e.g. culled for idleness); the notebook was reloaded from the server: code now runs in a new kernel, so variables and imports from earlier runs are not defined until their cells run again.",
    });
  });

  it('notices a lost server under the active session: removes it, retries on the timer, comes back with the kernel-lost note', async () => {
    const t = setup({ handoff: false });
    t.startLoop();
    const backend = t.resolver.backendFor(t.target);
    const handle = await backend.connect(t.target, { peerLabel: 'agent', signal: new AbortController().signal });
    const cell = await handle.insertCell({ source: 'x = 41', cellType: 'code' });
    await handle.executeCell(cell.id);
    t.slot.installActivated({ handle, target: t.target, origin: 'connect' });
    const before = t.attempts().length;
    t.server.stop();
    await Promise.resolve();
    await t.loop.idle();
    expect(t.slot.active).toBeUndefined();
    expect(t.slot.lastDrop).toMatchObject({ reason: 'disconnected' });
    expect(t.loop.pendingRecovery).toMatchObject({ kind: 'hosted-url', url });
    expect(t.attempts().length).toBe(before + 1);
    await t.clock.advanceAndSettle(1_000);
    await t.loop.idle();
    expect(t.attempts().length).toBe(before + 2);
    // The server comes back after a restart: same file, no kernel.
    t.server.restart();
    await t.runOut(() => t.slot.active !== undefined);
    const back = t.slot.active;
    expect(back?.origin).toBe('rejoin');
    const check = await back?.handle.insertCell({ source: 'print(x + 1)', cellType: 'code' });
    const result = await back?.handle.executeCell(check?.id as string);
    expect(result?.kernelNotice).toMatch(/no longer had this notebook's kernel/);
    expect(JSON.stringify(t.logger.records)).not.toContain('s3cret');
  });

  it('a server gone for good: retries stop after the bound, and the next tool is told why and how to reconnect by URL', async () => {
    const t = setup({ handoff: false, retry: { initialMs: 100, maxMs: 200, maxAttempts: 3 } });
    t.startLoop();
    const backend = t.resolver.backendFor(t.target);
    const handle = await backend.connect(t.target, { peerLabel: 'agent', signal: new AbortController().signal });
    t.slot.installActivated({ handle, target: t.target, origin: 'connect' });
    t.server.stop();
    await Promise.resolve();
    await t.loop.idle();
    await t.runOut();
    expect(t.clock.pendingTimerCount).toBe(0);
    expect(t.loop.pendingRecovery).toBeUndefined();
    const reason = `Could not rejoin ${url} after 3 attempts (last: the Jupyter Server at http://127.0.0.1:8888/ does not answer.). Reconnect with: connect_notebook(url="${url}") once the server answers.`;
    expect(t.slot.lastDrop).toMatchObject({ reason: 'disconnected', detail: reason });
    expect(() => t.slot.access('runtime')).toThrowError(
      `No active notebook session (connection to its server lost). ${reason}`,
    );
  });

  it('stops retrying when the agent disconnects', async () => {
    const t = setup();
    t.server.stop();
    t.startLoop();
    await t.loop.idle();
    t.slot.disconnect();
    await t.runOut();
    expect(t.attempts()).toEqual([0]);
    expect(t.recovery.rejoin?.outcome).toBe('failed');
    expect(t.clock.pendingTimerCount).toBe(0);
  });
});
