import {
  DaemonPort,
  definePlugin,
  Logger,
  type NotebookHandle,
  type NotebookTarget,
  RejoinStrategy,
  SessionActivation,
  SessionSlot,
  SourceFileProbe,
} from '@nteract-mcp/core';
import {
  createTestContainer,
  FakeDaemonPort,
  FakeNotebookHandle,
  FakeSourceFileProbe,
  RecordingLogger,
} from '@nteract-mcp/core/testing';
import { ContainerModule } from 'inversify';
import { describe, expect, it } from 'vitest';
import { DaemonWatchLoop } from './daemon-watch-loop.js';
import { NotebookIdRejoinStrategy } from './notebook-id-rejoin-strategy.js';
import { SavedPathRejoinStrategy } from './saved-path-rejoin-strategy.js';

const watchPlugin = definePlugin({
  id: 'test.watch',
  module: new ContainerModule(({ bind }) => {
    bind(RejoinStrategy).to(SavedPathRejoinStrategy).inSingletonScope();
    bind(RejoinStrategy).to(NotebookIdRejoinStrategy).inSingletonScope();
    bind(DaemonWatchLoop).toSelf().inSingletonScope();
  }),
});

function setup(options: { daemon?: FakeDaemonPort; files?: string[]; handoff?: NotebookTarget } = {}) {
  const daemon = options.daemon ?? new FakeDaemonPort({ version: '1.0.0' });
  const files = new FakeSourceFileProbe(options.files ?? []);
  const logger = new RecordingLogger();
  const container = createTestContainer({ plugins: [watchPlugin] })
    .override(DaemonPort, daemon)
    .override(SourceFileProbe, files)
    .override(Logger, logger)
    .build();
  const slot = container.get(SessionSlot);
  const activation = container.get(SessionActivation);
  const loop = container.get(DaemonWatchLoop);
  const exits: string[] = [];
  loop.start({
    peerLabel: () => 'Claude Code agent:claude-code:s1',
    handoffTarget: options.handoff,
    onVersionChange: (a, b) => exits.push(`${a}->${b}`),
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
  return { daemon, files, logger, slot, loop, exits, open, create, activation };
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
    expect(t.exits).toEqual(['1.0.0->1.1.0']);
    expect(t.loop.baselineVersion).toBe('1.0.0');
  });

  it('takes the first live version as the baseline when no daemon ran at start', async () => {
    const t = setup({ daemon: new FakeDaemonPort({ stopped: true }) });
    await t.loop.idle();
    expect(t.loop.baselineVersion).toBeUndefined();
    t.daemon.start({ version: '2.0.0' });
    await t.loop.idle();
    expect(t.loop.baselineVersion).toBe('2.0.0');
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
    const t = setup({ daemon, handoff: { kind: 'notebook-id', notebookId: '0b9f2c44-5d1e-4a7b-9c3d-2e8f6a1b7c90' } });
    await t.loop.idle();
    expect(t.slot.active?.handle.notebookId).toBe('0b9f2c44-5d1e-4a7b-9c3d-2e8f6a1b7c90');
    const second = setup({ files: ['/n/x.ipynb'], handoff: { kind: 'local-path', path: '/n/x.ipynb', existed: true } });
    await second.loop.idle();
    expect(second.slot.active?.handle.notebookPath).toBe('/n/x.ipynb');
  });

  it('does not publish a rejoin over a disconnect that happened meanwhile', async () => {
    const t = setup({ files: ['/n/a.ipynb'] });
    await t.loop.idle();
    await t.open('/n/a.ipynb');
    t.daemon.setNextReadiness({ document: 'ready', runtime: 'pending' });
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
});
