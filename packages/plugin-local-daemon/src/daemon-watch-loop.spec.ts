import {
  Clock,
  CoreError,
  childExitCodes,
  DaemonPort,
  definePlugin,
  Logger,
  type McpPlugin,
  NotebookBackend,
  type NotebookHandle,
  NotebookTargetResolver,
  type RecoveryHandoff,
  RecoveryLoop,
  SessionActivation,
  SessionRecoveryState,
  type SessionReport,
  SessionSlot,
  SourceFileProbe,
} from '@nteract-mcp/core';
import {
  createTestContainer,
  FakeDaemonPort,
  FakeNotebookBackend,
  FakeNotebookHandle,
  FakeSourceFileProbe,
  ManualClock,
  RecordingLogger,
} from '@nteract-mcp/core/testing';
import { ContainerModule } from 'inversify';
import { describe, expect, it, vi } from 'vitest';
import { createLocalDaemonPlugin } from './create-local-daemon-plugin.js';
import { DaemonStarter } from './daemon-starter.js';
import { announcedShutdownGraceMs, DaemonWatchLoop, restartBackoffMaxMs } from './daemon-watch-loop.js';

/**
 * The auto-start as a fake: records when it was asked, fails the next `failures` attempts, can
 * be held open (`hold`) to interleave tool calls with a restart, and otherwise starts the fake
 * daemon (a daemon already running counts as started, as the real one does).
 */
class FakeDaemonStarter implements DaemonStarter {
  public enabled: boolean;
  public failures = 0;
  public readonly attempts: number[] = [];
  #held: Promise<void> | undefined;
  #release: (() => void) | undefined;

  public constructor(
    private readonly daemon: FakeDaemonPort,
    private readonly clock: ManualClock,
    enabled: boolean,
  ) {
    this.enabled = enabled;
  }

  /** The next start waits until {@link FakeDaemonStarter.release}. */
  public hold(): void {
    this.#held = new Promise((resolve) => {
      this.#release = resolve;
    });
  }

  public release(): void {
    this.#release?.();
    this.#held = undefined;
  }

  public async start(): Promise<void> {
    this.attempts.push(this.clock.now());
    if (this.#held) await this.#held;
    if (this.failures > 0) {
      this.failures -= 1;
      throw new CoreError('daemonUnavailable', 'FakeDaemonStarter: the daemon did not come up (injected)');
    }
    this.daemon.start();
  }
}

function setup(
  options: {
    daemon?: FakeDaemonPort;
    files?: string[];
    handoff?: RecoveryHandoff;
    autoStart?: boolean;
    plugins?: McpPlugin[];
  } = {},
) {
  const daemon = options.daemon ?? new FakeDaemonPort({ version: '1.0.0' });
  const files = new FakeSourceFileProbe(options.files ?? []);
  const logger = new RecordingLogger();
  const clock = new ManualClock();
  const starter = new FakeDaemonStarter(daemon, clock, options.autoStart ?? false);
  const subscribe = vi.spyOn(daemon, 'subscribe');
  // The plugin's own wiring, with only its ports replaced by fakes.
  const container = createTestContainer({ plugins: [createLocalDaemonPlugin(), ...(options.plugins ?? [])] })
    .override(DaemonPort, daemon)
    .override(DaemonStarter, starter)
    .override(SourceFileProbe, files)
    .override(Clock, clock)
    .override(Logger, logger)
    .build();
  const slot = container.get(SessionSlot);
  const activation = container.get(SessionActivation);
  const recovery = container.get(SessionRecoveryState);
  const loop = container.get(RecoveryLoop);
  const watch = container.get(DaemonWatchLoop);
  const exits: string[] = [];
  loop.start({
    peerLabel: () => 'Claude Code agent:claude-code:s1',
    handoff: options.handoff,
    exit: (code, why) => exits.push(`${code}: ${why}`),
  });
  const open = (path: string) =>
    activation.activate({
      key: path,
      target: { kind: 'local-path', path, existed: true },
      origin: 'connect',
      connect: () => daemon.openNotebook(path, { peerLabel: 'x' }),
    });
  const create = (ephemeral: boolean) =>
    activation.activate({
      key: `create:${Math.random()}`,
      target: (handle: NotebookHandle) => ({ kind: 'notebook-id', notebookId: handle.notebookId }),
      origin: 'create',
      connect: () => daemon.createNotebook({ runtime: 'python', workingDir: '/w', ephemeral, peerLabel: 'x' }),
    });
  /** Lets the loop run until it is idle with time frozen (timers fire only through `clock`). */
  const settle = async () => {
    for (let i = 0; i < 5; i++) {
      await loop.idle();
      await new Promise((resolve) => setImmediate(resolve));
    }
  };
  return {
    container,
    daemon,
    files,
    logger,
    slot,
    loop,
    watch,
    exits,
    open,
    create,
    activation,
    recovery,
    clock,
    starter,
    subscribe,
    settle,
  };
}

