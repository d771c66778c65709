import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import {
  type CellOutput,
  Clock,
  CoreError,
  type DaemonEvent,
  DaemonPort,
  Logger,
  type NotebookHandle,
  type NotebookHandleCloseReason,
} from '@nteract-mcp/core';
import { createTestContainer, ManualClock, RecordingLogger } from '@nteract-mcp/core/testing';
import { startTestDaemon, type TestDaemon } from '@nteract-mcp/daemon/testing';
import { createLocalDaemonPlugin, type LocalDaemonOptions } from '@nteract-mcp/plugin-local-daemon';
import { runtimedProtocolVersion } from '@nteract-mcp/runtimed-protocol';
import { afterEach, describe, expect, it, vi } from 'vitest';

const runtimedEntry = join(
  dirname(createRequire(import.meta.url).resolve('@nteract-mcp/daemon/package.json')),
  'dist',
  'runtimed.js',
);

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function startDaemon(args: readonly string[] = ['--no-kernels']): Promise<TestDaemon> {
  const daemon = await startTestDaemon(args);
  cleanups.push(() => daemon.dispose());
  return daemon;
}

async function restartDaemon(daemon: TestDaemon): Promise<TestDaemon> {
  const next = await daemon.restart();
  cleanups.push(() => next.dispose());
  return next;
}

function scratchDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'rtd-port-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

interface PortSetup {
  readonly port: DaemonPort;
  readonly logger: RecordingLogger;
}

function portFor(socketPath: string, options: LocalDaemonOptions = {}, clock?: Clock): PortSetup {
  const logger = new RecordingLogger();
  const builder = createTestContainer({
    plugins: [createLocalDaemonPlugin({ socketPath, heartbeatMs: 200, ...options })],
  }).override(Logger, logger);
  if (clock) builder.override(Clock, clock);
  return { port: builder.build().get(DaemonPort), logger };
}

function track<T extends NotebookHandle>(handle: T): T {
  cleanups.push(() => handle.close());
  return handle;
}

function recordEvents(port: DaemonPort): DaemonEvent[] {
  const events: DaemonEvent[] = [];
  const subscription = port.subscribe((event) => events.push(event));
  cleanups.push(() => subscription.dispose());
  return events;
}

async function liveIncarnation(port: DaemonPort) {
  const observation = await port.queryInfo();
  if (observation.kind !== 'live') throw new Error(`expected a live daemon, got ${observation.reason}`);
  return observation.info.incarnation;
}

async function rejection(promise: Promise<unknown>): Promise<CoreError> {
  try {
    await promise;
  } catch (error) {
    if (CoreError.is(error)) return error;
    throw error;
  }
  throw new Error('expected a rejection');
}

function streamText(outputs: readonly CellOutput[]): string {
  return outputs
    .filter((output) => output.output_type === 'stream')
    .map((output) => String(output.text))
    .join('');
}

const peer = { peerLabel: 'test peer agent:test:1' };
const waitLong = { timeout: 20_000, interval: 50 };

describe('RuntimedDaemonPort: identity', () => {
  it('answers live with the same incarnation on every query, and the daemon process behind it', async () => {
    const daemon = await startDaemon();
    const { port } = portFor(daemon.socketPath);
    const first = await port.queryInfo();
    const second = await port.queryInfo();
    expect(first.kind).toBe('live');
    if (first.kind !== 'live' || second.kind !== 'live') return;
    expect(first.info.incarnation.pid).toBe(daemon.process.pid);
    expect(first.info.incarnation.equals(second.info.incarnation)).toBe(true);
    expect(first.info.version).toMatch(/^\d+\.\d+\.\d+/);
    expect(first.info.protocolVersion).toBe(runtimedProtocolVersion);
  });

  it('answers absent when no daemon runs, and after a crash left its socket behind', async () => {
    const dir = scratchDir();
    const missing = await portFor(join(dir, 'run', 'd.sock')).port.queryInfo();
    expect(missing).toMatchObject({ kind: 'absent' });
    if (missing.kind === 'absent') expect(missing.reason).toContain('Daemon is not running');

    const daemon = await startDaemon();
    const { port } = portFor(daemon.socketPath);
    await daemon.kill();
    expect(existsSync(daemon.socketPath)).toBe(true);
    expect(await port.queryInfo()).toMatchObject({ kind: 'absent' });
  });
});

