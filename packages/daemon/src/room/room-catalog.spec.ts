import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Subscription } from '@nteract-mcp/foundation';
import { ManualClock, RecordingLogger } from '@nteract-mcp/foundation/testing';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { NotebookRegistry } from '../persistence/notebook-registry.js';
import { UntitledStore } from '../persistence/untitled-store.js';
import { writeFileAtomic } from '../persistence/write-file-atomic.js';
import { testRoomSettings } from '../testing/test-room-settings.js';
import type { KernelClient, KernelLaunch, KernelLauncher, KernelRequest, RoomKernel } from './kernel-launcher.js';
import type { RoomPeer } from './notebook-room.js';
import { RoomCatalog } from './room-catalog.js';

// Every file the rooms write, counted (the writes themselves are the real ones).
vi.mock('../persistence/write-file-atomic.js', async (original) => {
  const actual = await original<typeof import('../persistence/write-file-atomic.js')>();
  return { ...actual, writeFileAtomic: vi.fn(actual.writeFileAtomic) };
});
const writesTo = (path: string) => vi.mocked(writeFileAtomic).mock.calls.filter(([target]) => target === path).length;

/** A kernel whose shutdown the test finishes by hand, to hold the destructive latch open. */
class ScriptedKernel implements RoomKernel {
  public static nextPid = 100;
  public readonly pid = ScriptedKernel.nextPid++;
  public status = 'idle';
  public shutdownCalls = 0;
  public finishShutdown: () => void = () => undefined;
  public execute: RoomKernel['execute'] = async () => ({ status: 'ok', executionCount: 1, outputs: [] });
  public interrupt: RoomKernel['interrupt'] = async () => 'nothing_running';
  public restart = async () => undefined;
  public onStatus(): Subscription {
    return { dispose: () => undefined };
  }
  #exitListeners: ((info: { code: number | null; signal: string | null }) => void)[] = [];
  public onExit(listener: (info: { code: number | null; signal: string | null }) => void): Subscription {
    this.#exitListeners.push(listener);
    return { dispose: () => undefined };
  }
  /** The kernel process dies by itself (e.g. SIGKILLed). */
  public die(signal: string): void {
    this.status = 'dead';
    for (const listener of this.#exitListeners) listener({ code: null, signal });
  }
  public shutdown(): Promise<void> {
    this.shutdownCalls += 1;
    this.status = 'dead';
    return new Promise((resolve) => {
      this.finishShutdown = resolve;
    });
  }
}

class ScriptedLauncher implements KernelLauncher {
  public readonly kernels: ScriptedKernel[] = [];
  /** The working directory and client of every launch, in order. */
  public readonly launches: { readonly workingDir: string; readonly client: KernelClient | undefined }[] = [];
  public async launch(workingDir: string, _kernel?: KernelRequest, client?: KernelClient): Promise<KernelLaunch> {
    this.launches.push({ workingDir, client });
    const kernel = new ScriptedKernel();
    this.kernels.push(kernel);
    return { kind: 'started', kernel, interpreter: '/opt/py/bin/python' };
  }
}

const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

let dir: string;
let clock: ManualClock;
let launcher: ScriptedLauncher;
let catalog: RoomCatalog;
let logger: RecordingLogger;

function peer(label: string): RoomPeer {
  return { id: `${label}-${Math.random()}`, label, send: () => undefined, disconnect: () => undefined };
}

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'catalog-'));
  clock = new ManualClock(0);
  launcher = new ScriptedLauncher();
  logger = new RecordingLogger();
  catalog = new RoomCatalog({
    settings: testRoomSettings,
    launcher,
    registry: await NotebookRegistry.load(join(dir, 'registry.json'), logger),
    untitled: new UntitledStore(join(dir, 'untitled')),
    clock,
    logger,
    emit: () => undefined,
  });
});

afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('NotebookRoom kernel lifetime', () => {
  it('runs scratch code in the kernel without history and without touching the document (run_code)', async () => {
    const { room, release } = await catalog.open(join(dir, 's.ipynb'));
    const a = peer('a');
    room.addPeer(a);
    release();
    await settle();
    const kernel = launcher.kernels[0] as ScriptedKernel;
    const seen: { code: string; storeHistory: boolean | undefined }[] = [];
    kernel.execute = async (code, options) => {
      seen.push({ code, storeHistory: options?.storeHistory });
      return { status: 'ok', executionCount: null, outputs: [{ output_type: 'stream', name: 'stdout', text: '2\n' }] };
    };
    const before = room.cells();
    const answer = await room.handle(a, { type: 'run_code', source: 'print(1 + 1)' });
    expect(answer).toEqual({ status: 'ok', outputs: [{ output_type: 'stream', name: 'stdout', text: '2\n' }] });
    expect(seen).toEqual([{ code: 'print(1 + 1)', storeHistory: false }]);
    expect(room.cells()).toEqual(before);
  });

  it('tears the kernel down only after keep-alive once the last peer left, keeping the room', async () => {
    const { room, release } = await catalog.open(join(dir, 'a.ipynb'));
    const a = peer('a');
    const b = peer('b');
    room.addPeer(a);
    room.addPeer(b);
    release();
    await settle();
    expect(launcher.kernels).toHaveLength(1);
    room.removePeer(a.id, 'left');
    clock.advance(5000);
    expect(launcher.kernels[0]?.shutdownCalls).toBe(0);
    room.removePeer(b.id, 'left');
    clock.advance(999);
    expect(launcher.kernels[0]?.shutdownCalls).toBe(0);
    clock.advance(1);
    expect(launcher.kernels[0]?.shutdownCalls).toBe(1);
    launcher.kernels[0]?.finishShutdown();
    await settle();
    expect(room.info()).toMatchObject({ has_kernel: false, active_peers: 0 });
    expect(catalog.list().map((info) => info.notebook_id)).toEqual([room.notebookId]);
  });

  it('keeps the kernel for vanishedPeerKeepAliveMs, not keepAliveMs, when the last peer vanished without leaving', async () => {
    const { room, release } = await catalog.open(join(dir, 'v.ipynb'));
    release();
    const crashed = peer('crashed');
    room.addPeer(crashed);
    await settle();
    room.removePeer(crashed.id, 'vanished');
    clock.advance(4999);
    expect(launcher.kernels[0]?.shutdownCalls).toBe(0);
    expect(room.info().has_kernel).toBe(true);
    clock.advance(1);
    expect(launcher.kernels[0]?.shutdownCalls).toBe(1);
  });

  it('keeps the same kernel for a peer that rejoins within keep-alive, even one that left again', async () => {
    const { room, release } = await catalog.open(join(dir, 'b.ipynb'));
    release();
    const first = peer('first');
    room.addPeer(first);
    await settle();
    room.removePeer(first.id, 'left');
    clock.advance(600);
    const second = peer('second');
    room.addPeer(second);
    room.removePeer(second.id, 'left');
    // The first timer was cancelled; a new one started at t=600 fires at t=1600, not t=1000.
    clock.advance(500);
    expect(launcher.kernels[0]?.shutdownCalls).toBe(0);
    const third = peer('third');
    room.addPeer(third);
    await settle();
    clock.advance(5000);
    expect(launcher.kernels).toHaveLength(1);
    expect(launcher.kernels[0]?.shutdownCalls).toBe(0);
  });

  it('makes a peer arriving during teardown wait for a fresh kernel instead of reusing the doomed one', async () => {
    const { room, release } = await catalog.open(join(dir, 'c.ipynb'));
    release();
    const first = peer('first');
    room.addPeer(first);
    await settle();
    room.removePeer(first.id, 'left');
    clock.advance(1000);
    const doomed = launcher.kernels[0];
    expect(doomed?.shutdownCalls).toBe(1);
    room.addPeer(peer('late'));
    await settle();
    expect(launcher.kernels).toHaveLength(1);
    doomed?.finishShutdown();
    await settle();
    await settle();
    expect(launcher.kernels).toHaveLength(2);
    expect(room.info().has_kernel).toBe(true);
  });
});

