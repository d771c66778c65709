import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { RuntimedConnection } from '@nteract-mcp/runtimed-protocol';
import { afterEach, describe, expect, it } from 'vitest';

/** The `runtimed` users get: the distribution's bin. */
const runtimed = fileURLToPath(new URL('../packages/nteract-mcp/dist/runtimed.js', import.meta.url));

interface Sandbox {
  readonly root: string;
  readonly env: NodeJS.ProcessEnv;
  readonly socketDir: string;
  readonly socketPath: string;
  readonly dataDir: string;
}

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A fresh HOME and XDG dirs; the daemon's socket and data dir follow from them (no RUNTIMED_SOCKET_PATH). */
function sandbox(): Sandbox {
  const root = mkdtempSync(join(tmpdir(), 'dsg-'));
  const home = join(root, 'home');
  const runtimeDir = join(root, 'run');
  mkdirSync(home);
  mkdirSync(runtimeDir, { mode: 0o700 });
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    HOME: home,
    XDG_RUNTIME_DIR: runtimeDir,
    XDG_DATA_HOME: join(home, '.local', 'share'),
    XDG_CACHE_HOME: join(home, '.cache'),
    XDG_CONFIG_HOME: join(home, '.config'),
    RUNTIMED_SOCKET_PATH: '',
  };
  const box: Sandbox = {
    root,
    env,
    socketDir: join(runtimeDir, 'runt'),
    socketPath: join(runtimeDir, 'runt', 'runtimed.sock'),
    dataDir: join(home, '.local', 'share', 'runt'),
  };
  cleanups.push(() => rmSync(root, { recursive: true, force: true }));
  // Whatever a test leaves running on this sandbox (answering or not) is stopped.
  cleanups.push(() => cli(box, ['stop']));
  return box;
}