describe('RuntimedDaemonPort: events', () => {
  it('emits connected, heartbeats of the same incarnation, one disconnected on stop, connected again after a restart', async () => {
    const daemon = await startDaemon();
    const { port } = portFor(daemon.socketPath);
    const before = await liveIncarnation(port);
    const events = recordEvents(port);

    await vi.waitFor(() => expect(events.filter((event) => event.kind === 'heartbeat').length).toBeGreaterThan(1), {
      timeout: 10_000,
      interval: 20,
    });
    expect(events[0]).toMatchObject({ kind: 'connected' });
    for (const event of events) {
      if (event.kind === 'connected' || event.kind === 'heartbeat') {
        expect(event.info.incarnation.equals(before)).toBe(true);
      }
    }

    await daemon.stop();
    await vi.waitFor(() => expect(events.some((event) => event.kind === 'disconnected')).toBe(true), waitLong);
    // Reconnect attempts against no daemon stay silent.
    await new Promise((resolve) => setTimeout(resolve, 800));
    expect(events.filter((event) => event.kind === 'disconnected')).toHaveLength(1);

    const restarted = await restartDaemon(daemon);
    const after = await liveIncarnation(port);
    expect(after.equals(before)).toBe(false);
    expect(after.pid).toBe(restarted.process.pid);
    await vi.waitFor(() => expect(events.filter((event) => event.kind === 'connected')).toHaveLength(2), waitLong);
    const reconnected = events.filter((event) => event.kind === 'connected')[1];
    expect(reconnected?.kind === 'connected' && reconnected.info.incarnation.equals(after)).toBe(true);
    const lastDisconnect = events.findIndex((event) => event.kind === 'disconnected');
    expect(events.slice(lastDisconnect + 1).every((event) => event.kind !== 'disconnected')).toBe(true);
  }, 40_000);

  it('beats on the injected clock and stops its connection and timers when the last subscriber leaves', async () => {
    const daemon = await startDaemon();
    const clock = new ManualClock();
    const { port } = portFor(daemon.socketPath, { heartbeatMs: 5_000 }, clock);
    const events: DaemonEvent[] = [];
    const first = port.subscribe((event) => events.push(event));
    const second = port.subscribe(() => undefined);
    await vi.waitFor(() => expect(events).toHaveLength(1), waitLong);
    expect(events[0]?.kind).toBe('connected');
    expect(clock.pendingTimerCount).toBe(1);

    clock.advance(4_999);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(events).toHaveLength(1);
    clock.advance(1);
    await vi.waitFor(() => expect(events).toHaveLength(2), waitLong);
    expect(events[1]?.kind).toBe('heartbeat');

    first.dispose();
    expect(clock.pendingTimerCount).toBeGreaterThan(0);
    second.dispose();
    second.dispose();
    expect(clock.pendingTimerCount).toBe(0);
    await daemon.stop();
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(events.map((event) => event.kind)).toEqual(['connected', 'heartbeat']);
  }, 30_000);

  it('keeps delivering when a listener throws, and logs the exception', async () => {
    const daemon = await startDaemon();
    const { port, logger } = portFor(daemon.socketPath);
    const subscription = port.subscribe(() => {
      throw new Error('listener bug');
    });
    cleanups.push(() => subscription.dispose());
    const events = recordEvents(port);
    await vi.waitFor(() => expect(events.some((event) => event.kind === 'heartbeat')).toBe(true), waitLong);
    expect(logger.find('a daemon event listener threw', 'error').length).toBeGreaterThan(0);
  }, 30_000);

  it('tells a late subscriber that the daemon is connected', async () => {
    const daemon = await startDaemon();
    const { port } = portFor(daemon.socketPath, { heartbeatMs: 60_000 });
    const early = recordEvents(port);
    await vi.waitFor(() => expect(early).toHaveLength(1), waitLong);
    const late = recordEvents(port);
    await vi.waitFor(() => expect(late).toHaveLength(1), waitLong);
    expect(late[0]?.kind).toBe('connected');
    expect(early).toHaveLength(1);
  }, 30_000);
});