describe('RoomCatalog ghost-room reaper', () => {
  it('refuses to attach an id that is not a UUID (bad request), building no file path from it', async () => {
    for (const id of ['\u0000', '../../etc/passwd', 'n-1']) {
      await expect(catalog.attach(id)).rejects.toMatchObject({ kind: 'badRequest' });
    }
  });

  it('removes only peerless, kernel-less, unreserved rooms past the TTL, after saving them', async () => {
    const busy = await catalog.open(join(dir, 'busy.ipynb'));
    busy.room.addPeer(peer('stays'));
    busy.release();
    const idle = await catalog.open(join(dir, 'idle.ipynb'));
    idle.release();
    const held = await catalog.open(join(dir, 'held.ipynb'));
    held.release();
    const reservation = held.room.reserve();
    await settle();
    clock.advance(9_999);
    expect(await catalog.sweep()).toEqual([]);
    clock.advance(1);
    expect(await catalog.sweep()).toEqual([idle.room.notebookId]);
    expect(catalog.get(busy.room.notebookId)).toBe(busy.room);
    expect(catalog.get(held.room.notebookId)).toBe(held.room);
    reservation();
    expect(await catalog.sweep()).toEqual([held.room.notebookId]);
  });

  it('trims the oldest reapable rooms beyond the soft cap before their TTL', async () => {
    const opened = [];
    for (const name of ['r1', 'r2', 'r3', 'r4', 'r5']) {
      const admission = await catalog.open(join(dir, `${name}.ipynb`));
      admission.release();
      opened.push(admission.room);
      clock.advance(10);
    }
    expect(await catalog.sweep()).toEqual([opened[0]?.notebookId, opened[1]?.notebookId]);
    expect(catalog.size).toBe(3);
  });

  it('never reaps a room with a kernel, and attach finds a reaped file-backed room again by its UUID', async () => {
    const withKernel = await catalog.open(join(dir, 'k.ipynb'));
    const p = peer('p');
    withKernel.room.addPeer(p);
    withKernel.release();
    await settle();
    withKernel.room.removePeer(p.id, 'left');
    clock.advance(500);
    clock.advance(20_000);
    // keep-alive fired at t=1000; its shutdown is still running (latched)
    expect(await catalog.sweep()).toEqual([]);
    launcher.kernels[0]?.finishShutdown();
    await settle();
    expect(await catalog.sweep()).toEqual([withKernel.room.notebookId]);
    const back = await catalog.attach(withKernel.room.notebookId);
    back.release();
    expect(back.room.path).toBe(join(dir, 'k.ipynb'));
  });
});

