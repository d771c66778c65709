import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { processInfo, startUserSession, type UserSession, type UserSessionOptions, waitFor } from './support/index.js';

/**
 * Kernels run as users expect, on the user path (the shipped proxy in a fresh HOME, nothing
 * pre-started, default options): the environment and working directory of the client that opened
 * the notebook (never the daemon's internal variables or a hosted token), the project virtualenv,
 * connection files in the runtime dir that a daemon crash does not leave behind.
 */

const sessions: UserSession[] = [];
afterEach(async () => {
  for (const session of sessions.splice(0)) await session.stop();
});

async function start(options: UserSessionOptions = {}): Promise<UserSession> {
  const session = await startUserSession(options);
  sessions.push(session);
  return session;
}

/** Runs `source` in the active notebook and returns what it printed (its stream outputs). */
async function run(session: UserSession, source: string): Promise<string> {
  const ran = await session.call('create_cell', { source, and_run: true, timeout_secs: 120 });
  expect(ran.isError, ran.text).toBe(false);
  expect(ran.json).toMatchObject({ status: 'done' });
  const outputs = (ran.json?.outputs ?? []) as { output_type?: string; text?: string }[];
  return outputs
    .filter((output) => output.output_type === 'stream')
    .map((output) => output.text ?? '')
    .join('');
}

/** Every file under `dir` whose content contains `needle`. */
function filesContaining(dir: string, needle: string): string[] {
  if (!existsSync(dir)) return [];
  const found: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    if (readFileSync(path).includes(needle)) found.push(path);
  }
  return found;
}

const secret = 'client-secret-7d1f';
const token = 'hosted-token-93ab';

describe('the environment of a kernel', () => {
  it("is the client's: its own variables, PATH and HOME, without NTERACT_MCP_*, RUNTIMED_* or a hosted token; an untitled notebook runs in the client's directory", {
    timeout: 180_000,
  }, async () => {
    const session = await start({
      env: {
        NMCP_TEST_CLIENT_VARIABLE: secret,
        NMCP_TEST_DROPPED: 'dropped-value',
        NTERACT_MCP_KERNEL_ENV_DROP: 'NMCP_TEST_DROPPED',
        NTERACT_MCP_LOG_LEVEL: 'debug',
        JUPYTER_TOKEN: token,
      },
    });
    const created = await session.call('create_notebook', { ephemeral: false });
    expect(created.isError, created.text).toBe(false);
    expect(created.json).toMatchObject({ working_dir: session.dirs.project, readiness: { runtime: 'ready' } });
    const interpreter = created.json?.interpreter;
    expect(interpreter).toEqual(expect.stringMatching(/^\/.*python/));

    // The kernel prints names, PATH, HOME and a digest of the client's value: the value itself would
    // be in the cell's output, which the product journals and saves like any output.
    const printed = await run(
      session,
      [
        'import hashlib, json, os',
        'value = os.environ.get("NMCP_TEST_CLIENT_VARIABLE", "")',
        'print(json.dumps({"names": sorted(os.environ), "PATH": os.environ.get("PATH"), "HOME": os.environ.get("HOME"),',
        '  "digest": hashlib.sha256(value.encode()).hexdigest(), "cwd": os.getcwd()}))',
      ].join('\n'),
    );
    const seen = JSON.parse(printed) as { names: string[]; PATH: string; HOME: string; digest: string; cwd: string };
    expect(seen.digest).toBe(createHash('sha256').update(secret).digest('hex'));
    expect(seen.PATH).toBe(session.env.PATH);
    expect(seen.HOME).toBe(session.dirs.home);
    expect(seen.names).toContain('NMCP_TEST_CLIENT_VARIABLE');
    expect(seen.names).not.toContain('NMCP_TEST_DROPPED');
    expect(seen.names).not.toContain('JUPYTER_TOKEN');
    expect(seen.names.filter((name) => /^(NTERACT_MCP_|RUNTIMED_)/.test(name))).toEqual([]);
    expect(seen.cwd).toBe(session.dirs.project);

    const status = await session.call('session_status');
    expect(status.json?.active).toMatchObject({ working_dir: session.dirs.project, interpreter });

    // Secret-bearing: no value reaches a log, a tool result or a file of the product.
    expect(session.stderr()).not.toContain(secret);
    expect(created.text + status.text).not.toContain(secret);
    const runtimedLog = join(session.dirs.runtime, 'runt', 'runtimed.log');
    expect(existsSync(runtimedLog)).toBe(true);
    expect(readFileSync(runtimedLog, 'utf8')).not.toContain(secret);
    expect(filesContaining(session.dirs.data, secret)).toEqual([]);
    expect(filesContaining(session.dirs.data, token)).toEqual([]);
    expect(filesContaining(join(session.dirs.runtime, 'runt'), secret)).toEqual([]);
  });

  it("runs a Python notebook in the client's project virtualenv (.venv with ipykernel) and lists it", {
    timeout: 240_000,
  }, async () => {
    const session = await start();
    const venv = join(session.dirs.project, '.venv');
    await promisify(execFile)('/usr/bin/python3', ['-m', 'venv', '--system-site-packages', venv], {
      timeout: 120_000,
    });

    const listed = await session.call('list_kernels');
    expect(listed.isError, listed.text).toBe(false);
    expect(listed.json?.kernels).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          name: 'python3',
          available: true,
          interpreter: join(venv, 'bin', 'python'),
          virtualenv: venv,
        }),
      ]),
    );

    const created = await session.call('create_notebook');
    expect(created.isError, created.text).toBe(false);
    expect(created.json).toMatchObject({ kernel: 'python3', interpreter: join(venv, 'bin', 'python') });
    const printed = await run(session, 'import os, sys\nprint(sys.prefix)\nprint(os.environ.get("VIRTUAL_ENV"))');
    expect(printed.trim().split('\n')).toEqual([venv, venv]);
    expect((await session.call('session_status')).json?.active).toMatchObject({
      interpreter: join(venv, 'bin', 'python'),
    });
  });
});

