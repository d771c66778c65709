import { ManualClock, RecordingLogger } from '@nteract-mcp/foundation/testing';
import { inject, injectable } from 'inversify';
import { describe, expect, it } from 'vitest';
import { CoreError } from '../errors/core-error.js';
import { SecretToken } from '../notebook-target/secret-token.js';
import { ChildProcessPort } from '../ports/child-process-port.js';
import { Clock } from '../ports/clock.js';
import { DaemonPort } from '../ports/daemon-port.js';
import { Logger } from '../ports/logger.js';
import { SourceFileProbe } from '../ports/source-file-probe.js';
import { createTestContainer } from './create-test-container.js';
import { FakeChildProcess, FakeChildProcessPort } from './fake-child-process.js';
import { FakeDaemonPort } from './fake-daemon-port.js';
import { FakeNotebookHandle } from './fake-notebook-handle.js';
import { FakeSourceFileProbe } from './fake-source-file-probe.js';
import { NotModelledError } from './not-modelled-error.js';

/** A consumer of every port, resolved from a real container, so overrides are seen as production code sees them. */
@injectable()
class PortUser {
  public constructor(
    @inject(DaemonPort) public readonly daemon: DaemonPort,
    @inject(Clock) public readonly clock: Clock,
    @inject(Logger) public readonly logger: Logger,
    @inject(ChildProcessPort) public readonly processes: ChildProcessPort,
    @inject(SourceFileProbe) public readonly files: SourceFileProbe,
  ) {}
}

function build(overrides: {
  daemon?: FakeDaemonPort;
  clock?: ManualClock;
  logger?: RecordingLogger;
  processes?: FakeChildProcessPort;
  files?: FakeSourceFileProbe;
}): PortUser {
  const container = createTestContainer()
    .override(DaemonPort, overrides.daemon ?? new FakeDaemonPort())
    .override(Clock, overrides.clock ?? new ManualClock())
    .override(Logger, overrides.logger ?? new RecordingLogger())
    .override(ChildProcessPort, overrides.processes ?? new FakeChildProcessPort())
    .override(SourceFileProbe, overrides.files ?? new FakeSourceFileProbe())
    .build();
  container.bind(PortUser).toSelf();
  return container.get(PortUser);
}

describe('createTestContainer', () => {
  it('replaces a bound port, and the last override of a token wins', () => {
    const first = new ManualClock(1);
    const second = new ManualClock(2);
    const container = createTestContainer().override(Clock, first).override(Clock, second).build();
    expect(container.get(Clock)).toBe(second);
  });

  it('leaves DaemonPort unbound unless a plugin or an override provides it', () => {
    expect(() => createTestContainer().build().get(DaemonPort)).toThrow();
  });
});

describe(ManualClock, () => {
  it('fires timers in due order, including ones scheduled while advancing', () => {
    const clock = new ManualClock(0);
    expect(build({ clock }).clock).toBe(clock);
    const fired: string[] = [];
    clock.setTimer(20, () => fired.push('b@20'));
    clock.setTimer(10, () => {
      fired.push(`a@${clock.now()}`);
      clock.setTimer(5, () => fired.push(`c@${clock.now()}`));
    });
    const cancelled = clock.setTimer(12, () => fired.push('never'));
    cancelled.cancel();
    clock.advance(9);
    expect(fired).toEqual([]);
    clock.advance(11);
    expect(fired).toEqual(['a@10', 'c@15', 'b@20']);
    expect(clock.now()).toBe(20);
    expect(clock.pendingTimerCount).toBe(0);
  });

  it('resolves sleeps on advance and rejects them on abort', async () => {
    const clock = new ManualClock(0);
    expect(build({ clock }).clock).toBe(clock);
    let woke = false;
    const sleeping = clock.sleep(100).then(() => {
      woke = true;
    });
    await clock.advanceAndSettle(99);
    expect(woke).toBe(false);
    await clock.advanceAndSettle(1);
    await sleeping;
    expect(woke).toBe(true);
    const controller = new AbortController();
    const aborted = clock.sleep(50, controller.signal);
    controller.abort(new Error('stop'));
    await expect(aborted).rejects.toThrow('stop');
    expect(() => clock.advance(-1)).toThrow(RangeError);
  });
});

describe(RecordingLogger, () => {
  it('records scoped lines and redacts secrets before storing them', () => {
    const logger = new RecordingLogger();
    expect(build({ logger }).logger).toBe(logger);
    logger
      .child('plugin-hosted:HostedRejoin')
      .warn('retrying', { url: 'http://h/lab/tree/a.ipynb', token: 'abc123', nested: { password: 'pw' } });
    logger.info('with secret object', { value: new SecretToken('xyz789') });
    expect(logger.find('retrying', 'warn')).toHaveLength(1);
    expect(logger.records[0]?.scope).toBe('plugin-hosted:HostedRejoin');
    expect(logger.dump()).not.toMatch(/abc123|xyz789|"pw"/);
    expect(logger.dump()).toContain('http://h/lab/tree/a.ipynb');
  });
});