describe('NotebookRoom new-kernel notice', () => {
  const runCell = async (room: Awaited<ReturnType<RoomCatalog['open']>>['room'], p: RoomPeer, cellId: string) =>
    (await room.handle(p, { type: 'execute_cell', cell_id: cellId })) as { kernel_notice?: string };

  it('tells the first execution in a new kernel why the old one is gone, once; an asked-for restart is not news', async () => {
    const { room, release } = await catalog.open(join(dir, 'k.ipynb'));
    release();
    const p = peer('agent');
    room.addPeer(p);
    const made = (await room.handle(p, { type: 'insert_cell', source: 'x = 1', cell_type: 'code' })) as {
      cell: { id: string };
    };
    const first = await runCell(room, p, made.cell.id);
    expect(first.kernel_notice).toBeUndefined();
    await settle();
    launcher.kernels[0]?.die('SIGKILL');
    const afterDeath = await runCell(room, p, made.cell.id);
    expect(afterDeath.kernel_notice).toBe(
      'The kernel exited unexpectedly (SIGKILL): this runs in a new kernel, so variables and imports from earlier runs are not defined until their cells run again.',
    );
    expect((await runCell(room, p, made.cell.id)).kernel_notice).toBeUndefined();
    await settle();
    await room.handle(p, { type: 'restart_kernel' });
    expect((await runCell(room, p, made.cell.id)).kernel_notice).toBeUndefined();
  });

  it('tells a run its kernel died under it, once', async () => {
    const { room, release } = await catalog.open(join(dir, 'd.ipynb'));
    release();
    const p = peer('agent');
    room.addPeer(p);
    const made = (await room.handle(p, { type: 'insert_cell', source: 'while True: pass', cell_type: 'code' })) as {
      cell: { id: string };
    };
    await settle();
    const kernel = launcher.kernels[0] as ScriptedKernel;
    let abort: (() => void) | undefined;
    kernel.execute = () =>
      new Promise((resolve) => {
        abort = () => resolve({ status: 'aborted' as const, executionCount: null, outputs: [] });
      });
    const started = (await room.handle(p, { type: 'execute_cell', cell_id: made.cell.id })) as { execution_id: string };
    await settle();
    // As the kernel does: the exit is handled, then the pending execution resolves `aborted`.
    kernel.die('SIGKILL');
    abort?.();
    await settle();
    const final = (await room.handle(p, { type: 'get_execution', execution_id: started.execution_id })) as {
      status: string;
      kernel_notice?: string;
    };
    expect(final.status).toBe('aborted');
    expect(final.kernel_notice).toBe(
      'The kernel exited unexpectedly (SIGKILL) while this cell ran, so it was aborted. Run it again: it runs in a new kernel, so variables and imports from earlier runs are not defined until their cells run again.',
    );
    expect((await runCell(room, p, made.cell.id)).kernel_notice).toBeUndefined();
  });

  it('tells the first execution of a notebook whose cells ran in an earlier kernel', async () => {
    const path = join(dir, 'ran.ipynb');
    const { writeFileSync } = await import('node:fs');
    writeFileSync(
      path,
      JSON.stringify({
        nbformat: 4,
        nbformat_minor: 5,
        metadata: {},
        cells: [{ id: 'c1', cell_type: 'code', source: 'x = 1', metadata: {}, outputs: [], execution_count: 3 }],
      }),
    );
    const { room, release } = await catalog.open(path);
    release();
    const p = peer('agent');
    room.addPeer(p);
    expect((await runCell(room, p, 'c1')).kernel_notice).toMatch(/^Cells of this notebook ran in an earlier kernel/);
    expect((await runCell(room, p, 'c1')).kernel_notice).toBeUndefined();
  });

  it('tells a scratch run (run_code) too, when it is the first run in the new kernel', async () => {
    const path = join(dir, 'ran-scratch.ipynb');
    const { writeFileSync } = await import('node:fs');
    writeFileSync(
      path,
      JSON.stringify({
        nbformat: 4,
        nbformat_minor: 5,
        metadata: {},
        cells: [{ id: 'c1', cell_type: 'code', source: 'x = 1', metadata: {}, outputs: [], execution_count: 3 }],
      }),
    );
    const { room, release } = await catalog.open(path);
    release();
    const p = peer('agent');
    room.addPeer(p);
    const first = await room.handle(p, { type: 'run_code', source: 'print(1)' });
    expect(first.kernel_notice).toMatch(
      /^Cells of this notebook ran in an earlier kernel.*: this code runs in a new kernel/,
    );
    expect((await room.handle(p, { type: 'run_code', source: 'print(1)' })).kernel_notice).toBeUndefined();
    // Told once: the next cell's execution does not repeat it.
    expect((await runCell(room, p, 'c1')).kernel_notice).toBeUndefined();
  });
});

