import { mkdtemp, readFile, realpath, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RecordingLogger } from '@nteract-mcp/foundation/testing';
import type { WireOutput } from '@nteract-mcp/runtimed-protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { DaemonError } from '../daemon-error.js';
import { findKernelspec, type Kernelspec } from './find-kernelspec.js';
import { JupyterKernel, type KernelExecution, type KernelExitInfo, type KernelStatus } from './jupyter-kernel.js';

const kernelTest = { timeout: 60_000 };
const kernels: JupyterKernel[] = [];
const tempDirs: string[] = [];
let specPromise: Promise<Kernelspec> | undefined;

function pythonSpec(): Promise<Kernelspec> {
  specPromise ??= findKernelspec().then((resolution) => {
    if (resolution.kind !== 'found') throw new Error(resolution.reason);
    return resolution.spec;
  });
  return specPromise;
}

async function tempDir(): Promise<string> {
  const dir = await realpath(await mkdtemp(join(tmpdir(), 'kernel-test-')));
  tempDirs.push(dir);
  return dir;
}

async function startKernel(
  overrides: Partial<Kernelspec> = {},
): Promise<{ kernel: JupyterKernel; cwd: string; logger: RecordingLogger }> {
  const cwd = await tempDir();
  const logger = new RecordingLogger();
  const kernel = await JupyterKernel.start({ spec: { ...(await pythonSpec()), ...overrides }, cwd, logger });
  kernels.push(kernel);
  return { kernel, cwd, logger };
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function plainText(output: WireOutput | undefined): unknown {
  return (output?.data as Record<string, unknown> | undefined)?.['text/plain'];
}

function nextStatus(kernel: JupyterKernel, wanted: KernelStatus): Promise<void> {
  return new Promise((resolve) => {
    const subscription = kernel.onStatus((status) => {
      if (status !== wanted) return;
      subscription.dispose();
      resolve();
    });
  });
}

/**
 * Starts code that prints, then sleeps until interrupted, noting the interrupt in `interrupted`
 * (in the kernel's cwd). `started` resolves on the first output: by then the code runs, so
 * ipykernel's SIGINT handler is in place.
 */
function startSleeper(kernel: JupyterKernel): { result: Promise<KernelExecution>; started: Promise<void> } {
  let markStarted: () => void = () => undefined;
  const started = new Promise<void>((resolve) => {
    markStarted = resolve;
  });
  const code = ['import time', "print('sleeping', flush=True)", 'time.sleep(60)'].join('\n');
  return { result: kernel.execute(code, { onOutput: () => markStarted() }), started };
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection');
}

afterEach(async () => {
  await Promise.all(kernels.splice(0).map((kernel) => kernel.shutdown()));
  await Promise.all(tempDirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

describe(JupyterKernel, () => {
  it('runs code: prints give a stream, a last expression gives an execute_result', kernelTest, async () => {
    const { kernel } = await startKernel();
    expect(kernel.status).toBe('idle');
    expect((kernel.kernelInfo.language_info as { name?: string }).name).toBe('python');

    expect((await kernel.execute('x = 41')).outputs).toEqual([]);
    const seen: WireOutput[] = [];
    const printed = await kernel.execute('print(x + 1)', {
      onOutput: (change) => change.kind === 'output' && seen.push(change.output),
    });
    expect(printed.status).toBe('ok');
    expect(printed.outputs).toEqual([{ output_type: 'stream', name: 'stdout', text: '42\n' }]);
    expect(seen).toEqual(printed.outputs);

    const result = await kernel.execute('x');
    expect(result.status).toBe('ok');
    expect(result.executionCount).toBe(3);
    expect(result.outputs).toHaveLength(1);
    expect(result.outputs[0]).toMatchObject({ output_type: 'execute_result', execution_count: 3 });
    expect(plainText(result.outputs[0])).toBe('41');
    expect(kernel.status).toBe('idle');
  });

  it('runs in the given cwd with JPY_PARENT_PID and a private connection file it removes', kernelTest, async () => {
    const { kernel, cwd } = await startKernel();
    const result = await kernel.execute(
      "import os, sys, json\nprint(json.dumps([os.getcwd(), os.environ.get('JPY_PARENT_PID'), sys.argv[-1]]))",
    );
    const [kernelCwd, parentPid, connectionFile] = JSON.parse(String(result.outputs[0]?.text)) as string[];
    expect(kernelCwd).toBe(cwd);
    expect(parentPid).toBe(String(process.pid));
    expect((await stat(connectionFile ?? '')).mode & 0o777).toBe(0o600);
    const connection = JSON.parse(await readFile(connectionFile ?? '', 'utf8')) as Record<string, unknown>;
    expect(connection).toMatchObject({ ip: '127.0.0.1', transport: 'tcp', signature_scheme: 'hmac-sha256' });
    expect(String(connection.key)).toMatch(/^[0-9a-f]{64}$/);

    await kernel.shutdown();
    await expect(stat(connectionFile ?? '')).rejects.toThrow();
  });

  it('reports an exception as status error with an error output', kernelTest, async () => {
    const { kernel } = await startKernel();
    const result = await kernel.execute('1/0');
    expect(result.status).toBe('error');
    expect(result.outputs).toHaveLength(1);
    expect(result.outputs[0]).toMatchObject({ output_type: 'error', ename: 'ZeroDivisionError' });
    expect(result.outputs[0]?.traceback).toEqual(
      expect.arrayContaining([expect.stringContaining('ZeroDivisionError')]),
    );
  });

  it('runs concurrent executions in call order; a failure aborts those queued behind it', kernelTest, async () => {
    const { kernel } = await startKernel();
    const [first, second, third] = await Promise.all([
      kernel.execute('import time\ntime.sleep(0.3)\norder = [1]'),
      kernel.execute('order.append(2)'),
      kernel.execute('order'),
    ]);
    expect([first.status, second.status, third.status]).toEqual(['ok', 'ok', 'ok']);
    expect(plainText(third.outputs[0])).toBe('[1, 2]');

    const [failing, skipped] = await Promise.all([
      kernel.execute('time.sleep(1)\nraise ValueError("no")'),
      kernel.execute('order.append(3)'),
    ]);
    expect(failing.status).toBe('error');
    expect(skipped).toEqual({ status: 'aborted', executionCount: null, outputs: [] });
    // ipykernel also aborts what reaches it while it is still discarding the queue behind an error
    // (a window that grows under load): read once a request runs again.
    let after = await kernel.execute('order');
    while (after.status === 'aborted') after = await kernel.execute('order');
    expect(plainText(after.outputs[0])).toBe('[1, 2]');
  });

  it(
    'answers input() and getpass() through onInput, and raises StdinNotImplementedError without it',
    kernelTest,
    async () => {
      const { kernel, logger } = await startKernel();
      const asked: { prompt: string; password: boolean }[] = [];
      const run = await kernel.execute(
        "import getpass\nname = input('name? ')\nsecret = getpass.getpass('pin? ')\nprint(name, len(secret))",
        {
          onInput: async (prompt, password) => {
            asked.push({ prompt, password });
            return password ? 'hunter2' : 'Ada';
          },
        },
      );
      expect(run.status).toBe('ok');
      expect(asked).toEqual([
        { prompt: 'name? ', password: false },
        { prompt: 'pin? ', password: true },
      ]);
      expect(run.outputs.map((output) => output.text).join('')).toContain('Ada 7');
      // The answer is the kernel's alone: nothing logged carries it.
      expect(JSON.stringify(logger.records)).not.toContain('hunter2');
      const refused = await kernel.execute("input('name? ')");
      expect(refused.status).toBe('error');
      expect(refused.outputs[0]).toMatchObject({ ename: 'StdinNotImplementedError' });
    },
  );

  it('collects display_data, merges prints, honours clear_output and display updates', kernelTest, async () => {
    const { kernel } = await startKernel();
    const displayed = await kernel.execute(
      "from IPython.display import display, clear_output\ndisplay('hi')\ndisplay({'text/plain': 'raw'}, raw=True)",
    );
    expect(displayed.outputs).toEqual([
      { output_type: 'display_data', data: { 'text/plain': "'hi'" }, metadata: {} },
      { output_type: 'display_data', data: { 'text/plain': 'raw' }, metadata: {} },
    ]);

    // flush=True makes each print its own stream message (ipykernel batches unflushed output).
    const streamed: WireOutput[] = [];
    const appended: unknown[] = [];
    const printed = await kernel.execute("print('a', flush=True)\nprint('b', flush=True)", {
      onOutput: (change) => {
        if (change.kind !== 'output') return;
        streamed.push(change.output);
        appended.push(change.appended);
      },
    });
    expect(streamed).toHaveLength(2);
    // The second print is told as what it added to the stream, not as the stream again.
    expect(appended).toEqual([undefined, { keep: 2, text: 'b\n' }]);
    expect(printed.outputs).toEqual([{ output_type: 'stream', name: 'stdout', text: 'a\nb\n' }]);

    let clears = 0;
    const cleared = await kernel.execute("print('gone')\nclear_output(wait=True)\nprint('kept')", {
      onOutput: (change) => {
        if (change.kind === 'cleared') clears += 1;
      },
    });
    expect(cleared.outputs).toEqual([{ output_type: 'stream', name: 'stdout', text: 'kept\n' }]);
    expect(clears).toBe(1);

    const updates: string[] = [];
    kernel.onDisplayUpdate((update) => updates.push(update.displayId));
    const updated = await kernel.execute("handle = display('before', display_id=True)\nhandle.update('after')");
    expect(updated.outputs).toHaveLength(1);
    expect(plainText(updated.outputs[0])).toBe("'after'");
    expect(updates).toHaveLength(1);
  });

  for (const interruptMode of ['signal', 'message'] as const) {
    it(`interrupts a busy loop (interrupt mode ${interruptMode}) and keeps working`, kernelTest, async () => {
      const { kernel } = await startKernel({ interruptMode });
      const busy = nextStatus(kernel, 'busy');
      let markStarted: () => void = () => undefined;
      const started = new Promise<void>((resolve) => {
        markStarted = resolve;
      });
      const running = kernel.execute("print('spinning', flush=True)\nwhile True: pass", {
        onOutput: () => markStarted(),
      });
      await busy;
      await started;
      expect(kernel.status).toBe('busy');

      expect(await kernel.interrupt()).toBe('interrupted');
      const result = await running;
      expect(result.status).toBe('error');
      expect(result.outputs.at(-1)).toMatchObject({ output_type: 'error', ename: 'KeyboardInterrupt' });

      // ipykernel aborts what reaches it while it discards its queue after the error (a window
      // that grows under load): ask until one runs.
      let after = await kernel.execute('1+1');
      for (let attempt = 0; after.status === 'aborted' && attempt < 100; attempt++) after = await kernel.execute('1+1');
      expect(after.status).toBe('ok');
      expect(plainText(after.outputs[0])).toBe('2');
    });
  }

  it('waits for code asked to stop before the kernel started it, then interrupts it', {
    timeout: 240_000,
  }, async () => {
    const { kernel } = await startKernel();
    for (let round = 0; round < 8; round++) {
      // Asked at once, before the request reached the kernel and before its SIGINT handler is in place.
      const running = kernel.execute("import time\nprint('sleeping', flush=True)\ntime.sleep(60)");
      expect(await kernel.interrupt(20_000)).toBe('interrupted');
      const result = await running;
      // Stopped in its code (KeyboardInterrupt), or before it ran: ipykernel then goes idle
      // without a reply, and the execution ends aborted instead of pending for ever.
      if (result.status === 'error') {
        expect(result.outputs.at(-1)).toMatchObject({ output_type: 'error', ename: 'KeyboardInterrupt' });
      } else expect(result.status).toBe('aborted');
      let after = await kernel.execute('1+1');
      for (let attempt = 0; after.status === 'aborted' && attempt < 100; attempt++) after = await kernel.execute('1+1');
      expect(after.status).toBe('ok');
    }
  });

  it('says when nothing was running, and when the code ignored the interrupt and still runs', kernelTest, async () => {
    const { kernel } = await startKernel();
    expect(await kernel.interrupt()).toBe('nothing_running');
    let markStarted: () => void = () => undefined;
    const started = new Promise<void>((resolve) => {
      markStarted = resolve;
    });
    const stubborn = kernel.execute(
      "import signal, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nprint('ignoring', flush=True)\ntime.sleep(4)\nprint('finished')",
      { onOutput: () => markStarted() },
    );
    await started;
    expect(await kernel.interrupt(1_000)).toBe('still_running');
    const result = await stubborn;
    expect(result.status).toBe('ok');
    expect(JSON.stringify(result.outputs)).toContain('finished');
  });

  it('restarts: state is gone, pending executions are aborted, the same object keeps working', kernelTest, async () => {
    const { kernel } = await startKernel();
    await kernel.execute('y = 5');
    const oldPid = kernel.pid;
    const statuses: KernelStatus[] = [];
    kernel.onStatus((status) => statuses.push(status));
    const exits: KernelExitInfo[] = [];
    kernel.onExit((info) => exits.push(info));

    const pending = startSleeper(kernel);
    await pending.started;
    const restarted = kernel.restart();
    const duringRestart = kernel.execute('z = 1\nz');
    await restarted;
    expect(statuses).toEqual(['busy', 'restarting', 'idle']);

    expect((await pending.result).status).toBe('aborted');
    expect(plainText((await duringRestart).outputs[0])).toBe('1');
    expect(kernel.status).toBe('idle');
    expect(kernel.pid).not.toBe(oldPid);
    expect(isAlive(oldPid)).toBe(false);
    expect(exits).toEqual([]);

    const result = await kernel.execute('y');
    expect(result.status).toBe('error');
    expect(result.outputs[0]).toMatchObject({ output_type: 'error', ename: 'NameError' });
    expect(kernel.status).toBe('idle');
  });

  it('shuts down: the process is gone and every later call rejects with kernelShutdown', kernelTest, async () => {
    const { kernel } = await startKernel();
    const pid = kernel.pid;
    const exits: KernelExitInfo[] = [];
    kernel.onExit((info) => exits.push(info));
    const pending = startSleeper(kernel);
    await pending.started;

    const first = kernel.shutdown();
    expect(kernel.shutdown()).toBe(first);
    await first;

    expect((await pending.result).status).toBe('aborted');
    expect(() => process.kill(pid, 0)).toThrow();
    expect(kernel.status).toBe('dead');
    expect(exits).toHaveLength(1);
    expect(exits[0]?.reason).toBe('shutdown');
    for (const call of [kernel.execute('1'), kernel.interrupt(), kernel.restart()]) {
      expect(DaemonError.is(await rejection(call), 'kernelShutdown')).toBe(true);
    }
  });

  it('notices a kernel killed from outside: status dead, onExit, and restart revives it', kernelTest, async () => {
    const { kernel } = await startKernel();
    const died = new Promise<KernelExitInfo>((resolve) => kernel.onExit(resolve));
    const busy = nextStatus(kernel, 'busy');
    const pending = kernel.execute('import time\ntime.sleep(60)');
    await busy;

    process.kill(kernel.pid, 'SIGKILL');
    expect(await died).toEqual({ code: null, signal: 'SIGKILL', reason: 'died' });
    expect(kernel.status).toBe('dead');
    expect((await pending).status).toBe('aborted');
    expect(DaemonError.is(await rejection(kernel.execute('1')), 'kernelDied')).toBe(true);

    await kernel.restart();
    expect(plainText((await kernel.execute('1+1')).outputs[0])).toBe('2');
  });

  it('rejects with kernelStartFailed, carrying stderr, when the kernel exits during startup', kernelTest, async () => {
    const cwd = await tempDir();
    const logger = new RecordingLogger();
    const spec: Kernelspec = {
      ...(await pythonSpec()),
      argv: [
        '/usr/bin/python3',
        '-c',
        "import sys; print('to-stdout', flush=True); sys.stderr.write('boom\\n'); sys.exit(3)",
        '{connection_file}',
      ],
    };
    const error = await rejection(JupyterKernel.start({ spec, cwd, logger }));
    expect(DaemonError.is(error, 'kernelStartFailed')).toBe(true);
    expect((error as Error).message).toMatch(/exit code 3/);
    expect((error as Error).message).toMatch(/boom/);
    expect(logger.records.some((record) => record.fields.line === 'to-stdout')).toBe(true);
  });

  it('kills a kernel that does not answer within startupTimeoutMs', kernelTest, async () => {
    const cwd = await tempDir();
    const spec: Kernelspec = {
      ...(await pythonSpec()),
      argv: [
        '/usr/bin/python3',
        '-c',
        "import os, time; open('pid', 'w').write(str(os.getpid())); time.sleep(120)",
        '{connection_file}',
      ],
    };
    const error = await rejection(
      JupyterKernel.start({ spec, cwd, logger: new RecordingLogger(), startupTimeoutMs: 3_000 }),
    );
    expect(DaemonError.is(error, 'kernelStartFailed')).toBe(true);
    expect((error as Error).message).toMatch(/did not answer kernel_info_request/);
    const pid = Number(await readFile(join(cwd, 'pid'), 'utf8'));
    expect(isAlive(pid)).toBe(false);
  });
});