describe('RuntimedDaemonPort: notebooks', () => {
  it('opens one room per path, and two opens share it', async () => {
    const daemon = await startDaemon();
    const { port } = portFor(daemon.socketPath);
    const path = join(daemon.dir, 'a.ipynb');
    const a = track(await port.openNotebook(path, peer));
    const b = track(await port.openNotebook(path, peer));
    expect(b.notebookId).toBe(a.notebookId);
    expect(a.notebookPath).toBe(path);
    expect(a.daemonIncarnation?.equals(await liveIncarnation(port))).toBe(true);
    // Settled runtime (no kernels): the room's kernel status no longer moves.
    await a.waitUntilReady();
    const rooms = await port.listRooms();
    expect(rooms).toEqual([
      {
        notebookId: a.notebookId,
        activePeers: 2,
        hasKernel: false,
        kernelStatus: undefined,
        ephemeral: false,
        notebookPath: path,
        workingDir: dirname(path),
        // Both peers, neither on a cell yet.
        peers: [
          { label: 'test peer agent:test:1', cellId: null, runningCellId: null },
          { label: 'test peer agent:test:1', cellId: null, runningCellId: null },
        ],
      },
    ]);
  }, 30_000);

  it('refuses to attach an unknown notebook id without creating anything', async () => {
    const daemon = await startDaemon();
    const { port } = portFor(daemon.socketPath);
    await track(await port.openNotebook(join(daemon.dir, 'a.ipynb'), peer)).waitUntilReady();
    const before = await port.listRooms();
    expect(before).toHaveLength(1);
    const error = await rejection(port.attachNotebook('6f1c9a52-0d4b-4c8e-9a7f-3b2e1d0c9f8a', peer));
    expect(error.kind).toBe('notebookUnavailable');
    expect(error.code).toBe('notebook_unavailable');
    expect(await port.listRooms()).toEqual(before);
  }, 30_000);

  it('attaches to a known room by id', async () => {
    const daemon = await startDaemon();
    const { port } = portFor(daemon.socketPath);
    const opened = track(await port.openNotebook(join(daemon.dir, 'a.ipynb'), peer));
    await opened.insertCell({ source: 'x = 1', cellType: 'code' });
    const attached = track(await port.attachNotebook(opened.notebookId, peer));
    expect(attached.notebookId).toBe(opened.notebookId);
    expect((await attached.listCells()).map((cell) => cell.source)).toEqual(['x = 1']);
  }, 30_000);

  it('creates untitled notebooks whose runtime reports why there is no kernel', async () => {
    const daemon = await startDaemon();
    const { port } = portFor(daemon.socketPath);
    const handle = track(
      await port.createNotebook({ runtime: 'python', workingDir: daemon.dir, ephemeral: true, ...peer }),
    );
    expect(handle.notebookPath).toBeUndefined();
    expect(await handle.listCells()).toEqual([]);
    const readiness = await handle.waitUntilReady();
    expect(readiness).toMatchObject({ document: 'ready', runtime: 'unavailable' });
    expect(readiness.reason).toContain('kernels are disabled');
    expect(await port.listRooms()).toMatchObject([{ notebookId: handle.notebookId, ephemeral: true }]);
  }, 30_000);

  it('round-trips insert, update, move, delete and clear, as the daemon sees them', async () => {
    const daemon = await startDaemon();
    const { port } = portFor(daemon.socketPath);
    const path = join(daemon.dir, 'edit.ipynb');
    const handle = track(await port.openNotebook(path, peer));
    const a = await handle.insertCell({ source: 'a = 1', cellType: 'code' });
    const b = await handle.insertCell({ source: '# b', cellType: 'markdown' });
    const c = await handle.insertCell({ source: 'c', cellType: 'raw', index: 0 });
    expect(a).toMatchObject({ cellType: 'code', source: 'a = 1', outputs: [], executionCount: null });
    expect((await handle.listCells()).map((cell) => cell.id)).toEqual([c.id, a.id, b.id]);

    const updated = await handle.updateCell(b.id, { source: '# bee' });
    expect(updated).toMatchObject({ id: b.id, cellType: 'markdown', source: '# bee' });
    await handle.moveCell(c.id, b.id);
    expect((await handle.listCells()).map((cell) => cell.id)).toEqual([a.id, b.id, c.id]);
    await handle.moveCell(b.id, undefined);
    expect((await handle.listCells()).map((cell) => cell.id)).toEqual([b.id, a.id, c.id]);
    await handle.deleteCell(a.id);
    await handle.clearOutputs(c.id);
    expect((await handle.getCell(b.id)).source).toBe('# bee');

    const missing = await rejection(handle.getCell('nope'));
    expect(missing.kind).toBe('cellNotFound');
    expect(missing.message).toBe('Cell not found: nope');
    expect((await rejection(handle.deleteCell(a.id))).kind).toBe('cellNotFound');

    // What the daemon holds, read by a fresh peer.
    const fresh = track(await port.openNotebook(path, peer));
    expect(await fresh.listCells()).toEqual(await handle.listCells());
    expect((await fresh.listCells()).map((cell) => [cell.id, cell.source])).toEqual([
      [b.id, '# bee'],
      [c.id, 'c'],
    ]);
  }, 30_000);

  it('applies a repeated idempotency key once', async () => {
    const daemon = await startDaemon();
    const { port } = portFor(daemon.socketPath);
    const path = join(daemon.dir, 'once.ipynb');
    const handle = track(await port.openNotebook(path, peer));
    const first = await handle.insertCell({ source: 'once', cellType: 'code' }, { idempotencyKey: 'k-1' });
    const again = await handle.insertCell({ source: 'once', cellType: 'code' }, { idempotencyKey: 'k-1' });
    expect(again.id).toBe(first.id);
    expect(await handle.listCells()).toHaveLength(1);
    const other = track(await port.openNotebook(path, peer));
    expect(await other.listCells()).toHaveLength(1);
    const conflict = await rejection(handle.deleteCell(first.id, { idempotencyKey: 'k-1' }));
    expect(conflict).toMatchObject({ kind: 'invalidRequest', code: 'idempotency_conflict' });
  }, 30_000);

  it("follows another peer's edits through broadcasts", async () => {
    const daemon = await startDaemon();
    const { port } = portFor(daemon.socketPath);
    const path = join(daemon.dir, 'shared.ipynb');
    const ours = track(await port.openNotebook(path, peer));
    const theirs = track(await portFor(daemon.socketPath).port.openNotebook(path, { peerLabel: 'someone else' }));
    const cell = await theirs.insertCell({ source: 'from them', cellType: 'code' });
    await vi.waitFor(
      async () => expect((await ours.listCells()).map((c) => c.source)).toEqual(['from them']),
      waitLong,
    );
    await theirs.updateCell(cell.id, { source: 'edited by them' });
    await theirs.insertCell({ source: 'second', cellType: 'markdown', index: 0 });
    await vi.waitFor(
      async () => expect((await ours.listCells()).map((c) => c.source)).toEqual(['second', 'edited by them']),
      waitLong,
    );
    await theirs.deleteCell(cell.id);
    await vi.waitFor(async () => expect((await ours.listCells()).map((c) => c.source)).toEqual(['second']), waitLong);
  }, 30_000);

  it('binds the path on save, keeps the id, and tells the other peers', async () => {
    const daemon = await startDaemon();
    const { port } = portFor(daemon.socketPath);
    const handle = track(
      await port.createNotebook({ runtime: 'python', workingDir: daemon.dir, ephemeral: false, ...peer }),
    );
    const other = track(await port.attachNotebook(handle.notebookId, peer));
    const noPath = await rejection(handle.save());
    expect(noPath).toMatchObject({ kind: 'invalidRequest', code: 'no_path' });
    await handle.insertCell({ source: 'print(1)', cellType: 'code' });

    const path = join(daemon.dir, 'saved.ipynb');
    expect(await handle.save(path)).toEqual({ notebookId: handle.notebookId, path });
    expect(handle.notebookPath).toBe(path);
    expect(JSON.parse(readFileSync(path, 'utf8')).cells).toHaveLength(1);
    await vi.waitFor(() => expect(other.notebookPath).toBe(path), waitLong);
    expect(await handle.save()).toEqual({ notebookId: handle.notebookId, path });
    const reopened = track(await port.openNotebook(path, peer));
    expect(reopened.notebookId).toBe(handle.notebookId);
  }, 30_000);
});