describe('daemon log lines of rooms, peers, kernels and saves', () => {
  /** `level message` of each line recorded since `from`. */
  const lines = (from = 0) => logger.records.slice(from).map((record) => `${record.level} ${record.message}`);
  const fieldsOf = (message: string) => logger.records.find((record) => record.message === message)?.fields;

  it('says when a room opens, who joins and leaves with the count, when its kernel starts, is interrupted, restarted and torn down by keep-alive', async () => {
    const path = join(dir, 'log.ipynb');
    const { room, release } = await catalog.open(path);
    const ada = peer('Claude Code agent:ada:s1');
    const bob = peer('Cursor agent:bob:s2');
    room.addPeer(ada);
    room.addPeer(bob);
    release();
    await settle();
    const pid = (launcher.kernels[0] as ScriptedKernel).pid;
    await room.handle(ada, { type: 'interrupt' });
    await room.handle(ada, { type: 'restart_kernel' });
    room.removePeer(bob.id, 'left');
    room.removePeer(ada.id, 'vanished');
    clock.advance(5000);
    launcher.kernels[0]?.finishShutdown();
    await settle();

    expect(lines()).toEqual([
      'info room opened',
      'info peer joined',
      'info kernel starting',
      'info peer joined',
      'info kernel started',
      'info kernel interrupted',
      'info kernel restarted',
      'info peer left',
      'info peer vanished (its connection ended without leave)',
      'info kernel shut down',
    ]);
    expect(fieldsOf('room opened')).toMatchObject({
      notebookId: room.notebookId,
      via: 'path',
      path,
      kernelspec: 'python3',
    });
    expect(logger.find('peer joined').map((record) => record.fields)).toEqual([
      { peer: 'Claude Code agent:ada:s1', peers: 1 },
      { peer: 'Cursor agent:bob:s2', peers: 2 },
    ]);
    expect(fieldsOf('kernel starting')).toEqual({ kernelspec: 'python3', cwd: dir });
    expect(fieldsOf('kernel started')).toEqual({ kernelspec: 'python3', pid });
    expect(fieldsOf('peer left')).toEqual({ peer: 'Cursor agent:bob:s2', peers: 1 });
    expect(fieldsOf('peer vanished (its connection ended without leave)')).toEqual({
      peer: 'Claude Code agent:ada:s1',
      peers: 0,
      kernelKeptMs: 5000,
    });
    expect(fieldsOf('kernel shut down')).toEqual({ pid, why: 'no peer for 5000 ms (keep-alive)' });
    expect(logger.records.every((record) => record.scope === undefined || record.scope.startsWith('room:'))).toBe(true);
  });

  it('logs a kernel that dies with its exit, and a notebook no kernel can run', async () => {
    const { room, release } = await catalog.open(join(dir, 'dies.ipynb'));
    room.addPeer(peer('a'));
    release();
    await settle();
    const kernel = launcher.kernels[0] as ScriptedKernel;
    kernel.die('SIGKILL');
    expect(logger.find('kernel exited unexpectedly', 'warn').map((record) => record.fields)).toEqual([
      { pid: kernel.pid, code: null, signal: 'SIGKILL' },
    ]);

    launcher.launch = async () => ({ kind: 'unavailable', reason: 'no kernelspec python3 is installed' });
    const other = await catalog.open(join(dir, 'none.ipynb'));
    other.room.addPeer(peer('b'));
    other.release();
    await settle();
    expect(logger.find('no kernel can run this notebook', 'info').map((record) => record.fields)).toEqual([
      { kernelspec: 'python3', reason: 'no kernelspec python3 is installed' },
    ]);
  });

  it('logs each save at debug with path and bytes and a failed one at error, never the notebook contents', async () => {
    const path = join(dir, 'saves.ipynb');
    const { room, release } = await catalog.open(path);
    const a = peer('a');
    room.addPeer(a);
    release();
    await room.handle(a, { type: 'insert_cell', source: 'api_key = "do-not-log-me"' });
    clock.advance(50);
    await room.flush();
    const saved = logger.find('saved', 'debug');
    expect(saved.map((record) => record.fields)).toEqual([{ path, bytes: statSync(path).size }]);

    // The notebook's directory becomes a plain file: the next save cannot be written.
    rmSync(dir, { recursive: true, force: true });
    writeFileSync(dir, 'not a directory');
    await room.handle(a, { type: 'insert_cell', source: 'more = 2' });
    clock.advance(50);
    await room.flush().catch(() => undefined);
    expect(logger.find('autosave failed; retrying', 'error').length).toBeGreaterThan(0);
    expect(logger.dump()).not.toContain('do-not-log-me');
    expect(logger.dump()).not.toContain('more = 2');
  });

  it('logs a room closed and why, and a reaped ghost room with how long it was idle', async () => {
    const shut = await catalog.open(join(dir, 'shut.ipynb'));
    shut.release();
    await catalog.shutdownRoom(shut.room.notebookId);
    expect(fieldsOf('room closed')).toMatchObject({ why: 'the notebook was shut down', peers: 0 });

    const ghost = await catalog.open(join(dir, 'ghost.ipynb'));
    ghost.release();
    clock.advance(10_000);
    await catalog.sweep();
    expect(fieldsOf('reaped ghost room')).toMatchObject({
      notebookId: ghost.room.notebookId,
      path: join(dir, 'ghost.ipynb'),
      idleMs: 10_000,
      rooms: 0,
    });
  });

  it('tells list_rooms the peers by label, the runtime and kernelspec, the kernel pid and the last save', async () => {
    const path = join(dir, 'info.ipynb');
    const { room, release } = await catalog.open(path);
    expect(room.info()).toMatchObject({ peer_labels: [], kernel_name: 'python3', last_saved: null });
    const a = peer('Claude Code agent:ada:s1');
    room.addPeer(a);
    release();
    await settle();
    await room.handle(a, { type: 'insert_cell', source: 'x = 1' });
    clock.advance(50);
    await room.flush();
    expect(room.info()).toMatchObject({
      active_peers: 1,
      peer_labels: ['Claude Code agent:ada:s1'],
      runtime: { state: 'ready', kernel_status: 'idle' },
      kernel_name: 'python3',
      kernel_pid: (launcher.kernels[0] as ScriptedKernel).pid,
      last_saved: { at: new Date(clock.now()).toISOString(), path },
    });
  });
});