describe('kernel connection files', () => {
  it('live in the runtime dir (0600 in a 0700 dir), and none is left behind by a daemon SIGKILL and restart', {
    timeout: 240_000,
  }, async () => {
    const session = await start();
    const connections = join(session.dirs.runtime, 'runt', 'kernels');
    const created = await session.call('create_notebook');
    expect(created.isError, created.text).toBe(false);
    const saved = await session.call('save_notebook', { path: join(session.dirs.project, 'crash.ipynb') });
    expect(saved.isError, saved.text).toBe(false);
    expect(await run(session, 'print(6 * 7)')).toContain('42');

    const [first, ...others] = readdirSync(connections);
    expect(others).toEqual([]);
    expect(first).toMatch(/^nteract-kernel-/);
    const firstDir = join(connections, String(first));
    expect(statSync(connections).mode & 0o777).toBe(0o700);
    expect(statSync(firstDir).mode & 0o777).toBe(0o700);
    const [file] = readdirSync(firstDir);
    expect(statSync(join(firstDir, String(file))).mode & 0o777).toBe(0o600);

    const killed = await session.faults.killDaemon();
    // The child starts a new daemon and rejoins the notebook; its kernel runs again.
    const rerun = await waitFor(
      'the notebook to run again after the daemon restart',
      async () => {
        const ran = await session.call('create_cell', { source: 'print(6 * 9)', and_run: true, timeout_secs: 60 });
        return !ran.isError && JSON.stringify(ran.json?.outputs ?? null).includes('54') ? ran : undefined;
      },
      { timeoutMs: 120_000, intervalMs: 500 },
    );
    expect(rerun.json).toMatchObject({ status: 'done' });
    expect(await session.pids.waitForDaemon(killed)).not.toBe(killed);

    expect(existsSync(firstDir)).toBe(false);
    // What remains belongs to a kernel that runs: each connection file is on a live kernel's command line.
    const live = session.pids.kernels().map((pid) => processInfo(pid)?.cmdline ?? '');
    const remaining = readdirSync(connections);
    expect(remaining.length).toBeGreaterThan(0);
    for (const dir of remaining) {
      const files = readdirSync(join(connections, dir));
      expect(files.length).toBe(1);
      expect(live.some((cmdline) => cmdline.includes(join(connections, dir, String(files[0]))))).toBe(true);
    }
  });
});
