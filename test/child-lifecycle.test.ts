import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startUserSession, type ToolOutcome, type UserSession, waitFor } from './support/index.js';

const sessions: UserSession[] = [];
afterEach(async () => {
  for (const session of sessions.splice(0)) await session.stop();
});

/** nteract-mcp as a user runs it (test/support), with helpers for these tests. */
async function start() {
  const session = await startUserSession();
  sessions.push(session);
  /** Runs code in a new cell of the active notebook and returns its text output. */
  const run = async (source: string): Promise<string> => {
    const result = await session.call('create_cell', { source, and_run: true, timeout_secs: 60 });
    expect(result.isError, result.text).toBe(false);
    return result.text;
  };
  /** A daemon restart as a user does it: `runtimed stop`, then `runtimed start`. */
  const restartDaemon = async (): Promise<void> => {
    const before = await session.pids.waitForDaemon();
    await session.faults.stopDaemon();
    if (session.pids.daemon() === undefined) {
      const started = await session.runtimed(['start']);
      // The child may have brought it back first; then `start` says so and that daemon serves.
      if (started.code !== 0) expect(started.stderr).toContain('already running');
    }
    await session.pids.waitForDaemon(before);
  };
  /** Polls a tool until its result satisfies `accept` (the background rejoin takes a moment). */
  const until = (name: string, args: Record<string, unknown>, accept: (result: ToolOutcome) => boolean) =>
    waitFor(
      `${name} to answer as expected`,
      async () => {
        const result = await session.call(name, args);
        if (accept(result)) return result;
        throw new Error(`last ${name} result: ${result.text}`);
      },
      { timeoutMs: 45_000, intervalMs: 250 },
    );
  return { session, call: session.call, run, restartDaemon, until };
}