describe('the client a room starts its kernel for', () => {
  it('is the client that created the room: a second client joining keeps that kernel, and a new kernel gets the same environment', async () => {
    const path = join(dir, 'shared.ipynb');
    const alice: KernelClient = { env: { WHO: 'alice' }, cwd: dir };
    const bob: KernelClient = { env: { WHO: 'bob' }, cwd: tmpdir() };
    const first = await catalog.open(path, alice);
    first.room.addPeer(peer('a'));
    first.release();
    await settle();
    const second = await catalog.open(path, bob);
    const b = peer('b');
    second.room.addPeer(b);
    second.release();
    await settle();
    expect(second.room).toBe(first.room);
    expect(launcher.launches).toEqual([{ workingDir: dir, client: alice }]);
    expect(first.room.info()).toMatchObject({ working_dir: dir, kernel_interpreter: '/opt/py/bin/python' });

    (launcher.kernels[0] as ScriptedKernel).die('SIGKILL');
    await first.room.handle(b, { type: 'run_code', source: '1' });
    expect(launcher.launches.map((launch) => launch.client)).toEqual([alice, alice]);

    const other = await catalog.create({ workingDir: tmpdir(), ephemeral: true, client: bob });
    other.room.addPeer(peer('c'));
    other.release();
    await settle();
    expect(launcher.launches[2]).toEqual({ workingDir: tmpdir(), client: bob });
  });

  it("is adopted by a room reopened without one (daemon start), with the client's directory for an untitled notebook", async () => {
    const created = await catalog.create({ workingDir: dir, ephemeral: false });
    const { notebookId } = created.room;
    created.release();
    await catalog.shutdownRoom(notebookId);
    const reopened = await catalog.attach(notebookId);
    reopened.release();
    // A cwd that is not a directory is not one a kernel could start in: ignored.
    (await catalog.attach(notebookId, { cwd: join(dir, 'missing') })).release();
    expect(launcher.launches).toEqual([]);

    const client: KernelClient = { env: { WHO: 'carol' }, cwd: tmpdir() };
    const joined = await catalog.attach(notebookId, client);
    joined.room.addPeer(peer('c'));
    joined.release();
    await settle();
    expect(launcher.launches).toEqual([{ workingDir: tmpdir(), client }]);
    expect(joined.room.info().working_dir).toBe(tmpdir());
  });
});

/** A room of the file `name` in `dir` with one peer and one saved cell. */
async function openWithCell(name: string) {
  const path = join(dir, name);
  const { room, release } = await catalog.open(path);
  const a = peer('a');
  room.addPeer(a);
  release();
  await room.handle(a, { type: 'insert_cell', source: 'x = 1' });
  clock.advance(50);
  await room.flush();
  return { path, room, a };
}