describe('RuntimedDaemonPort: execution with a real kernel', () => {
  it('runs cells in one kernel and streams their output', async () => {
    const daemon = await startDaemon([]);
    const { port } = portFor(daemon.socketPath);
    const handle = track(await port.openNotebook(join(daemon.dir, 'run.ipynb'), peer));
    expect((await handle.waitUntilReady()).runtime).toBe('ready');
    const set = await handle.insertCell({ source: 'x = 41', cellType: 'code' });
    const show = await handle.insertCell({ source: 'print(x + 1)', cellType: 'code' });

    const first = await handle.executeCell(set.id, { timeoutMs: 30_000 });
    expect(first).toMatchObject({ cellId: set.id, status: 'ok', outputs: [] });
    const streamed: CellOutput[] = [];
    const result = await handle.executeCell(show.id, {
      timeoutMs: 30_000,
      onOutput: (output) => streamed.push(output),
    });
    expect(result.status).toBe('ok');
    expect(streamText(result.outputs)).toBe('42\n');
    expect(streamText(streamed)).toBe('42\n');
    expect(result.executionCount).toBe((first.executionCount ?? 0) + 1);
    expect(await handle.getExecution(result.executionId)).toEqual({ ...result, status: 'ok' });
    await vi.waitFor(async () => expect(streamText((await handle.getCell(show.id)).outputs)).toBe('42\n'), waitLong);

    const replay = await handle.executeCell(show.id, { idempotencyKey: 'run-1', timeoutMs: 30_000 });
    const replayed = await handle.executeCell(show.id, { idempotencyKey: 'run-1', timeoutMs: 30_000 });
    expect(replayed.executionId).toBe(replay.executionId);
    expect(replayed.status).toBe('ok');
    expect(streamText(replayed.outputs)).toBe('42\n');

    const unknown = await rejection(handle.getExecution('no-such-execution'));
    expect(unknown.kind).toBe('invalidRequest');
  }, 60_000);

  it('stops waiting at the timeout with partial outputs while the execution goes on', async () => {
    const daemon = await startDaemon([]);
    const { port } = portFor(daemon.socketPath);
    const handle = track(await port.openNotebook(join(daemon.dir, 'slow.ipynb'), peer));
    const warm = await handle.insertCell({ source: 'import time', cellType: 'code' });
    expect((await handle.executeCell(warm.id, { timeoutMs: 30_000 })).status).toBe('ok');
    const slow = await handle.insertCell({
      source: 'for i in range(3):\n    print(i, flush=True)\n    if i < 2:\n        time.sleep(1)',
      cellType: 'code',
    });

    const partial = await handle.executeCell(slow.id, { timeoutMs: 1_200 });
    expect(partial.status).toBe('timeout');
    expect(streamText(partial.outputs)).toMatch(/^0\n(1\n)?$/);

    await vi.waitFor(async () => expect((await handle.getExecution(partial.executionId)).status).toBe('ok'), waitLong);
    const done = await handle.getExecution(partial.executionId);
    expect(streamText(done.outputs)).toBe('0\n1\n2\n');
  }, 60_000);
});