describe(FakeSourceFileProbe, () => {
  it('knows only the files it was given, follows aliases, and reports failures as unknown', async () => {
    const files = new FakeSourceFileProbe(['/n/a.ipynb'])
      .addFile('/link/b.ipynb', '/real/b.ipynb')
      .failWith('/locked.ipynb', 'EACCES');
    const user = build({ files });
    expect(await user.files.probe('/n/a.ipynb')).toEqual({ kind: 'present', canonicalPath: '/n/a.ipynb' });
    expect(await user.files.probe('/link/b.ipynb')).toEqual({ kind: 'present', canonicalPath: '/real/b.ipynb' });
    expect(await user.files.probe('/gone.ipynb')).toEqual({ kind: 'missing' });
    expect(await user.files.probe('/locked.ipynb')).toEqual({ kind: 'unknown', reason: 'EACCES' });
    files.removeFile('/n/a.ipynb');
    expect((await user.files.probe('/n/a.ipynb')).kind).toBe('missing');
  });
});

describe(FakeDaemonPort, () => {
  it('answers identity queries, and a restart is a new incarnation that closes handles', async () => {
    const daemon = new FakeDaemonPort({ version: '1.2.0' });
    const user = build({ daemon });
    const first = await user.daemon.queryInfo();
    expect(first.kind).toBe('live');
    const handle = await user.daemon.openNotebook('/n/a.ipynb', { peerLabel: 'Claude' });
    expect(handle.daemonIncarnation?.equals(daemon.incarnation)).toBe(true);

    const events: string[] = [];
    user.daemon.subscribe((event) => events.push(event.kind));
    daemon.restart({ version: '1.3.0' });
    const second = await user.daemon.queryInfo();
    expect(
      second.kind === 'live' && first.kind === 'live' && second.info.incarnation.equals(first.info.incarnation),
    ).toBe(false);
    expect(second.kind === 'live' && second.info.version).toBe('1.3.0');
    expect(handle.isClosed).toBe(true);
    await expect(handle.listCells()).rejects.toSatisfy((error: unknown) => CoreError.is(error, 'handleClosed'));
    expect(events).toEqual(['disconnected', 'connected']);
  });

  it('opens one room per path and refuses unknown or unavailable ids without creating a room', async () => {
    const daemon = new FakeDaemonPort();
    const user = build({ daemon });
    const a = await user.daemon.openNotebook('/n/a.ipynb', { peerLabel: 'x' });
    const b = await user.daemon.openNotebook('/n/a.ipynb', { peerLabel: 'y' });
    expect(b.notebookId).toBe(a.notebookId);
    expect(await user.daemon.listRooms()).toHaveLength(1);
    expect((await user.daemon.listRooms())[0]?.activePeers).toBe(2);

    const unknown = '11111111-2222-4333-8444-555555555555';
    await expect(user.daemon.attachNotebook(unknown, { peerLabel: 'x' })).rejects.toSatisfy((e: unknown) =>
      CoreError.is(e, 'notebookUnavailable'),
    );
    expect(await user.daemon.listRooms()).toHaveLength(1);
    daemon.markUnavailable(a.notebookId);
    await expect(user.daemon.attachNotebook(a.notebookId, { peerLabel: 'x' })).rejects.toSatisfy((e: unknown) =>
      CoreError.is(e, 'notebookUnavailable'),
    );
    daemon.addPersistedNotebook(unknown);
    expect((await user.daemon.attachNotebook(unknown, { peerLabel: 'x' })).notebookId).toBe(unknown);
  });

  it('records peer labels, binds saved paths to rooms and refuses a path another room owns', async () => {
    const daemon = new FakeDaemonPort();
    const user = build({ daemon });
    const a = await user.daemon.openNotebook('/n/a.ipynb', { peerLabel: 'Claude agent:claude:1' });
    const untitled = await user.daemon.createNotebook({
      runtime: 'python',
      workingDir: '/w',
      ephemeral: false,
      peerLabel: 'other',
    });
    expect(daemon.peerLabels).toEqual(['Claude agent:claude:1', 'other']);
    expect(daemon.handles[0]?.peerLabel).toBe('Claude agent:claude:1');

    const refusal = await untitled.save('/n/a.ipynb').catch((error: unknown) => error);
    expect(CoreError.is(refusal, 'invalidRequest') && refusal.code).toBe('path_already_open');
    expect((refusal as Error).message).toBe(
      `Cannot save: /n/a.ipynb is already open in session ${a.notebookId}. Close that session first, then retry.`,
    );
    expect(untitled.notebookPath).toBeUndefined();
    const noPath = await untitled.save().catch((error: unknown) => error);
    expect(CoreError.is(noPath, 'invalidRequest') && noPath.code).toBe('no_path');

    await untitled.save('/n/b.ipynb');
    const rooms = await user.daemon.listRooms();
    expect(rooms.find((room) => room.notebookId === untitled.notebookId)?.notebookPath).toBe('/n/b.ipynb');
    expect((await user.daemon.openNotebook('/n/b.ipynb', { peerLabel: 'x' })).notebookId).toBe(untitled.notebookId);
  });

  it('forgets ephemeral notebooks on restart and keeps persisted ones attachable', async () => {
    const daemon = new FakeDaemonPort();
    const user = build({ daemon });
    const ephemeral = await user.daemon.createNotebook({
      runtime: 'python',
      workingDir: '/w',
      ephemeral: true,
      peerLabel: 'x',
    });
    const kept = await user.daemon.createNotebook({
      runtime: 'python',
      workingDir: '/w',
      ephemeral: false,
      peerLabel: 'x',
    });
    daemon.restart();
    await expect(user.daemon.attachNotebook(ephemeral.notebookId, { peerLabel: 'x' })).rejects.toSatisfy((e: unknown) =>
      CoreError.is(e, 'notebookUnavailable'),
    );
    expect((await user.daemon.attachNotebook(kept.notebookId, { peerLabel: 'x' })).notebookId).toBe(kept.notebookId);
  });

  it('fails identity queries, drops and lags events, and fails connects when told', async () => {
    const daemon = new FakeDaemonPort();
    const user = build({ daemon });
    const events: string[] = [];
    user.daemon.subscribe((event) => events.push(event.kind));
    daemon.failIdentityQueries(1);
    await expect(user.daemon.queryInfo()).rejects.toSatisfy((e: unknown) => CoreError.is(e, 'daemonQueryFailed'));
    expect((await user.daemon.queryInfo()).kind).toBe('live');
    daemon.dropEvents(1);
    daemon.restart();
    daemon.lag(3);
    daemon.heartbeat();
    expect(events).toEqual(['connected', 'lagged', 'heartbeat']);
    daemon.stop();
    expect(await user.daemon.queryInfo()).toEqual({ kind: 'absent', reason: 'daemon is not running' });
    await expect(user.daemon.openNotebook('/a.ipynb', { peerLabel: 'x' })).rejects.toSatisfy((e: unknown) =>
      CoreError.is(e, 'daemonUnavailable'),
    );
    daemon.start();
    daemon.failConnects(1);
    await expect(user.daemon.openNotebook('/a.ipynb', { peerLabel: 'x' })).rejects.toSatisfy((e: unknown) =>
      CoreError.is(e, 'daemonUnavailable'),
    );
    expect((await user.daemon.openNotebook('/a.ipynb', { peerLabel: 'x' })).notebookPath).toBe('/a.ipynb');
  });

  it('throws on what it does not model (a connection without a peer label)', async () => {
    const user = build({ daemon: new FakeDaemonPort() });
    await expect(user.daemon.openNotebook('/a.ipynb', {} as never)).rejects.toSatisfy(
      (e: unknown) => e instanceof NotModelledError,
    );
  });
});

