import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { RuntimedConnection, type RuntimedFrame, type RuntimedHandshake } from '@nteract-mcp/runtimed-protocol';

/** A real `runtimed` process in a temporary directory, for tests. */
export interface TestDaemon {
  readonly dir: string;
  readonly socketPath: string;
  readonly dataDir: string;
  readonly process: ChildProcess;
  /** Everything the daemon wrote to stderr so far. */
  stderr(): string;
  /** Opens a client connection; resolves with it and the greeting. */
  connect(handshake: RuntimedHandshake): Promise<{ connection: RuntimedConnection; greeting: RuntimedFrame }>;
  /** A control-channel request on a fresh connection. */
  control(request: Readonly<Record<string, unknown>> & { readonly type: string }): Promise<RuntimedFrame>;
  /** SIGTERM and wait for exit. */
  stop(): Promise<number | null>;
  /** SIGKILL (leaves socket and locks behind, like a crash) and wait for exit. */
  kill(): Promise<void>;
  /** A new daemon process on the same socket and data dir (after stop/kill). */
  restart(extraArgs?: readonly string[]): Promise<TestDaemon>;
  /** Stops the daemon if running and removes the temporary directory. */
  dispose(): Promise<void>;
}

/** The built `runtimed` bin, found through the package itself so this works from src and from dist. */
const entry = join(
  dirname(createRequire(import.meta.url).resolve('@nteract-mcp/daemon/package.json')),
  'dist',
  'runtimed.js',
);

/** Starts `runtimed start --foreground` with a private socket and data dir and waits until it answers. */
export async function startTestDaemon(args: readonly string[] = [], reuse?: { dir: string }): Promise<TestDaemon> {
  const dir = reuse?.dir ?? mkdtempSync(join(tmpdir(), 'rtd-'));
  const socketPath = join(dir, 'run', 'd.sock');
  const dataDir = join(dir, 'data');
  const child = spawn(
    process.execPath,
    [entry, 'start', '--foreground', '--socket', socketPath, '--data-dir', dataDir, ...args],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, RUNTIMED_SOCKET_PATH: '' },
    },
  );
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  let stdout = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let alive = true;
  void exited.then(() => {
    alive = false;
  });
  // A test waits for the daemon's answer, however loaded the machine: the bound only keeps a hung daemon from hanging the test.
  const connect = (handshake: RuntimedHandshake) =>
    RuntimedConnection.open({ socketPath, handshake, timeoutMs: 30_000 });
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (!alive) throw new Error(`runtimed exited during start-up:\n${stderr}${stdout}`);
    try {
      const { connection } = await connect({ channel: 'control' });
      connection.close();
      break;
    } catch {
      if (Date.now() > deadline) throw new Error(`runtimed did not answer within 60 s:\n${stderr}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  const daemon: TestDaemon = {
    dir,
    socketPath,
    dataDir,
    process: child,
    stderr: () => stderr,
    connect,
    control: async (request) => {
      const { connection } = await connect({ channel: 'control' });
      try {
        return await connection.request(request);
      } finally {
        connection.close();
      }
    },
    stop: async () => {
      if (alive) child.kill('SIGTERM');
      return exited;
    },
    kill: async () => {
      if (alive) child.kill('SIGKILL');
      await exited;
    },
    restart: (extraArgs = args) => startTestDaemon(extraArgs, { dir }),
    dispose: async () => {
      if (alive) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
        await exited;
        clearTimeout(timer);
      }
      // A file written as the directory goes (another process's last word) makes one pass fail: try again.
      if (!reuse) rmSync(dir, { recursive: true, force: true, maxRetries: 5 });
    },
  };
  return daemon;
}