describe('RuntimedDaemonPort: losing the daemon', () => {
  it('closes handles as disconnected when the daemon is killed; every call then rejects handleClosed', async () => {
    const daemon = await startDaemon();
    const { port } = portFor(daemon.socketPath);
    const handle = track(await port.openNotebook(join(daemon.dir, 'k.ipynb'), peer));
    const cell = await handle.insertCell({ source: '1', cellType: 'code' });
    expect(handle.daemonIncarnation?.equals(await liveIncarnation(port))).toBe(true);
    const reasons: NotebookHandleCloseReason[] = [];
    handle.onDidClose((reason) => reasons.push(reason));

    await daemon.kill();
    await vi.waitFor(() => expect(reasons).toEqual(['disconnected']), waitLong);
    expect(handle.isClosed).toBe(true);
    for (const call of [
      handle.listCells(),
      handle.getCell(cell.id),
      handle.insertCell({ source: '2', cellType: 'code' }),
      handle.executeCell(cell.id),
      handle.save(),
      handle.waitUntilReady(),
    ]) {
      expect((await rejection(call)).kind).toBe('handleClosed');
    }
    await handle.close();
    expect(reasons).toEqual(['disconnected']);
  }, 30_000);

  it('says leave when we close it, so the daemon tells a clean departure from a vanished peer', async () => {
    const daemon = await startDaemon();
    const { port } = portFor(daemon.socketPath);
    const { connection: control } = await daemon.connect({ channel: 'control' });
    cleanups.push(() => control.close());
    const left: Record<string, unknown>[] = [];
    control.onFrame((frame) => {
      if (frame.event === 'peer_left') left.push(frame);
    });
    await control.request({ type: 'subscribe' });
    const path = join(daemon.dir, 'leave.ipynb');
    const handle = await port.openNotebook(path, peer);
    await handle.close();
    await vi.waitFor(() => expect(left).toHaveLength(1), waitLong);
    expect(left[0]).toMatchObject({ notebook_id: handle.notebookId, departure: 'left', active_peers: 0 });

    // A connection that just ends (a crashed child never says leave) is a vanished peer.
    const raw = await daemon.connect({ channel: 'notebook', mode: 'open', path, peer_label: 'crashing child' });
    raw.connection.close();
    await vi.waitFor(() => expect(left).toHaveLength(2), waitLong);
    expect(left[1]).toMatchObject({ notebook_id: handle.notebookId, departure: 'vanished' });
  });

  it('closes as closed exactly once when we close it', async () => {
    const daemon = await startDaemon();
    const { port } = portFor(daemon.socketPath);
    const handle = await port.openNotebook(join(daemon.dir, 'c.ipynb'), peer);
    const other = track(await port.openNotebook(join(daemon.dir, 'c.ipynb'), peer));
    const reasons: NotebookHandleCloseReason[] = [];
    handle.onDidClose((reason) => reasons.push(reason));
    await handle.close();
    await handle.close();
    expect(reasons).toEqual(['closed']);
    expect((await rejection(handle.listCells())).kind).toBe('handleClosed');
    const late: NotebookHandleCloseReason[] = [];
    handle.onDidClose((reason) => late.push(reason));
    expect(late).toEqual(['closed']);
    await vi.waitFor(async () => expect((await port.listRooms())[0]?.activePeers).toBe(1), waitLong);
    expect(other.isClosed).toBe(false);
  }, 30_000);

  it('closes as room-removed when the daemon shuts the room down, as disconnected when the daemon stops', async () => {
    const daemon = await startDaemon();
    const { port } = portFor(daemon.socketPath);
    const removed = await port.openNotebook(join(daemon.dir, 'r.ipynb'), peer);
    const reasons: NotebookHandleCloseReason[] = [];
    removed.onDidClose((reason) => reasons.push(reason));
    expect(await daemon.control({ type: 'shutdown_notebook', notebook_id: removed.notebookId })).toMatchObject({
      found: true,
    });
    await vi.waitFor(() => expect(reasons).toEqual(['room-removed']), waitLong);

    const stopped = await port.openNotebook(join(daemon.dir, 's.ipynb'), peer);
    const stopReasons: NotebookHandleCloseReason[] = [];
    stopped.onDidClose((reason) => stopReasons.push(reason));
    await daemon.stop();
    await vi.waitFor(() => expect(stopReasons).toEqual(['disconnected']), waitLong);
  }, 30_000);
});

