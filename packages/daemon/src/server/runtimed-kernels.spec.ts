import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RuntimedConnection, RuntimedFrame, WireKernelspec, WireRoomInfo } from '@nteract-mcp/runtimed-protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { startTestDaemon, type TestDaemon } from '../testing/start-test-daemon.js';

const daemons: TestDaemon[] = [];
const connections: RuntimedConnection[] = [];
const specDirs: string[] = [];

afterEach(async () => {
  for (const connection of connections.splice(0)) connection.close();
  for (const daemon of daemons.splice(0)) await daemon.dispose();
  for (const dir of specDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

async function waitFor<T>(
  read: () => Promise<T>,
  accept: (value: T) => boolean,
  what: string,
  timeoutMs = 60_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (accept(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; last: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function open(d: TestDaemon, path: string) {
  const opened = await d.connect({ channel: 'notebook', mode: 'open', path, peer_label: 'kernel-test' });
  connections.push(opened.connection);
  await waitFor(
    async () => ((await opened.connection.request({ type: 'get_runtime' })).runtime as { state: string }).state,
    (state) => state === 'ready' || state === 'unavailable',
    'the kernel',
  );
  return opened.connection;
}

/** Inserts a cell, executes it, and waits until the execution has finished. */
async function run(connection: RuntimedConnection, source: string) {
  const { cell } = (await connection.request({ type: 'insert_cell', source })) as { cell: { id: string } };
  const started = await connection.request({ type: 'execute_cell', cell_id: cell.id });
  return waitFor(
    () => connection.request({ type: 'get_execution', execution_id: started.execution_id }),
    (execution) => execution.status !== 'queued' && execution.status !== 'running',
    `execution of ${source}`,
  );
}

function streamText(execution: Record<string, unknown>): string {
  return (execution.outputs as { output_type: string; text?: string }[])
    .filter((output) => output.output_type === 'stream')
    .map((output) => output.text)
    .join('');
}

describe('runtimed with real ipykernel kernels', () => {
  it('runs code, keeps state between cells, and writes outputs and errors into the cells', {
    timeout: 120_000,
  }, async () => {
    const d = await startTestDaemon(['--keep-alive-ms', '60000']);
    daemons.push(d);
    const connection = await open(d, join(d.dir, 'run.ipynb'));
    expect((await run(connection, 'x = 41')).status).toBe('ok');
    const printed = await run(connection, 'print(x + 1)');
    expect(streamText(printed)).toBe('42\n');
    const failed = await run(connection, '1/0');
    expect(failed.status).toBe('error');
    expect(failed.outputs).toEqual([expect.objectContaining({ output_type: 'error', ename: 'ZeroDivisionError' })]);
    const cells = (await connection.request({ type: 'get_cells' })).cells as {
      outputs: unknown[];
      execution_count: number | null;
    }[];
    expect(cells[1]?.outputs).toEqual([expect.objectContaining({ output_type: 'stream', text: '42\n' })]);
    expect(cells[1]?.execution_count).toBe(2);
  });

  it('interrupts a running loop', { timeout: 120_000 }, async () => {
    const d = await startTestDaemon(['--keep-alive-ms', '60000']);
    daemons.push(d);
    const connection = await open(d, join(d.dir, 'loop.ipynb'));
    const { cell } = (await connection.request({ type: 'insert_cell', source: 'while True: pass' })) as {
      cell: { id: string };
    };
    const started = await connection.request({ type: 'execute_cell', cell_id: cell.id });
    await waitFor(
      () => connection.request({ type: 'get_execution', execution_id: started.execution_id }),
      (e) => e.status === 'running',
      'running',
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect((await connection.request({ type: 'interrupt' })).interrupted).toBe(true);
    const done = await waitFor(
      () => connection.request({ type: 'get_execution', execution_id: started.execution_id }),
      (e) => e.status !== 'running' && e.status !== 'queued',
      'the interrupt',
    );
    expect(done.outputs).toEqual([expect.objectContaining({ ename: 'KeyboardInterrupt' })]);
    expect(streamText(await run(connection, 'print("alive")'))).toBe('alive\n');
  });

  it('keeps the kernel for a peer that rejoins within keep-alive, and tears it down after, keeping the room', {
    timeout: 120_000,
  }, async () => {
    const d = await startTestDaemon(['--keep-alive-ms', '1500']);
    daemons.push(d);
    const path = join(d.dir, 'keep.ipynb');
    const first = await open(d, path);
    await run(first, 'x = 41');
    // Clean departures (`leave`): the normal keep-alive applies.
    await first.request({ type: 'leave' });
    await new Promise((resolve) => setTimeout(resolve, 300));
    const second = await open(d, path);
    expect(streamText(await run(second, 'print(x + 1)'))).toBe('42\n');
    await second.request({ type: 'leave' });
    const listed = await waitFor(
      async () => (await d.control({ type: 'list_rooms' })).rooms as WireRoomInfo[],
      (rooms) => rooms.length === 1 && rooms[0]?.has_kernel === false,
      'the kernel teardown',
      30_000,
    );
    expect(listed[0]).toMatchObject({ active_peers: 0, notebook_path: path });
    const third = await open(d, path);
    const after = await run(third, 'print(x)');
    expect(after.outputs).toEqual([expect.objectContaining({ ename: 'NameError' })]);
  });

  it('reports the runtime as unavailable without a usable kernelspec, and lifecycle still works', {
    timeout: 60_000,
  }, async () => {
    const d = await startTestDaemon(['--python', '/nonexistent/python3', '--kernelspec-dir', '/nonexistent/kernels']);
    daemons.push(d);
    const opened = await d.connect({
      channel: 'notebook',
      mode: 'open',
      path: join(d.dir, 'u.ipynb'),
      peer_label: 'x',
    });
    connections.push(opened.connection);
    const runtime = await waitFor(
      async () =>
        (await opened.connection.request({ type: 'get_runtime' })).runtime as { state: string; reason?: string },
      (value) => value.state !== 'starting' && value.state !== 'not_started',
      'the runtime state',
    );
    expect(runtime.state).toBe('unavailable');
    expect(runtime.reason).toMatch(/ipykernel/);
    const { cell } = (await opened.connection.request({ type: 'insert_cell', source: '1' })) as {
      cell: { id: string };
    };
    await expect(opened.connection.request({ type: 'execute_cell', cell_id: cell.id })).rejects.toMatchObject({
      code: 'runtime_unavailable',
    });
    expect(((await opened.connection.request({ type: 'get_cells' })).cells as unknown[]).length).toBe(1);
  });

  it('lists the installed kernelspecs, creates a notebook for a named one, and refuses an unknown name naming the installed', {
    timeout: 120_000,
  }, async () => {
    const specs = kernelspecDir();
    const d = await startTestDaemon(['--keep-alive-ms', '60000', '--kernelspec-dir', specs]);
    daemons.push(d);
    const listed = (await d.control({ type: 'list_kernels' })).kernels as WireKernelspec[];
    expect(listed).toEqual([
      {
        name: 'broken-r',
        display_name: 'Broken R',
        language: 'R',
        resource_dir: join(specs, 'broken-r'),
        available: false,
        reason: expect.stringContaining('/nonexistent/R was not found'),
      },
      {
        name: 'py-alt',
        display_name: 'Alt Python',
        language: 'python',
        resource_dir: join(specs, 'py-alt'),
        available: true,
        interpreter: expect.stringMatching(/^\/.*python/),
      },
      {
        name: 'python3',
        display_name: 'Python 3 (ipykernel)',
        language: 'python',
        resource_dir: null,
        available: true,
        interpreter: expect.stringMatching(/^\/.*python/),
      },
    ]);

    const created = await d.connect({
      channel: 'notebook',
      mode: 'create',
      peer_label: 'kernel-test',
      kernel: 'py-alt',
      working_dir: d.dir,
    });
    connections.push(created.connection);
    expect(created.greeting.kernel_name).toBe('py-alt');
    expect(streamText(await run(created.connection, 'import os; print(os.environ.get("ALT_FLAG"))'))).toBe('alt\n');

    const unknown = await d
      .connect({ channel: 'notebook', mode: 'create', peer_label: 'kernel-test', kernel: 'nope', working_dir: d.dir })
      .catch((error: unknown) => error);
    expect(unknown).toMatchObject({ code: 'bad_request' });
    expect((unknown as Error).message).toContain(
      "No Jupyter kernel named 'nope' is installed. Installed kernels: py-alt (Alt Python, python), python3 (Python 3 (ipykernel), python).",
    );
    const unrunnable = await d
      .connect({
        channel: 'notebook',
        mode: 'create',
        peer_label: 'kernel-test',
        kernel: 'broken-r',
        working_dir: d.dir,
      })
      .catch((error: unknown) => error);
    expect((unrunnable as Error).message).toMatch(
      /'broken-r' is installed but cannot run \(.*\/nonexistent\/R was not found/,
    );
  });

  it("serves two clients with different environments: each room's kernel has its creator's environment and cwd, also for a client joining later", {
    timeout: 120_000,
  }, async () => {
    const d = await startTestDaemon(['--keep-alive-ms', '60000']);
    daemons.push(d);
    const dirOf = (name: string): string => {
      const dir = join(d.dir, name);
      mkdirSync(dir, { recursive: true });
      return dir;
    };
    const clientOf = (who: string) => ({
      cwd: dirOf(who),
      env: { PATH: process.env.PATH ?? '/usr/bin', WHO: who, NTERACT_MCP_INTERNAL: 'x' },
    });
    const create = async (who: string) => {
      const created = await d.connect({
        channel: 'notebook',
        mode: 'create',
        peer_label: who,
        working_dir: dirOf(who),
        client: clientOf(who),
      });
      connections.push(created.connection);
      return created;
    };
    const probe = 'import os; print(os.environ.get("WHO"), os.getcwd(), "NTERACT_MCP_INTERNAL" in os.environ)';
    const alice = await create('alice');
    const bob = await create('bob');
    expect(streamText(await run(alice.connection, probe))).toBe(`alice ${join(d.dir, 'alice')} False\n`);
    expect(streamText(await run(bob.connection, probe))).toBe(`bob ${join(d.dir, 'bob')} False\n`);

    // Bob joins Alice's notebook: her kernel, with her environment.
    const joined = await d.connect({
      channel: 'notebook',
      mode: 'attach',
      notebook_id: String(alice.greeting.notebook_id),
      peer_label: 'bob',
      client: clientOf('bob'),
    });
    connections.push(joined.connection);
    expect(streamText(await run(joined.connection, probe))).toBe(`alice ${join(d.dir, 'alice')} False\n`);

    const rooms = (await d.control({ type: 'list_rooms' })).rooms as WireRoomInfo[];
    expect(rooms.find((room) => room.notebook_id === alice.greeting.notebook_id)).toMatchObject({
      working_dir: join(d.dir, 'alice'),
      kernel_interpreter: expect.stringMatching(/^\/.*python/),
    });
  });

  it('runs a notebook in its own kernelspec, falls back to a kernel of its language, and says which are installed when none fits', {
    timeout: 120_000,
  }, async () => {
    const specs = kernelspecDir();
    const d = await startTestDaemon(['--keep-alive-ms', '60000', '--kernelspec-dir', specs]);
    daemons.push(d);
    const notebook = (name: string, kernelspec: Record<string, string>): string => {
      const path = join(d.dir, `${name}.ipynb`);
      writeFileSync(path, JSON.stringify({ cells: [], metadata: { kernelspec }, nbformat: 4, nbformat_minor: 5 }));
      return path;
    };
    const own = await open(d, notebook('own', { name: 'py-alt', display_name: 'Alt Python', language: 'python' }));
    expect(streamText(await run(own, 'import os; print(os.environ.get("ALT_FLAG"))'))).toBe('alt\n');

    const fallback = await open(
      d,
      notebook('env', { name: 'conda-env-gone-py', display_name: 'Gone', language: 'python' }),
    );
    expect(streamText(await run(fallback, 'print(6 * 7)'))).toBe('42\n');

    const other = await d.connect({
      channel: 'notebook',
      mode: 'open',
      path: notebook('cobol', { name: 'cobol', display_name: 'COBOL', language: 'cobol' }),
      peer_label: 'kernel-test',
    });
    connections.push(other.connection);
    const runtime = await waitFor(
      async () =>
        (await other.connection.request({ type: 'get_runtime' })).runtime as { state: string; reason?: string },
      (value) => value.state === 'unavailable' || value.state === 'ready',
      'the runtime state',
    );
    expect(runtime.state).toBe('unavailable');
    expect(runtime.reason).toContain("No usable Jupyter kernelspec named 'cobol'");
    expect(runtime.reason).toContain(
      'Installed kernels: py-alt (Alt Python, python), python3 (Python 3 (ipykernel), python).',
    );
  });

  it('cancels one execution: a queued one never runs, the running one is interrupted, the kernel goes on', {
    timeout: 120_000,
  }, async () => {
    const d = await startTestDaemon(['--keep-alive-ms', '60000']);
    daemons.push(d);
    const connection = await open(d, join(d.dir, 'cancel.ipynb'));
    const insert = async (source: string) =>
      ((await connection.request({ type: 'insert_cell', source })) as { cell: { id: string } }).cell.id;
    const slow = await connection.request({
      type: 'execute_cell',
      cell_id: await insert('import time\nprint("started", flush=True)\ntime.sleep(600)'),
    });
    const queued = await connection.request({ type: 'execute_cell', cell_id: await insert('print("never")') });
    const state = (execution: RuntimedFrame) =>
      connection.request({ type: 'get_execution', execution_id: execution.execution_id });
    // Running in the kernel, not only sent to it: ipykernel ignores an interrupt until a cell runs.
    await waitFor(
      () => state(slow),
      (e) => e.status === 'running' && JSON.stringify(e.outputs).includes('started'),
      'the slow cell to run',
    );

    expect(await connection.request({ type: 'cancel_execution', execution_id: queued.execution_id })).toMatchObject({
      cancelled: 'dequeued',
    });
    expect(await state(queued)).toMatchObject({
      status: 'aborted',
      outputs: [expect.objectContaining({ ename: 'ExecutionCancelled' })],
    });
    expect((await state(slow)).status).toBe('running');

    expect(await connection.request({ type: 'cancel_execution', execution_id: slow.execution_id })).toMatchObject({
      cancelled: 'interrupted',
    });
    const interrupted = await waitFor(
      () => state(slow),
      (e) => e.status !== 'running',
      'the interrupt',
    );
    expect(interrupted.outputs).toEqual([
      expect.objectContaining({ output_type: 'stream', text: 'started\n' }),
      expect.objectContaining({ ename: 'KeyboardInterrupt' }),
    ]);
    expect(await connection.request({ type: 'cancel_execution', execution_id: slow.execution_id })).toMatchObject({
      cancelled: 'none',
    });
    // (IPython may print a history-database note first when kernels of one HOME start together.)
    expect(streamText(await run(connection, 'print("alive")'))).toMatch(/(^|\n)alive\n$/);
    await expect(connection.request({ type: 'cancel_execution', execution_id: 'no-such' })).rejects.toMatchObject({
      code: 'bad_request',
    });
  });
});

describe('cancelling code that ignores the interrupt', () => {
  it('answers still_running, not interrupted: the code goes on', { timeout: 180_000 }, async () => {
    const d = await startTestDaemon(['--keep-alive-ms', '60000']);
    daemons.push(d);
    const connection = await open(d, join(d.dir, 'stubborn.ipynb'));
    const { cell } = (await connection.request({
      type: 'insert_cell',
      source:
        'import signal, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nprint("started", flush=True)\ntime.sleep(600)',
    })) as { cell: { id: string } };
    const stubborn = await connection.request({ type: 'execute_cell', cell_id: cell.id });
    const state = () => connection.request({ type: 'get_execution', execution_id: stubborn.execution_id });
    await waitFor(
      state,
      (e) => e.status === 'running' && JSON.stringify(e.outputs).includes('started'),
      'the cell to ignore SIGINT',
    );
    expect(await connection.request({ type: 'cancel_execution', execution_id: stubborn.execution_id })).toMatchObject({
      cancelled: 'still_running',
    });
    expect((await state()).status).toBe('running');
  });
});

/** A kernelspec dir: `py-alt` (ipykernel on /usr/bin/python3, with an env of its own) and `broken-r` (a missing R). */
function kernelspecDir(): string {
  const dir = join(mkdtempSync(join(tmpdir(), 'rtd-specs-')));
  specDirs.push(dir);
  const write = (name: string, spec: unknown): void => {
    mkdirSync(join(dir, name), { recursive: true });
    writeFileSync(join(dir, name, 'kernel.json'), JSON.stringify(spec));
  };
  write('py-alt', {
    argv: ['/usr/bin/python3', '-m', 'ipykernel_launcher', '-f', '{connection_file}'],
    display_name: 'Alt Python',
    language: 'python',
    env: { ALT_FLAG: 'alt' },
  });
  write('broken-r', {
    argv: ['/nonexistent/R', '--slave', '-e', 'IRkernel::main()', '--args', '{connection_file}'],
    display_name: 'Broken R',
    language: 'R',
  });
  return dir;
}