/** Runs the shipped `runtimed` with the sandbox's environment. */
function cli(box: Sandbox, args: readonly string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [runtimed, ...args], { env: box.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** `runtimed start` (detached, as users and the child run it); resolves with the new daemon's pid. */
async function start(box: Sandbox, args: readonly string[] = ['--no-kernels']): Promise<number> {
  const result = await cli(box, ['start', ...args]);
  const pid = Number(/runtimed started \(pid (\d+)/.exec(result.stdout)?.[1]);
  if (result.code !== 0 || !Number.isInteger(pid))
    throw new Error(`runtimed start failed (${result.code}):\n${result.stdout}${result.stderr}`);
  cleanups.push(() => killIfAlive(pid));
  return pid;
}

/** The state letter of `/proc/<pid>/stat` (`Z` for a zombie), or `undefined` when there is no such process. */
function stateOf(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0];
  } catch {
    return undefined;
  }
}

/** Gone: no such process, or a zombie (this machine's init may never reap). */
function isGone(pid: number): boolean {
  const state = stateOf(pid);
  return state === undefined || state === 'Z' || state === 'X';
}

function killIfAlive(pid: number, group = false): void {
  if (isGone(pid)) return;
  try {
    process.kill(group ? -pid : pid, 'SIGKILL');
  } catch {
    // Gone in between.
  }
}

function track(child: ChildProcess): ChildProcess {
  cleanups.push(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  return child;
}

async function waitFor<T>(read: () => T | Promise<T>, accept: (value: T) => boolean, what: string, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (accept(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; last: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The pid of the daemon answering a real ping on `socketPath`, or `undefined`. */
async function ping(socketPath: string): Promise<number | undefined> {
  try {
    const { connection, greeting } = await RuntimedConnection.open({
      socketPath,
      handshake: { channel: 'control' },
      timeoutMs: 5000,
    });
    try {
      const answer = await connection.request({ type: 'ping' });
      return answer.pong === true ? Number(greeting.pid) : undefined;
    } finally {
      connection.close();
    }
  } catch {
    return undefined;
  }
}

/** Opens `path` in a room, inserts a cell with `source`, and disconnects. */
async function editNotebook(box: Sandbox, path: string, source: string): Promise<void> {
  const { connection } = await RuntimedConnection.open({
    socketPath: box.socketPath,
    handshake: { channel: 'notebook', mode: 'open', path, peer_label: 'daemon-singleton-test' },
    timeoutMs: 10_000,
  });
  try {
    await connection.request({ type: 'insert_cell', source });
  } finally {
    connection.close();
  }
}

function writeLock(path: string, content: string): void {
  mkdirSync(join(path, '..'), { recursive: true, mode: 0o700 });
  writeFileSync(path, content, { mode: 0o600 });
}

/** An interpreter that can run ipykernel (Debian's python3-ipykernel lives under /usr/bin/python3). */
function ipykernelPython(): string {
  for (const candidate of ['/usr/bin/python3', 'python3']) {
    if (spawnSync(candidate, ['-c', 'import ipykernel'], { stdio: 'ignore' }).status === 0) return candidate;
  }
  throw new Error('no interpreter here can import ipykernel; install python3-ipykernel');
}

/** Opens a notebook, waits for its kernel and returns the kernel's own pid (from the kernel itself). */
async function kernelPid(box: Sandbox, path: string): Promise<{ pid: number; close: () => void }> {
  const { connection } = await RuntimedConnection.open({
    socketPath: box.socketPath,
    handshake: { channel: 'notebook', mode: 'open', path, peer_label: 'daemon-singleton-test' },
    timeoutMs: 10_000,
  });
  cleanups.push(() => connection.close());
  const runtime = await waitFor(
    async () => (await connection.request({ type: 'get_runtime' })).runtime as { state: string; reason?: string },
    (found) => found.state === 'ready' || found.state === 'unavailable',
    'the kernel',
    120_000,
  );
  if (runtime.state !== 'ready') throw new Error(`no kernel: ${runtime.reason}`);
  const { cell } = (await connection.request({ type: 'insert_cell', source: 'import os; print(os.getpid())' })) as {
    cell: { id: string };
  };
  const { execution_id } = await connection.request({ type: 'execute_cell', cell_id: cell.id });
  const execution = await waitFor(
    () => connection.request({ type: 'get_execution', execution_id }),
    (found) => found.status === 'ok' || found.status === 'error',
    'the pid cell',
    120_000,
  );
  const text = (execution.outputs as { text?: string }[]).map((output) => output.text ?? '').join('');
  const pid = Number(text.trim());
  if (!Number.isInteger(pid) || pid <= 0)
    throw new Error(`the kernel did not print its pid: ${JSON.stringify(execution)}`);
  cleanups.push(() => killIfAlive(pid));
  return { pid, close: () => connection.close() };
}

describe('runtimed singleton: real deaths (shipped bin, real processes)', () => {
  it('starts at once over a SIGKILLed daemon that nobody reaps (a zombie)', { timeout: 120_000 }, async () => {
    const box = sandbox();
    // `exec sleep` replaces the shell: the daemon's parent is a process that never reaps it.
    const holder = track(
      spawn(
        'sh',
        [
          '-c',
          `"$0" "$1" start --foreground --no-kernels 2>"$2" & echo $!; exec sleep 600`,
          process.execPath,
          runtimed,
          join(box.root, 'first.log'),
        ],
        { env: box.env, stdio: ['ignore', 'pipe', 'inherit'] },
      ),
    );
    const first = await new Promise<number>((resolve) =>
      holder.stdout?.once('data', (chunk: Buffer) => resolve(Number(chunk.toString().trim()))),
    );
    cleanups.push(() => killIfAlive(first));
    await waitFor(
      () => ping(box.socketPath),
      (pid) => pid === first,
      'the first daemon',
    );

    process.kill(first, 'SIGKILL');
    await waitFor(
      () => stateOf(first),
      (state) => state === 'Z',
      'the killed daemon to be a zombie',
    );
    expect(() => process.kill(first, 0)).not.toThrow();

    const second = await start(box);
    expect(second).not.toBe(first);
    expect(await ping(box.socketPath)).toBe(second);
    // Nobody reaped the first daemon: the start did not wait for that.
    expect(stateOf(first)).toBe('Z');
  });

  it('is not blocked by a lock naming a live unrelated process (a reused pid), and leaves that process alone', {
    timeout: 120_000,
  }, async () => {
    const box = sandbox();
    const unrelated = track(spawn('sleep', ['600'], { stdio: 'ignore' }));
    await new Promise((resolve) => unrelated.once('spawn', resolve));
    const pid = unrelated.pid as number;
    const bootId = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
    const stale = `${JSON.stringify({ pid, start_time: 'proc:1', boot_id: bootId, nonce: 'old', socket: box.socketPath, state: 'serving' })}\n`;
    writeLock(join(box.socketDir, 'daemon.lock'), stale);
    writeLock(join(box.dataDir, 'daemon.lock'), stale);

    const daemon = await start(box);
    expect(await ping(box.socketPath)).toBe(daemon);
    expect(stateOf(pid)).toMatch(/^[RS]$/);
    expect(unrelated.exitCode === null && unrelated.signalCode === null).toBe(true);
    expect(JSON.parse(readFileSync(join(box.dataDir, 'daemon.lock'), 'utf8')).pid).toBe(daemon);
  });

  it("takes over an older version's pid-only lock on a live unrelated process without signalling it", {
    timeout: 120_000,
  }, async () => {
    const box = sandbox();
    const unrelated = track(spawn('sleep', ['600'], { stdio: 'ignore' }));
    await new Promise((resolve) => unrelated.once('spawn', resolve));
    const pid = unrelated.pid as number;
    writeLock(join(box.socketDir, 'daemon.lock'), `${pid}\n`);
    writeLock(join(box.dataDir, 'daemon.lock'), `${pid}\n`);

    const daemon = await start(box);
    expect(await ping(box.socketPath)).toBe(daemon);
    expect(unrelated.exitCode === null && unrelated.signalCode === null).toBe(true);
    expect(readFileSync(join(box.socketDir, 'runtimed.log'), 'utf8')).toMatch(/identity cannot be verified/);
  });

  it('exits by itself, having saved, when its socket directory is deleted; a new start then works', {
    timeout: 120_000,
  }, async () => {
    const box = sandbox();
    const notebook = join(box.root, 'work', 'kept.ipynb');
    mkdirSync(join(box.root, 'work'));
    // Autosave far away: only the orderly shutdown can have written the cell.
    const first = await start(box, ['--no-kernels', '--autosave-debounce-ms', '600000', '--autosave-max-ms', '600000']);
    await editNotebook(box, notebook, 'print("saved on the way out")');
    expect(readFileSync(notebook, 'utf8')).not.toContain('saved on the way out');

    rmSync(box.socketDir, { recursive: true, force: true });
    await waitFor(() => isGone(first), Boolean, 'the unreachable daemon to exit by itself');
    expect(readFileSync(notebook, 'utf8')).toContain('saved on the way out');
    expect(existsSync(join(box.dataDir, 'daemon.lock'))).toBe(false);

    const second = await start(box);
    expect(await ping(box.socketPath)).toBe(second);
  });

  it('exits by itself when its socket file is replaced by another file, and leaves that file alone', {
    timeout: 120_000,
  }, async () => {
    const box = sandbox();
    const first = await start(box);
    rmSync(box.socketPath);
    writeFileSync(box.socketPath, 'not a socket');
    await waitFor(() => isGone(first), Boolean, 'the daemon to notice its socket was replaced');
    expect(readFileSync(box.socketPath, 'utf8')).toBe('not a socket');
    const second = await start(box);
    expect(await ping(box.socketPath)).toBe(second);
  });

  it('stop returns once the daemon has exited, having saved its notebooks, not when it stops answering', {
    timeout: 120_000,
  }, async () => {
    const box = sandbox();
    const daemon = await start(box);
    // A notebook with an edit: the daemon saves it on its way out, and then releases its locks.
    const path = join(box.root, 'saved-on-stop.ipynb');
    await editNotebook(box, path, 'kept_on_stop = 1');
    const stop = await cli(box, ['stop']);
    expect(stop.code, stop.stderr).toBe(0);
    expect(stop.stdout).toContain(`runtimed stopped (pid ${daemon})`);
    expect(isGone(daemon)).toBe(true);
    expect(readFileSync(path, 'utf8')).toContain('kept_on_stop = 1');
  });

  it('status and stop tell the truth about a live daemon that does not answer, and stop it by its pid', {
    timeout: 120_000,
  }, async () => {
    const box = sandbox();
    // --socket-check-ms 0: the daemon does not notice, so it stays alive and unreachable.
    const daemon = await start(box, ['--no-kernels', '--socket-check-ms', '0']);
    rmSync(box.socketPath);
    writeFileSync(box.socketPath, 'someone else');

    const status = await cli(box, ['status']);
    expect(status.code).toBe(1);
    expect(status.stdout).toContain(`runtimed is running (pid ${daemon}) but not answering on ${box.socketPath}`);
    const json = await cli(box, ['status', '--json']);
    expect(JSON.parse(json.stdout)).toMatchObject({ running: true, answering: false, verified: true, pid: daemon });
    expect(isGone(daemon)).toBe(false);

    const stop = await cli(box, ['stop']);
    expect(stop.code).toBe(0);
    expect(stop.stdout).toContain(`runtimed stopped (pid ${daemon}; it was not answering on ${box.socketPath})`);
    expect(isGone(daemon)).toBe(true);
    expect((await cli(box, ['status'])).code).toBe(3);
    expect(readFileSync(box.socketPath, 'utf8')).toBe('someone else');
  });

  it('a new start stops a live daemon that holds the data-dir lock but is unreachable, after it saved', {
    timeout: 120_000,
  }, async () => {
    const box = sandbox();
    const notebook = join(box.root, 'taken-over.ipynb');
    const first = await start(box, [
      '--no-kernels',
      '--socket-check-ms',
      '0',
      '--autosave-debounce-ms',
      '600000',
      '--autosave-max-ms',
      '600000',
    ]);
    await editNotebook(box, notebook, 'x = "saved when replaced"');
    // The whole socket directory goes (and the lock beside the socket with it): only the data-dir
    // lock still names the first daemon.
    rmSync(box.socketDir, { recursive: true, force: true });

    const second = await start(box);
    expect(second).not.toBe(first);
    expect(isGone(first)).toBe(true);
    expect(await ping(box.socketPath)).toBe(second);
    expect(readFileSync(notebook, 'utf8')).toContain('saved when replaced');
    expect(readFileSync(join(box.socketDir, 'runtimed.log'), 'utf8')).toMatch(
      /does not answer on its socket; stopping it/,
    );
  });
});

describe('runtimed: no orphan kernels (real ipykernel)', () => {
  it('a SIGKILLed daemon leaves no kernel running once the next daemon has started', { timeout: 240_000 }, async () => {
    const box = sandbox();
    const first = await start(box, ['--keep-alive-secs', '600']);
    const kernel = await kernelPid(box, join(box.root, 'k.ipynb'));
    const records = readdirSync(join(box.dataDir, 'kernels'));
    expect(records).toHaveLength(1);
    const record = JSON.parse(readFileSync(join(box.dataDir, 'kernels', records[0] as string), 'utf8'));
    expect(existsSync(record.connection_file)).toBe(true);
    kernel.close();

    process.kill(first, 'SIGKILL');
    await waitFor(() => isGone(first), Boolean, 'the daemon to die');
    const second = await start(box);
    expect(await ping(box.socketPath)).toBe(second);
    await waitFor(() => isGone(kernel.pid), Boolean, 'the orphaned kernel to be gone');
    expect(existsSync(record.connection_file)).toBe(false);
    expect(readdirSync(join(box.dataDir, 'kernels'))).toEqual([]);
  });

  it('the next daemon stops a kernel that cannot notice its daemon died (a wrapper kernelspec)', {
    timeout: 240_000,
  }, async () => {
    const box = sandbox();
    // Like conda/uv wrappers: the kernel's parent is the wrapper shell, not the daemon, so the
    // kernel's own parent check never fires when the daemon dies.
    const specDir = join(box.root, 'kernelspecs');
    mkdirSync(join(specDir, 'python3'), { recursive: true });
    writeFileSync(
      join(specDir, 'python3', 'kernel.json'),
      JSON.stringify({
        argv: ['sh', '-c', `${ipykernelPython()} -m ipykernel_launcher -f "$0"; exit $?`, '{connection_file}'],
        display_name: 'wrapped python',
        language: 'python',
      }),
    );
    const first = await start(box, ['--kernelspec-dir', specDir, '--keep-alive-secs', '600']);
    const kernel = await kernelPid(box, join(box.root, 'w.ipynb'));
    const [recordName] = readdirSync(join(box.dataDir, 'kernels'));
    const record = JSON.parse(readFileSync(join(box.dataDir, 'kernels', recordName as string), 'utf8'));
    cleanups.push(() => killIfAlive(record.pid, true));
    expect(record.pid).not.toBe(kernel.pid);
    kernel.close();

    process.kill(first, 'SIGKILL');
    await waitFor(() => isGone(first), Boolean, 'the daemon to die');
    expect(isGone(kernel.pid)).toBe(false);

    const second = await start(box, ['--kernelspec-dir', specDir]);
    expect(await ping(box.socketPath)).toBe(second);
    await waitFor(() => isGone(kernel.pid), Boolean, 'the next daemon to stop the orphaned kernel');
    expect(readFileSync(join(box.socketDir, 'runtimed.log'), 'utf8')).toMatch(
      /stopped an orphaned kernel of a previous daemon.*"previousDaemon":\d+/,
    );
    expect(existsSync(record.connection_dir)).toBe(false);
    expect(readdirSync(join(box.dataDir, 'kernels'))).toEqual([]);
  });
});