describe(FakeNotebookHandle, () => {
  it('edits cells and applies a repeated idempotency key once', async () => {
    const daemon = new FakeDaemonPort({
      executor: (cell) => ({
        status: 'ok',
        outputs: [{ output_type: 'stream', name: 'stdout', text: `ran ${cell.source}` }],
      }),
    });
    const user = build({ daemon });
    const handle = await user.daemon.openNotebook('/a.ipynb', { peerLabel: 'x' });
    const first = await handle.insertCell({ source: 'x = 1', cellType: 'code' }, { idempotencyKey: 'k1' });
    const replay = await handle.insertCell({ source: 'x = 1', cellType: 'code' }, { idempotencyKey: 'k1' });
    expect(replay).toEqual(first);
    expect(await handle.listCells()).toHaveLength(1);
    const run = await handle.executeCell(first.id, { idempotencyKey: 'run-1' });
    const rerun = await handle.executeCell(first.id, { idempotencyKey: 'run-1' });
    expect(rerun.executionId).toBe(run.executionId);
    expect((await handle.getCell(first.id)).executionCount).toBe(1);
    await expect(handle.getCell('nope')).rejects.toThrow('Cell not found: nope');
    expect(await handle.save()).toEqual({ notebookId: handle.notebookId, path: '/a.ipynb' });
    const untitled = await user.daemon.createNotebook({
      runtime: 'python',
      workingDir: '/w',
      ephemeral: true,
      peerLabel: 'x',
    });
    await expect(untitled.save()).rejects.toSatisfy((e: unknown) => CoreError.is(e, 'invalidRequest'));
    expect(await untitled.save('/b.ipynb')).toEqual({ notebookId: untitled.notebookId, path: '/b.ipynb' });
    expect(untitled.notebookPath).toBe('/b.ipynb');
  });

  it('leaves an execution running when the executor says so, until it is completed', async () => {
    const handle = new FakeNotebookHandle({
      cells: [{ source: 'sleep', cellType: 'code' }],
      executor: () => ({ status: 'running', outputs: [{ output_type: 'stream', name: 'stdout', text: 'a' }] }),
    });
    const [cell] = await handle.listCells();
    const result = await handle.executeCell(cell?.id ?? '');
    expect(result.status).toBe('timeout');
    expect((await handle.getExecution(result.executionId)).status).toBe('running');
    handle.completeExecution(result.executionId, {
      status: 'ok',
      outputs: [{ output_type: 'stream', name: 'stdout', text: 'b' }],
    });
    const done = await handle.getExecution(result.executionId);
    expect(done.status).toBe('ok');
    expect(done.outputs.map((output) => output.text)).toEqual(['a', 'b']);
    expect((await handle.getCell(cell?.id ?? '')).outputs).toHaveLength(2);
  });

  it('throws NotModelledError when asked to execute without an executor, and waits for readiness', async () => {
    const handle = new FakeNotebookHandle({
      readiness: { document: 'pending', runtime: 'pending' },
      cells: [{ source: '1', cellType: 'code' }],
    });
    const [cell] = await handle.listCells();
    await expect(handle.executeCell(cell?.id ?? '')).rejects.toSatisfy((e: unknown) => e instanceof NotModelledError);
    let ready = false;
    const waiting = handle.waitUntilReady().then(() => {
      ready = true;
    });
    await Promise.resolve();
    expect(ready).toBe(false);
    handle.setReadiness({ document: 'ready', runtime: 'unavailable', reason: 'no kernelspec' });
    await waiting;
    expect(ready).toBe(true);
    const closedReasons: string[] = [];
    handle.onDidClose((reason) => closedReasons.push(reason));
    handle.simulateClose('room-removed');
    handle.simulateClose('closed');
    expect(closedReasons).toEqual(['room-removed']);
  });
});

