// Kernels that do not come up, and one that ignores interrupts, as a user meets them: the shipped
// bins, a fresh HOME with the broken kernelspecs installed in the user's Jupyter data dir, the
// daemon auto-started. Every answer must say what happened: no "ready" for a kernel that is not,
// no wait past the client's patience, no other interpreter in place of a missing one.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  brokenKernelArgv,
  installKernelspec,
  processesWithHome,
  startUserSession,
  type UserSession,
  waitFor,
} from './support/index.js';

let session: UserSession;

interface ListedRoom {
  readonly notebook_id: string;
  readonly active_peers: number;
  readonly has_kernel: boolean;
  readonly ephemeral: boolean;
}

/** The active notebook's id, from session_status. */
async function activeNotebookId(s: UserSession): Promise<string | undefined> {
  return ((await s.call('session_status')).json?.active as { notebook_id?: string } | null | undefined)?.notebook_id;
}

/** The notebooks the daemon has open now. */
async function listRooms(s: UserSession): Promise<ListedRoom[]> {
  return JSON.parse((await s.call('list_active_notebooks')).text) as ListedRoom[];
}

beforeAll(async () => {
  session = await startUserSession({ requestTimeoutMs: 120_000 });
  installKernelspec(session.dirs, 'hangs', brokenKernelArgv.hangs);
  installKernelspec(session.dirs, 'exits', brokenKernelArgv.exits);
  installKernelspec(session.dirs, 'gone-venv', [
    join(session.dirs.root, 'deleted-venv', 'bin', 'python3'),
    '-m',
    'ipykernel_launcher',
    '-f',
    '{connection_file}',
  ]);
  // The agent's own notebook, which a failed create must leave active.
  const created = await session.call('create_notebook', {});
  expect(created.isError, created.text).toBe(false);
}, 120_000);

afterAll(async () => {
  await session?.stop();
});

describe('a kernel that does not start', () => {
  it('that never answers: create_notebook is a clear error once its 20 s bound passes, the kernel is killed, the new notebook closed', async () => {
    const s = session;
    const before = new Set((await listRooms(s)).map((room) => room.notebook_id));
    const active = await activeNotebookId(s);
    expect(active).toBeDefined();
    const started = Date.now();
    const answer = await s.call('create_notebook', { kernel: 'hangs' });
    const seconds = (Date.now() - started) / 1000;
    expect(answer.isError, answer.text).toBe(true);
    expect(answer.text).toMatch(
      /^Failed to create notebook: its kernel did not start \(kernel failed to start: Kernel 'hangs' did not answer kernel_info_request within 20000 ms \(it was killed\)/,
    );
    expect(answer.text).toContain('hanging kernel: never answers');
    expect(answer.text).toContain('The new notebook was closed; being ephemeral, it is not kept.');
    // The bound is the daemon's (the error names it); the wall time is reported, not asserted.
    console.log(`create_notebook on a kernel that never answers: an error after ${seconds.toFixed(1)} s`);
    // Killed: no `sleep 600` of this HOME is left.
    await waitFor(
      'the hung kernel to be gone',
      () => !processesWithHome(s.dirs.home).some((p) => p.cmdline.includes('sleep 600')),
      {
        timeoutMs: 15_000,
      },
    );
    // Only a closed ephemeral room (no peer, no kernel) is left of it, for the daemon to drop.
    for (const room of (await listRooms(s)).filter((entry) => !before.has(entry.notebook_id))) {
      expect(room).toMatchObject({ active_peers: 0, has_kernel: false, ephemeral: true });
    }
    expect(await activeNotebookId(s)).toBe(active);
  }, 90_000);

  it('that exits at start: create_notebook is an error with its exit and stderr, not "ready"', async () => {
    const answer = await session.call('create_notebook', { kernel: 'exits' });
    expect(answer.isError, answer.text).toBe(true);
    expect(answer.text).toMatch(
      /^Failed to create notebook: its kernel did not start \(kernel failed to start: Kernel 'exits' /,
    );
    expect(answer.text).toContain('boom: cannot start');
  }, 60_000);

  it('whose interpreter is missing: unavailable, naming it; never run by another interpreter', async () => {
    const s = session;
    const missing = join(s.dirs.root, 'deleted-venv', 'bin', 'python3');
    const kernels = JSON.parse((await s.call('list_kernels')).text) as { kernels?: unknown[] } | unknown[];
    const listed = (Array.isArray(kernels) ? kernels : (kernels.kernels ?? [])) as {
      name: string;
      available: boolean;
      reason?: string;
    }[];
    expect(listed.find((kernel) => kernel.name === 'gone-venv')).toMatchObject({
      available: false,
      reason: expect.stringContaining(`runs ${missing}, which does not exist`),
    });
    // Refused before anything is made, with the reason and the kernels that can run.
    const created = await s.call('create_notebook', { kernel: 'gone-venv' });
    expect(created.isError).toBe(true);
    expect(created.text).toMatch(
      /^Failed to create notebook: The Jupyter kernel 'gone-venv' is installed but cannot run /,
    );
    expect(created.text).toContain(`runs ${missing}, which does not exist`);
    expect(created.text).toContain('Installed kernels: ');
    // No kernel of this HOME runs /usr/bin/python3 for it.
    expect(processesWithHome(s.dirs.home).filter((p) => p.cmdline.includes('ipykernel_launcher'))).toHaveLength(1);
  }, 60_000);
});

describe('a kernel whose code ignores the interrupt', () => {
  it('interrupt_kernel says it did not stop and points to restart_kernel, which stops it', async () => {
    const s = session;
    const created = await s.call('create_notebook', {});
    expect(created.isError, created.text).toBe(false);
    const run = s.send('create_cell', {
      source:
        "import signal, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nprint('ignoring', flush=True)\ntime.sleep(120)",
      and_run: true,
      timeout_secs: 2,
    });
    const first = await run;
    expect(first.ok && !first.outcome.isError, first.ok ? first.outcome.text : first.error.message).toBe(true);
    const interrupted = await s.call('interrupt_kernel');
    expect(interrupted.isError, interrupted.text).toBe(true);
    expect(interrupted.text).toMatch(/^Not interrupted: .*restart_kernel stops it/);
    const restarted = await s.call('restart_kernel');
    expect(restarted.isError, restarted.text).toBe(false);
    const after = await s.call('run_code', { code: 'print(6 * 7)' });
    expect(after.text).toContain('42');
    expect(await s.call('interrupt_kernel').then((answer) => answer.json)).toEqual({
      interrupted: false,
      note: 'Nothing was running.',
    });
  }, 90_000);
});