describe('a save to another path', () => {
  it('moves the room to the new file only once it is written: a failed write changes nothing and says so', async () => {
    const { path: first, room, a } = await openWithCell('first.ipynb');

    // A directory where the new file should go: the rename onto it fails, as root too.
    const blocked = join(dir, 'blocked.ipynb');
    mkdirSync(blocked);
    const failed = await room.handle(a, { type: 'save', path: blocked }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failed).toMatchObject({ kind: 'saveFailed' });
    expect((failed as Error).message).toMatch(
      new RegExp(`^Cannot save to ${blocked}: .+\\. Nothing changed: it is still saved to ${first}\\.$`),
    );
    expect(room.path).toBe(first);
    // Later edits still reach the first file; the failed path is bound to nothing.
    await room.handle(a, { type: 'insert_cell', source: 'y = 2' });
    clock.advance(50);
    await room.flush();
    expect(readFileSync(first, 'utf8')).toContain('y = 2');
    expect(readdirSync(blocked)).toEqual([]);

    // A save that can be written moves it, and the first file keeps what it had.
    const second = join(dir, 'second.ipynb');
    await room.handle(a, { type: 'save', path: second });
    expect(room.path).toBe(second);
    expect(readFileSync(second, 'utf8')).toContain('y = 2');
  });

  it('writes the new file once, and leaves the room saved there: no edit, no second write', async () => {
    const { room, a } = await openWithCell('once.ipynb');
    const moved = join(dir, 'moved.ipynb');
    await room.handle(a, { type: 'save', path: moved });
    expect(writesTo(moved)).toBe(1);
    clock.advance(60_000);
    await room.flush();
    expect(writesTo(moved)).toBe(1);
    // The next edit is autosaved there as usual.
    await room.handle(a, { type: 'insert_cell', source: 'after = 3' });
    clock.advance(50);
    await room.flush();
    expect(writesTo(moved)).toBe(2);
    expect(readFileSync(moved, 'utf8')).toContain('after = 3');
  });
});

describe('a failing autosave', () => {
  it('is retried with back-off (1 s, 2 s, 4 s … at most 30 s) with no further change, until it works again', async () => {
    const { path, room, a } = await openWithCell('retry.ipynb');
    const retries = () => logger.find('autosave failed; retrying', 'error').map((record) => record.fields.retryInMs);
    await room.handle(a, { type: 'insert_cell', source: 'kept = 2' });
    // A directory in the notebook's place: every write fails (as root too) until it is gone.
    rmSync(path);
    mkdirSync(path);
    clock.advance(50);
    await vi.waitFor(() => expect(retries()).toEqual([1_000]));
    expect(room.conditions().map((condition) => condition.kind)).toContain('autosave_failing');
    const expected = [1_000];
    for (const wait of [1_000, 2_000, 4_000, 8_000, 16_000, 30_000]) {
      clock.advance(wait);
      expected.push(Math.min(wait * 2, 30_000));
      await vi.waitFor(() => expect(retries()).toEqual(expected));
    }
    // The place is free again: the next retry writes every edit, with no new change.
    rmSync(path, { recursive: true });
    clock.advance(30_000);
    await vi.waitFor(() => expect(readFileSync(path, 'utf8')).toContain('kept = 2'));
    await vi.waitFor(() => expect(room.conditions()).toEqual([]));
    clock.advance(60_000);
    await settle();
    expect(retries()).toHaveLength(expected.length);
  });

  it('leaves a read-only (0444) file as it is and says so, until it is writable again', async () => {
    const { path, room, a } = await openWithCell('readonly.ipynb');
    const before = readFileSync(path, 'utf8');
    chmodSync(path, 0o444);
    await room.handle(a, { type: 'insert_cell', source: 'not_written = 3' });
    clock.advance(50);
    await settle();
    await room.flush().catch(() => undefined);
    expect(readFileSync(path, 'utf8')).toBe(before);
    expect(statSync(path).mode & 0o777).toBe(0o444);
    expect(room.conditions()).toEqual([
      expect.objectContaining({
        kind: 'file_read_only',
        message: expect.stringContaining(`${path} is read-only (mode 0444)`),
      }),
    ]);
    const refused = await room.handle(a, { type: 'save' }).catch((error: unknown) => error);
    expect(refused).toMatchObject({ kind: 'fileReadOnly' });
    chmodSync(path, 0o644);
    clock.advance(30_000);
    await vi.waitFor(() => expect(readFileSync(path, 'utf8')).toContain('not_written = 3'));
    await vi.waitFor(() => expect(room.conditions()).toEqual([]));
  });
});