describe(FakeChildProcess, () => {
  it('pipes lines both ways, ends stdout before exited resolves, and records kills', async () => {
    const processes = new FakeChildProcessPort();
    const user = build({ processes });
    const child = user.processes.spawn({ command: 'runt-mcp', args: [], env: { A: '1' } });
    child.stdin.write('{"jsonrpc":"2.0","id":1,"method":"ping"}\n');
    await new Promise((resolve) => setImmediate(resolve));
    expect(processes.latest.receivedMessages()).toEqual([{ jsonrpc: '2.0', id: 1, method: 'ping' }]);

    const lines: string[] = [];
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => lines.push(chunk));
    let stdoutEnded = false;
    child.stdout.on('end', () => {
      stdoutEnded = true;
    });
    processes.latest.send({ jsonrpc: '2.0', id: 1, result: {} });
    child.kill('SIGKILL');
    const exit = await child.exited;
    expect(stdoutEnded).toBe(true);
    expect(exit).toEqual({ code: null, signal: 'SIGKILL' });
    expect(lines.join('')).toBe('{"jsonrpc":"2.0","id":1,"result":{}}\n');
    expect(processes.latest.signals).toEqual(['SIGKILL']);
  });

  it('reports a failed spawn through exited, like a missing binary', async () => {
    const processes = new FakeChildProcessPort().failNextSpawn('spawn runt-mcp ENOENT');
    const user = build({ processes });
    const child = user.processes.spawn({ command: 'runt-mcp', args: [], env: {} });
    expect(await child.exited).toEqual({ code: null, signal: null, spawnError: 'spawn runt-mcp ENOENT' });
    expect(processes.failedSpawns).toHaveLength(1);
    expect(processes.spawned).toHaveLength(0);
    const second = user.processes.spawn({ command: 'runt-mcp', args: [], env: {} });
    processes.latest.exit(75);
    expect(await second.exited).toEqual({ code: 75, signal: null });
  });
});