const uuid = '0b9f2c44-5d1e-4a7b-9c3d-2e8f6a1b7c90';

/** A report without its daemon version (checked on its own), so the session part compares exactly. */
function sessionOf(report: SessionReport): Omit<SessionReport, 'daemonVersion'> {
  const { daemonVersion: _version, ...session } = report;
  return session;
}

describe(DaemonWatchLoop, () => {
  it('changes nothing on a same-incarnation heartbeat', async () => {
    const t = setup({ files: ['/n/a.ipynb'] });
    await t.loop.idle();
    const session = await t.open('/n/a.ipynb');
    const opened = t.daemon.handles.length;
    t.daemon.heartbeat();
    await t.loop.idle();
    expect(t.slot.active).toBe(session);
    expect(t.daemon.handles).toHaveLength(opened);
    expect(session.handle.isClosed).toBe(false);
  });

  it('rejoins a saved notebook by path after a same-version restart whose Disconnected event was lost', async () => {
    const t = setup({ files: ['/n/a.ipynb'] });
    await t.loop.idle();
    const before = await t.open('/n/a.ipynb');
    t.daemon.dropEvents(1);
    t.daemon.restart();
    await t.loop.idle();
    expect(before.handle.isClosed).toBe(true);
    expect(t.slot.active?.origin).toBe('rejoin');
    expect(t.slot.active?.handle.notebookPath).toBe('/n/a.ipynb');
    expect(t.slot.active?.handle.daemonIncarnation?.equals(t.daemon.incarnation)).toBe(true);
    expect(t.exits).toEqual([]);
  });

  it('treats lagged delivery as a reason to look again', async () => {
    const t = setup({ files: ['/n/a.ipynb'] });
    await t.loop.idle();
    await t.open('/n/a.ipynb');
    t.daemon.restart({ silent: true });
    expect(t.slot.active?.origin).toBe('connect');
    t.daemon.lag(4);
    await t.loop.idle();
    expect(t.slot.active?.origin).toBe('rejoin');
  });

  it('keeps sessions when the identity query fails without a Disconnected event', async () => {
    const t = setup({ files: ['/n/a.ipynb'] });
    await t.loop.idle();
    const session = await t.open('/n/a.ipynb');
    t.daemon.failIdentityQueries(1);
    t.daemon.heartbeat();
    await t.loop.idle();
    expect(t.slot.active).toBe(session);
    expect(t.logger.find('identity query failed')).toHaveLength(1);
  });

  it('removes sessions when the daemon is gone, and rejoins when it is back', async () => {
    const t = setup({ files: ['/n/a.ipynb'] });
    await t.loop.idle();
    await t.open('/n/a.ipynb');
    t.daemon.stop();
    await t.loop.idle();
    expect(t.slot.active).toBeUndefined();
    expect(t.slot.lastDrop?.reason).toBe('disconnected');
    expect(t.loop.pendingRecovery).toEqual({ kind: 'local-path', path: '/n/a.ipynb', existed: true });
    t.daemon.start();
    await t.loop.idle();
    expect(t.slot.active?.handle.notebookPath).toBe('/n/a.ipynb');
    expect(t.loop.pendingRecovery).toBeUndefined();
  });

  it('removes stale parked sessions and does not recover them', async () => {
    const t = setup({ files: ['/n/a.ipynb', '/n/b.ipynb', '/n/c.ipynb'] });
    await t.loop.idle();
    const a = await t.open('/n/a.ipynb');
    const b = await t.open('/n/b.ipynb');
    await t.open('/n/c.ipynb');
    t.daemon.restart();
    await t.loop.idle();
    expect(a.handle.isClosed && b.handle.isClosed).toBe(true);
    expect(t.slot.parked).toEqual([]);
    expect(t.slot.active?.handle.notebookPath).toBe('/n/c.ipynb');
    const reopened = t.daemon.calls.filter((call) => call.startsWith('openNotebook:'));
    expect(reopened).toEqual([
      'openNotebook:/n/a.ipynb',
      'openNotebook:/n/b.ipynb',
      'openNotebook:/n/c.ipynb',
      'openNotebook:/n/c.ipynb',
    ]);
  });

  it('asks for exit 75 when the version differs from the startup baseline', async () => {
    const t = setup({ daemon: new FakeDaemonPort({ version: '1.0.0' }) });
    await t.loop.idle();
    t.daemon.restart({ version: '1.1.0' });
    await t.loop.idle();
    expect(t.exits).toEqual([`${childExitCodes.upgradeHandoff}: daemon version changed from 1.0.0 to 1.1.0`]);
    expect(t.watch.baselineVersion).toBe('1.0.0');
  });

  it('takes the first live version as the baseline when no daemon ran at start', async () => {
    const t = setup({ daemon: new FakeDaemonPort({ stopped: true }) });
    await t.loop.idle();
    expect(t.watch.baselineVersion).toBeUndefined();
    t.daemon.start({ version: '2.0.0' });
    await t.loop.idle();
    expect(t.watch.baselineVersion).toBe('2.0.0');
    t.daemon.restart({ version: '2.0.0' });
    await t.loop.idle();
    expect(t.exits).toEqual([]);
  });

  it('leaves hosted sessions alone', async () => {
    const t = setup();
    await t.loop.idle();
    const hosted = new FakeNotebookHandle({ notebookId: 'hosted-1' });
    await t.activation.activate({
      key: 'hosted',
      target: {
        kind: 'hosted-url',
        url: 'http://h/lab/tree/a.ipynb',
        serverUrl: 'http://h/',
        notebookPath: 'a.ipynb',
        token: undefined,
      },
      origin: 'connect',
      connect: async () => hosted,
    });
    t.daemon.restart();
    await t.loop.idle();
    expect(t.slot.active?.handle).toBe(hosted);
    expect(hosted.isClosed).toBe(false);
  });

  it("leaves a third party's remote sessions alone through heartbeats, restarts and upgrades, whatever their kind", async () => {
    // A contributed kind whose notebooks live elsewhere: its handles are not bound to this daemon.
    const remote = new FakeNotebookBackend({
      id: 'acme.remote',
      kind: 'acme.remote',
      argument: 'url',
      identity: { describe: (target) => `remote:${(target as { name?: string }).name}` },
      recognizes: (raw) => raw.startsWith('remote:'),
      parse: (raw) => ({ kind: 'acme.remote', name: raw.slice('remote:'.length) }) as never,
      connect: async (target) => new FakeNotebookHandle({ notebookId: `remote-${(target as { name?: string }).name}` }),
    });
    const plugin = definePlugin({
      id: 'acme.remote',
      module: new ContainerModule(({ bind }) => {
        bind(NotebookBackend).toConstantValue(remote);
      }),
    });
    const t = setup({ files: ['/n/a.ipynb'], plugins: [plugin] });
    await t.loop.idle();
    const resolver = t.container.get(NotebookTargetResolver);
    const connectRemote = (name: string) => {
      const target = resolver.resolve(`remote:${name}`, { cwd: '/' });
      return t.activation.activate({
        key: name,
        target,
        origin: 'connect',
        connect: () => remote.connect(target, { peerLabel: 'x', signal: new AbortController().signal }),
      });
    };
    const parked = await connectRemote('p');
    await t.open('/n/a.ipynb');
    const active = await connectRemote('a');
    t.daemon.heartbeat();
    await t.settle();
    t.daemon.restart();
    await t.settle();
    t.daemon.stop();
    await t.settle();
    t.daemon.start();
    await t.settle();
    expect(t.slot.active?.handle).toBe(active.handle);
    expect(t.slot.parked.map((session) => session.handle)).toContain(parked.handle);
    expect(active.handle.isClosed || parked.handle.isClosed).toBe(false);
    // The local notebook parked beside them was bound to the lost daemon: it alone is gone.
    expect(t.slot.parked.map((session) => session.handle.notebookPath)).not.toContain('/n/a.ipynb');
    t.daemon.restart({ version: '9.9.9' });
    await t.settle();
    expect(t.exits).toEqual([`${childExitCodes.upgradeHandoff}: daemon version changed from 1.0.0 to 9.9.9`]);
    expect(t.slot.active?.handle).toBe(active.handle);
    expect(active.handle.isClosed).toBe(false);
  });

  it('evicts an ephemeral notebook after a restart instead of recreating it, and reports it', async () => {
    const t = setup();
    await t.loop.idle();
    const session = await t.create(true);
    t.daemon.restart();
    await t.loop.idle();
    expect(t.slot.active).toBeUndefined();
    expect(t.slot.lastDrop).toMatchObject({ reason: 'evicted', notebookId: session.handle.notebookId });
    expect(() => t.slot.access('document')).toThrow(/notebook was evicted/);
    expect(t.daemon.calls.filter((call) => call.startsWith('createNotebook'))).toHaveLength(1);
    t.daemon.heartbeat();
    await t.loop.idle();
    expect(t.daemon.calls.filter((call) => call.startsWith('attachNotebook'))).toHaveLength(1);
  });

  it('brings back a persisted untitled notebook by its id', async () => {
    const t = setup();
    await t.loop.idle();
    const session = await t.create(false);
    t.daemon.restart();
    await t.loop.idle();
    expect(t.slot.active?.handle.notebookId).toBe(session.handle.notebookId);
  });

  it('brings a notebook back by its id without waiting for the kernel of the fresh daemon', async () => {
    const t = setup();
    await t.loop.idle();
    const session = await t.create(false);
    t.daemon.setNextReadiness({ document: 'ready', runtime: 'pending' });
    t.daemon.restart();
    await t.loop.idle();
    expect(t.slot.active?.origin).toBe('rejoin');
    expect(t.slot.active?.handle.notebookId).toBe(session.handle.notebookId);
    expect(t.slot.active?.handle.readiness().runtime).toBe('pending');
    expect(t.recovery.isRecovering).toBe(false);
  });

  it('evicts a saved notebook whose file is gone', async () => {
    const t = setup({ files: ['/n/a.ipynb'] });
    await t.loop.idle();
    await t.open('/n/a.ipynb');
    t.files.removeFile('/n/a.ipynb');
    t.daemon.restart();
    await t.loop.idle();
    expect(t.slot.lastDrop).toMatchObject({ reason: 'evicted', notebookPath: '/n/a.ipynb' });
  });

  it('keeps the target after a transient failure and retries on the next event', async () => {
    const t = setup({ files: ['/n/a.ipynb'] });
    await t.loop.idle();
    await t.open('/n/a.ipynb');
    t.daemon.failConnects(1);
    t.daemon.restart();
    await t.loop.idle();
    expect(t.slot.active).toBeUndefined();
    expect(t.loop.pendingRecovery?.kind).toBe('local-path');
    t.daemon.heartbeat();
    await t.loop.idle();
    expect(t.slot.active?.handle.notebookPath).toBe('/n/a.ipynb');
  });

  it('tries the proxy handoff target first, and drops it once a tool installed a session', async () => {
    const daemon = new FakeDaemonPort();
    daemon.addPersistedNotebook('0b9f2c44-5d1e-4a7b-9c3d-2e8f6a1b7c90');
    const t = setup({
      daemon,
      handoff: { requested: uuid, target: { kind: 'notebook-id', notebookId: uuid } },
    });
    await t.loop.idle();
    expect(t.slot.active?.handle.notebookId).toBe('0b9f2c44-5d1e-4a7b-9c3d-2e8f6a1b7c90');
    const second = setup({
      files: ['/n/x.ipynb'],
      handoff: { requested: '/n/x.ipynb', target: { kind: 'local-path', path: '/n/x.ipynb', existed: true } },
    });
    await second.loop.idle();
    expect(second.slot.active?.handle.notebookPath).toBe('/n/x.ipynb');
  });

  it('does not publish a rejoin over a disconnect that happened meanwhile', async () => {
    const t = setup({ files: ['/n/a.ipynb'] });
    await t.loop.idle();
    await t.open('/n/a.ipynb');
    t.daemon.setNextReadiness({ document: 'pending', runtime: 'pending' });
    t.daemon.restart();
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setImmediate(resolve));
    t.slot.disconnect();
    const pending = t.daemon.handles.at(-1);
    pending?.setReadiness({ document: 'ready', runtime: 'ready' });
    await t.loop.idle();
    expect(t.slot.active).toBeUndefined();
    expect(pending?.isClosed).toBe(true);
  });

  it('does not publish a rejoin when the daemon restarted during it, and rejoins on the new daemon', async () => {
    const t = setup({ files: ['/n/a.ipynb'] });
    await t.loop.idle();
    const before = await t.open('/n/a.ipynb');
    const open = t.daemon.openNotebook.bind(t.daemon);
    const during: NotebookHandle[] = [];
    vi.spyOn(t.daemon, 'openNotebook').mockImplementationOnce(async (path, peer) => {
      // The daemon restarts between the round's identity query and the connect: the handle is
      // open and ready, but bound to a daemon life the attempt did not start against.
      t.daemon.restart();
      const handle = await open(path, peer);
      during.push(handle);
      return handle;
    });
    t.daemon.restart();
    await t.loop.idle();
    await t.loop.idle();
    const [raced] = during;
    expect(before.handle.isClosed).toBe(true);
    expect(raced?.isClosed).toBe(true);
    expect(t.slot.active?.handle).not.toBe(raced);
    expect(t.slot.active?.origin).toBe('rejoin');
    expect(t.slot.active?.handle.notebookPath).toBe('/n/a.ipynb');
    expect(t.slot.active?.handle.daemonIncarnation?.equals(t.daemon.incarnation)).toBe(true);
  });

  describe('when the daemon is lost', () => {
    it('starts it again at once and rejoins the saved notebook without a tool call', async () => {
      const t = setup({ files: ['/n/a.ipynb'], autoStart: true });
      await t.settle();
      const before = await t.open('/n/a.ipynb');
      t.daemon.stop();
      await t.settle();
      expect(t.starter.attempts).toHaveLength(1);
      expect(before.handle.isClosed).toBe(true);
      expect(t.slot.active?.origin).toBe('rejoin');
      expect(t.slot.active?.handle.notebookPath).toBe('/n/a.ipynb');
      expect(t.slot.active?.handle.daemonIncarnation?.equals(t.daemon.incarnation)).toBe(true);
      expect(sessionOf(t.recovery.report())).toEqual({
        target: '/n/a.ipynb',
        notebookId: t.slot.active?.handle.notebookId,
      });
      // The daemon version the child works with (its baseline), for the proxy's upgrade banner.
      expect(t.recovery.report().daemonVersion).toBe(t.watch.baselineVersion);
      expect(t.recovery.report().daemonVersion).toEqual(expect.any(String));
      expect(t.exits).toEqual([]);
    });

    it('notices the loss from the active connection when no daemon event arrives', async () => {
      const t = setup({ files: ['/n/a.ipynb'], autoStart: true });
      await t.settle();
      await t.open('/n/a.ipynb');
      t.daemon.stop({ silent: true });
      await t.settle();
      // A short grace first, for the daemon's own word (a shutdown notice) to arrive.
      expect(t.starter.attempts).toEqual([]);
      expect(sessionOf(t.recovery.report())).toEqual({ target: '/n/a.ipynb' });
      await t.clock.advanceAndSettle(100);
      await t.settle();
      expect(t.starter.attempts).toHaveLength(1);
      expect(t.slot.active?.origin).toBe('rejoin');
      expect(t.slot.active?.handle.isClosed).toBe(false);
    });

    it('keeps trying while the start fails, reporting the target it recovers meanwhile, then rejoins', async () => {
      const t = setup({ files: ['/n/a.ipynb'], autoStart: true });
      await t.settle();
      await t.open('/n/a.ipynb');
      t.starter.failures = 8;
      t.daemon.stop();
      await t.settle();
      expect(t.slot.active).toBeUndefined();
      expect(sessionOf(t.recovery.report())).toEqual({ target: '/n/a.ipynb' });
      for (let i = 0; i < 8; i++) {
        await t.clock.advanceAndSettle(restartBackoffMaxMs);
        await t.settle();
      }
      expect(t.starter.attempts).toHaveLength(9);
      expect(t.slot.active?.handle.notebookPath).toBe('/n/a.ipynb');
      expect(t.clock.pendingTimerCount).toBe(0);
    });

    it('spaces failed starts by the doubling back-off when time moves in small steps', async () => {
      const t = setup({ files: ['/n/a.ipynb'], autoStart: true });
      await t.settle();
      await t.open('/n/a.ipynb');
      t.starter.failures = 20;
      const lostAt = t.clock.now();
      t.daemon.stop();
      await t.settle();
      while (t.clock.now() - lostAt < 40_000) {
        await t.clock.advanceAndSettle(50);
        await t.settle();
      }
      const gaps = t.starter.attempts.slice(1).map((at, i) => at - (t.starter.attempts[i] as number));
      expect(gaps.slice(0, 8)).toEqual([100, 200, 400, 800, 1_600, 3_200, 5_000, 5_000]);
    });

    it('does not start a daemon when auto-start is off, and rejoins once one is back', async () => {
      const t = setup({ files: ['/n/a.ipynb'], autoStart: false });
      await t.settle();
      await t.open('/n/a.ipynb');
      t.daemon.stop();
      await t.settle();
      await t.clock.advanceAndSettle(60_000);
      expect(t.starter.attempts).toEqual([]);
      expect(sessionOf(t.recovery.report())).toEqual({ target: '/n/a.ipynb' });
      t.daemon.start();
      await t.settle();
      expect(t.slot.active?.handle.notebookPath).toBe('/n/a.ipynb');
    });

    it('after an announced shutdown, waits for another daemon, then starts one; starts none nobody needs', async () => {
      const announced = setup({ files: ['/n/a.ipynb'], autoStart: true });
      await announced.settle();
      await announced.open('/n/a.ipynb');
      announced.daemon.stop({ silent: true });
      // As the event pump reports `daemon_shutting_down`.
      const listener = announced.subscribe.mock.calls[0]?.[0];
      listener?.({ kind: 'disconnected', reason: 'the daemon is shutting down', announced: true });
      await announced.settle();
      expect(announced.starter.attempts).toEqual([]);
      expect(announced.loop.pendingRecovery).toEqual({ kind: 'local-path', path: '/n/a.ipynb', existed: true });
      // A tool call made meanwhile waits for the recovery instead of failing at once.
      expect(announced.recovery.isRecovering).toBe(true);
      await announced.clock.advanceAndSettle(announcedShutdownGraceMs - 1);
      await announced.settle();
      expect(announced.starter.attempts).toEqual([]);
      await announced.clock.advanceAndSettle(1);
      await announced.settle();
      expect(announced.starter.attempts).toHaveLength(1);
      expect(announced.slot.active?.handle.notebookPath).toBe('/n/a.ipynb');
      expect(announced.recovery.isRecovering).toBe(false);

      const idle = setup({ autoStart: true });
      await idle.settle();
      idle.daemon.stop();
      await idle.settle();
      expect(idle.starter.attempts).toEqual([]);
    });

    it('subscribes to the daemon events again once a daemon is back, whoever started it', async () => {
      const t = setup({ files: ['/n/a.ipynb'], autoStart: true });
      await t.settle();
      await t.open('/n/a.ipynb');
      expect(t.subscribe).toHaveBeenCalledTimes(1);
      t.daemon.stop();
      await t.settle();
      expect(t.subscribe).toHaveBeenCalledTimes(2);
      // Another child won the race: the daemon is back, and our stream did not see it.
      const other = setup({ files: ['/n/a.ipynb'], autoStart: true });
      await other.settle();
      await other.open('/n/a.ipynb');
      other.starter.hold();
      other.daemon.stop();
      await new Promise((resolve) => setImmediate(resolve));
      other.daemon.start({ silent: true });
      other.starter.release();
      await other.settle();
      expect(other.subscribe).toHaveBeenCalledTimes(2);
      expect(other.slot.active?.origin).toBe('rejoin');
    });

    it('lets an explicit connect made during the background restart win', async () => {
      const t = setup({ files: ['/n/a.ipynb', '/n/b.ipynb'], autoStart: true });
      await t.settle();
      await t.open('/n/a.ipynb');
      t.starter.hold();
      t.daemon.stop();
      await new Promise((resolve) => setImmediate(resolve));
      expect(t.starter.attempts).toHaveLength(1);
      // The tool's own auto-start brought the daemon up (the real port shares one start).
      t.daemon.start();
      const explicit = await t.open('/n/b.ipynb');
      expect(sessionOf(t.recovery.report())).toEqual({ target: '/n/b.ipynb', notebookId: explicit.handle.notebookId });
      t.starter.release();
      await t.settle();
      expect(t.slot.active).toBe(explicit);
      expect(t.daemon.calls.filter((call) => call === 'openNotebook:/n/a.ipynb')).toHaveLength(1);
      expect(t.loop.pendingRecovery).toBeUndefined();
    });

    it('keeps the last explicit connect of A→B→A during the restart, not the background rejoin of A', async () => {
      const t = setup({ files: ['/n/a.ipynb', '/n/b.ipynb'], autoStart: true });
      await t.settle();
      await t.open('/n/a.ipynb');
      t.starter.hold();
      t.daemon.stop();
      await new Promise((resolve) => setImmediate(resolve));
      t.daemon.start();
      const toB = t.open('/n/b.ipynb');
      const toA = t.open('/n/a.ipynb');
      await expect(toB).rejects.toThrow(/superseded/);
      const last = await toA;
      t.starter.release();
      await t.settle();
      expect(t.slot.active).toBe(last);
      expect(t.slot.active?.origin).toBe('connect');
      expect(t.slot.parked).toEqual([]);
    });

    it('asks again after the back-off when the daemon does not answer clearly while a session waits', async () => {
      const t = setup({ files: ['/n/a.ipynb'], autoStart: false });
      await t.settle();
      await t.open('/n/a.ipynb');
      t.daemon.stop();
      await t.settle();
      t.daemon.start({ silent: true });
      t.daemon.failIdentityQueries(1);
      t.daemon.heartbeat();
      await t.settle();
      expect(t.slot.active).toBeUndefined();
      await t.clock.advanceAndSettle(100);
      await t.settle();
      expect(t.slot.active?.handle.notebookPath).toBe('/n/a.ipynb');
    });

    it('cancels the recovery on an explicit disconnect: the report says null at once and nothing is rejoined', async () => {
      const t = setup({ files: ['/n/a.ipynb'], autoStart: true });
      await t.settle();
      await t.open('/n/a.ipynb');
      t.starter.failures = 1;
      t.daemon.stop();
      await t.settle();
      expect(t.recovery.report().target).toBe('/n/a.ipynb');
      t.slot.disconnect();
      expect(sessionOf(t.recovery.report())).toEqual({ target: null });
      await t.clock.advanceAndSettle(1_000);
      await t.settle();
      expect(t.starter.attempts).toHaveLength(1);
      t.daemon.start();
      await t.settle();
      expect(t.slot.active).toBeUndefined();
    });
  });

  describe('the handoff rejoin report', () => {
    it('is pending while the daemon is away, then rejoined once the handed notebook is installed', async () => {
      const t = setup({
        daemon: new FakeDaemonPort({ stopped: true }),
        files: ['/n/a.ipynb'],
        handoff: { requested: '/n/a.ipynb', target: { kind: 'local-path', path: '/n/a.ipynb', existed: true } },
      });
      await t.settle();
      expect(sessionOf(t.recovery.report())).toEqual({
        target: '/n/a.ipynb',
        rejoin: { requested: '/n/a.ipynb', outcome: 'pending' },
      });
      t.daemon.start();
      await t.settle();
      expect(sessionOf(t.recovery.report())).toEqual({
        target: '/n/a.ipynb',
        notebookId: t.slot.active?.handle.notebookId,
        rejoin: { requested: '/n/a.ipynb', outcome: 'rejoined' },
      });
    });

    it('is rejoined when the agent itself connected the handed notebook first', async () => {
      const t = setup({
        daemon: new FakeDaemonPort({ stopped: true }),
        files: ['/n/a.ipynb'],
        handoff: { requested: '/n/a.ipynb', target: { kind: 'local-path', path: '/n/a.ipynb', existed: true } },
      });
      await t.settle();
      t.daemon.start({ silent: true });
      await t.open('/n/a.ipynb');
      expect(t.recovery.rejoin).toEqual({ requested: '/n/a.ipynb', outcome: 'rejoined' });
    });

    it('fails with the text the agent would get when the handed notebook is evicted', async () => {
      const t = setup({ handoff: { requested: uuid, target: { kind: 'notebook-id', notebookId: uuid } } });
      await t.settle();
      const report = t.recovery.report();
      expect(report.target).toBeNull();
      expect(report.rejoin).toEqual({
        requested: uuid,
        outcome: 'failed',
        reason: `No active notebook session (notebook was evicted: Notebook ${uuid} is not available in the daemon). Start again with create_notebook, or connect_notebook to a saved file.`,
      });
      expect(() => t.slot.access('document')).toThrow(report.rejoin?.reason);
    });

    it('fails when the agent made another notebook active before the rejoin', async () => {
      const t = setup({
        daemon: new FakeDaemonPort({ stopped: true }),
        files: ['/n/a.ipynb', '/n/b.ipynb'],
        handoff: { requested: '/n/a.ipynb', target: { kind: 'local-path', path: '/n/a.ipynb', existed: true } },
      });
      await t.settle();
      t.daemon.start({ silent: true });
      const b = await t.open('/n/b.ipynb');
      await t.settle();
      expect(sessionOf(t.recovery.report())).toEqual({
        target: '/n/b.ipynb',
        notebookId: b.handle.notebookId,
        rejoin: {
          requested: '/n/a.ipynb',
          outcome: 'failed',
          reason: `Not rejoined (switched to a different notebook: ${b.handle.notebookId} is active). Reconnect with: connect_notebook(path="/n/a.ipynb")`,
        },
      });
      expect(t.daemon.calls.filter((call) => call === 'openNotebook:/n/a.ipynb')).toEqual([]);
    });

    it('fails when the agent disconnects while it is pending', async () => {
      const t = setup({
        daemon: new FakeDaemonPort({ stopped: true }),
        files: ['/n/a.ipynb'],
        handoff: { requested: '/n/a.ipynb', target: { kind: 'local-path', path: '/n/a.ipynb', existed: true } },
      });
      await t.settle();
      t.slot.disconnect();
      expect(sessionOf(t.recovery.report())).toEqual({
        target: null,
        rejoin: {
          requested: '/n/a.ipynb',
          outcome: 'failed',
          reason: 'No active notebook session. Call connect_notebook or create_notebook first.',
        },
      });
      t.daemon.start();
      await t.settle();
      expect(t.slot.active).toBeUndefined();
    });

    it('fails at once for a value that is not a target, and hides credentials of a URL', async () => {
      const t = setup({ handoff: { requested: 'http://u:p@h/lab/tree/a.ipynb?token=s3cret', problem: 'unsupported' } });
      await t.settle();
      expect(t.recovery.rejoin).toEqual({
        requested: 'http://h/lab/tree/a.ipynb',
        outcome: 'failed',
        reason:
          'The notebook to rejoin is not a usable target (unsupported). Call connect_notebook or create_notebook.',
      });
    });

    it('is absent when nothing was handed off', async () => {
      const t = setup();
      await t.settle();
      expect(sessionOf(t.recovery.report())).toEqual({ target: null });
    });
  });
});