describe('rejoin after a daemon restart, as a user runs nteract-mcp', () => {
  it('brings a saved notebook back by itself after a daemon restart: document restored, new kernel', {
    timeout: 120_000,
  }, async () => {
    const t = await start();
    const created = await t.call('create_notebook', {});
    expect(created.isError, created.text).toBe(false);
    expect(await t.run('x = 41')).not.toContain('Error');
    expect(await t.run('print(x + 1)')).toContain('42');
    const path = join(t.session.dirs.project, 'saved.ipynb');
    const saved = await t.call('save_notebook', { path });
    expect(saved.json).toMatchObject({ path, notebook_id: created.json?.notebook_id });
    await t.restartDaemon();
    const back = await t.until('get_all_cells', { format: 'json' }, (result) => !result.isError);
    expect(back.text).toContain('x = 41');
    const status = await t.call('session_status');
    expect(status.json).toMatchObject({ active: { notebook_id: created.json?.notebook_id, path } });
    expect(await t.run('print(x)')).toContain('NameError');
  });

  it('has the session back before the new kernel is up; the next run waits for that kernel and runs exactly once', {
    timeout: 120_000,
  }, async () => {
    const t = await start();
    // The user's python3 kernelspec, behind a gate: its kernel starts only while the gate file exists.
    const gate = join(t.session.dirs.project, 'kernel-gate');
    const spec = join(t.session.dirs.data, 'jupyter', 'kernels', 'python3');
    mkdirSync(spec, { recursive: true });
    const gated = `while [ ! -f ${JSON.stringify(gate)} ]; do sleep 0.05; done; exec /usr/bin/python3 -m ipykernel_launcher -f "$0"`;
    writeFileSync(
      join(spec, 'kernel.json'),
      JSON.stringify({
        argv: ['/bin/sh', '-c', gated, '{connection_file}'],
        display_name: 'Gated',
        language: 'python',
      }),
    );
    writeFileSync(gate, '');
    const created = await t.call('create_notebook', {});
    expect(created.isError, created.text).toBe(false);
    expect(await t.run('x = 41')).not.toContain('Error');
    const path = join(t.session.dirs.project, 'restarted.ipynb');
    expect((await t.call('save_notebook', { path })).isError).toBe(false);
    rmSync(gate);
    await t.restartDaemon();
    // Back while the new daemon's kernel cannot start: readiness says so, reads work.
    const back = await t.until(
      'session_status',
      {},
      (result) => (result.json?.active as { notebook_id?: string } | null)?.notebook_id === created.json?.notebook_id,
    );
    expect(back.json?.active).toMatchObject({
      readiness: {
        document: 'ready',
        runtime: 'pending',
        reason: 'the kernel is starting',
      },
    });
    expect((await t.call('get_all_cells', { format: 'json' })).text).toContain('x = 41');
    // Sent now, while the kernel is still starting: it waits for it, then runs once, in the new kernel.
    const runs = join(t.session.dirs.project, 'runs.txt');
    const source = [
      'import pathlib',
      `p = pathlib.Path(${JSON.stringify(runs)})`,
      "p.open('a').write('run\\n')",
      "print('runs:', len(p.read_text().splitlines()), 'x' in globals())",
    ].join('\n');
    const sent = t.session.send('create_cell', { source, and_run: true, timeout_secs: 60 });
    writeFileSync(gate, '');
    const settled = await sent;
    if (!settled.ok) throw settled.error;
    expect(settled.outcome.isError, settled.outcome.text).toBe(false);
    expect(settled.outcome.text).toContain('runs: 1 False');
    expect(readFileSync(runs, 'utf8')).toBe('run\n');
    const cells = await t.call('get_all_cells', { format: 'json' });
    expect(cells.text.split("p.open('a')").length - 1).toBe(1);
    const after = await t.call('session_status');
    expect(after.json?.active).toMatchObject({ readiness: { document: 'ready', runtime: 'ready' } });
    for (const request of t.session.transport.requests()) expect(request.answers).toBe(1);
  });

  it('brings a persisted untitled notebook back, and reports an ephemeral one as evicted', {
    timeout: 120_000,
  }, async () => {
    const t = await start();
    const kept = await t.call('create_notebook', { ephemeral: false });
    await t.run('draft = 1');
    await t.restartDaemon();
    const back = await t.until(
      'session_status',
      {},
      (result) => (result.json?.active as { notebook_id?: string } | null)?.notebook_id === kept.json?.notebook_id,
    );
    expect(back.json?.last_drop).toMatchObject({ reason: 'disconnected' });
    expect((await t.call('get_all_cells', { format: 'json' })).text).toContain('draft = 1');

    const ephemeral = await t.call('create_notebook', {});
    await t.run('scratch = 2');
    await t.restartDaemon();
    const evicted = await t.until('get_all_cells', {}, (result) => result.isError && result.text.includes('evicted'));
    expect(evicted.text).toBe(
      `No active notebook session (notebook was evicted: Notebook ${String(ephemeral.json?.notebook_id)} is not available: no open room, no saved file bound to it, and no persisted untitled notebook). Start again with create_notebook, or connect_notebook to a saved file.`,
    );
    const rooms = await t.call('list_active_notebooks');
    expect(rooms.text).not.toContain(String(ephemeral.json?.notebook_id));
  });

  it('switches among three notebooks and back; parked kernels outlive the keep-alive', {
    timeout: 120_000,
  }, async () => {
    const t = await start();
    // The user started the daemon with a short keep-alive; the child finds and uses it.
    // (Should the child have started one with the defaults already, that one is stopped first.)
    await waitFor('a daemon with a 1 s keep-alive', async () => {
      await t.session.faults.stopDaemon();
      const started = await t.session.runtimed(['start', '--keep-alive-ms', '1000']);
      if (started.code === 0) return true;
      throw new Error(started.stderr);
    });
    const ids: string[] = [];
    for (const name of ['alpha', 'beta', 'gamma']) {
      const created = await t.call('create_notebook', {});
      ids.push(String(created.json?.notebook_id));
      await t.run(`who = '${name}'`);
    }
    // Longer than the keep-alive: a kernel without peers would be gone by now (a lower bound, not a timing assertion).
    await new Promise((resolve) => setTimeout(resolve, 2500));
    const ready = (result: ToolOutcome) =>
      (result.json?.active as { readiness?: { runtime?: string } })?.readiness?.runtime === 'ready';
    const back = await t.call('connect_notebook', { notebook_id: ids[0] });
    expect(back.json).toMatchObject({ notebook_id: ids[0], switched_from: ids[2] });
    await t.until('session_status', {}, ready);
    expect(await t.run('print(who)')).toContain('alpha');
    await t.call('connect_notebook', { notebook_id: ids[1] });
    await t.until('session_status', {}, ready);
    expect(await t.run('print(who)')).toContain('beta');
    const status = await t.call('session_status');
    expect(status.json?.parked).toHaveLength(2);
  });
});