describe('RuntimedDaemonPort: auto-start', () => {
  async function stopDaemonAt(socketPath: string): Promise<void> {
    const { port } = portFor(socketPath);
    const observation = await port.queryInfo().catch(() => undefined);
    if (observation?.kind !== 'live') return;
    const { pid } = observation.info.incarnation;
    process.kill(pid, 'SIGTERM');
    await vi.waitFor(() => expect(() => process.kill(pid, 0)).toThrow(), waitLong);
  }

  function layout(): { dir: string; socketPath: string; dataDir: string } {
    const dir = scratchDir();
    const socketPath = join(dir, 'run', 'd.sock');
    cleanups.push(() => stopDaemonAt(socketPath));
    return { dir, socketPath, dataDir: join(dir, 'data') };
  }

  it('without autoStart, opening a notebook rejects daemonUnavailable: the daemon is not running', async () => {
    const { dir, socketPath } = layout();
    const { port } = portFor(socketPath);
    const error = await rejection(port.openNotebook(join(dir, 'a.ipynb'), peer));
    expect(error.kind).toBe('daemonUnavailable');
    expect(error.message).toContain('Daemon is not running');
    // No daemon, no open notebooks: listing says so and starts nothing.
    expect(await port.listRooms()).toEqual([]);
    expect(await port.queryInfo()).toMatchObject({ kind: 'absent' });
  });

  it('starts the daemon with the configured command when opening finds none, then opens', async () => {
    const { dir, socketPath, dataDir } = layout();
    const { port } = portFor(socketPath, {
      autoStart: {
        command: process.execPath,
        args: [runtimedEntry, 'start', '--socket', socketPath, '--data-dir', dataDir, '--no-kernels'],
      },
    });
    expect(await port.queryInfo()).toMatchObject({ kind: 'absent' });
    const handle = track(await port.openNotebook(join(dir, 'auto.ipynb'), peer));
    const incarnation = await liveIncarnation(port);
    expect(handle.daemonIncarnation?.equals(incarnation)).toBe(true);
    await handle.insertCell({ source: 'started for us', cellType: 'code' });
    expect(await port.listRooms()).toMatchObject([{ notebookId: handle.notebookId, activePeers: 1 }]);
  }, 30_000);

  it('shares one start attempt between concurrent calls', async () => {
    const { dir, socketPath, dataDir } = layout();
    const countFile = join(dir, 'starts');
    const script = [
      `require('fs').appendFileSync(${JSON.stringify(countFile)}, 'x');`,
      `require('child_process').spawn(process.execPath, ${JSON.stringify([
        runtimedEntry,
        'start',
        '--foreground',
        '--socket',
        socketPath,
        '--data-dir',
        dataDir,
        '--no-kernels',
      ])}, { detached: true, stdio: 'ignore' }).unref();`,
    ].join('\n');
    const { port } = portFor(socketPath, { autoStart: { command: process.execPath, args: ['-e', script] } });
    const [a, b, rooms] = await Promise.all([
      port.openNotebook(join(dir, 'one.ipynb'), peer).then(track),
      port.createNotebook({ runtime: 'python', workingDir: dir, ephemeral: true, ...peer }).then(track),
      port.listRooms(),
    ]);
    expect(a.notebookId).not.toBe(b.notebookId);
    expect(Array.isArray(rooms)).toBe(true);
    expect(readFileSync(countFile, 'utf8')).toBe('x');
  }, 30_000);

  it('says which command failed when the daemon cannot be started', async () => {
    const { dir, socketPath } = layout();
    const exits = portFor(socketPath, { autoStart: { command: process.execPath, args: ['-e', 'process.exit(3)'] } });
    const exited = await rejection(exits.port.openNotebook(join(dir, 'a.ipynb'), peer));
    expect(exited.kind).toBe('daemonUnavailable');
    expect(exited.message).toContain(`Could not start the daemon with \`${process.execPath} -e`);
    expect(exited.message).toContain('exited with code 3');

    const missing = portFor(socketPath, { autoStart: { command: join(dir, 'no-such-runtimed'), args: ['start'] } });
    const notFound = await rejection(missing.port.attachNotebook('6f1c9a52-0d4b-4c8e-9a7f-3b2e1d0c9f8a', peer));
    expect(notFound.kind).toBe('daemonUnavailable');
    expect(notFound.message).toContain('Could not start the daemon with');
    expect(notFound.message).toContain('ENOENT');
  }, 30_000);

  it('gives up after 15 s (on the injected clock) when the command starts nothing', async () => {
    const { dir, socketPath } = layout();
    const clock = new ManualClock();
    const { port } = portFor(socketPath, { autoStart: { command: process.execPath, args: ['-e', ''] } }, clock);
    let settled: CoreError | undefined;
    void rejection(port.openNotebook(join(dir, 'a.ipynb'), peer)).then((error) => {
      settled = error;
    });
    for (let step = 0; step < 400 && settled === undefined; step += 1) {
      clock.advance(500);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(settled?.kind).toBe('daemonUnavailable');
    expect(settled?.message).toContain('no daemon answered');
    expect(settled?.message).toContain('within 15 s');
  }, 30_000);
});
