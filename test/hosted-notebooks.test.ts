import { afterEach, describe, expect, it } from 'vitest';
import {
  findSecretLeaks,
  type JupyterServerUnderTest,
  startJupyterServer,
  startUserSession,
  type ToolOutcome,
  type UserSession,
  waitFor,
} from './support/index.js';

/**
 * Hosted notebooks on a real Jupyter Server (Debian's python3-jupyter-server, started here on a
 * loopback port with a token, in a temp root dir), through the shipped proxy as a user runs it
 * (fresh HOME, nothing pre-started, default options; the token only in the URL, or also in
 * JUPYTER_TOKEN as a user's MCP client config gives it).
 */

const token = `tok-${process.pid}-${Date.now().toString(36)}-s3cret`;
const sessions: UserSession[] = [];
const servers: JupyterServerUnderTest[] = [];
afterEach(async () => {
  for (const session of sessions.splice(0)) await session.stop();
  for (const server of servers.splice(0)) await server.dispose();
});

const notebook = (cells: { source: string; cell_type?: string }[] = []) => ({
  type: 'notebook',
  format: 'json',
  content: {
    cells: cells.map((cell, i) => ({
      id: `c${i}`,
      cell_type: cell.cell_type ?? 'markdown',
      metadata: {},
      source: cell.source,
    })),
    metadata: { kernelspec: { name: 'python3', display_name: 'Python 3' } },
    nbformat: 4,
    nbformat_minor: 5,
  },
});

async function serverWithNotebook(path: string): Promise<JupyterServerUnderTest> {
  const server = await startJupyterServer({ token });
  servers.push(server);
  const put = await server.api('PUT', `api/contents/${path}`, notebook([{ source: '# Hosted' }]));
  expect(put.status).toBeLessThan(300);
  return server;
}

/** A user's session; `tokenInEnv: false`: the token is given only inside the URLs (`?token=`). */
async function userSession(
  env: Record<string, string> = {},
  { tokenInEnv = true }: { tokenInEnv?: boolean } = {},
): Promise<UserSession> {
  const session = await startUserSession({ env: { ...(tokenInEnv ? { JUPYTER_TOKEN: token } : {}), ...env } });
  sessions.push(session);
  return session;
}

/** The token is in no result, log, file or handoff (nor anywhere in the child's environment unless the user put it there). */
function expectNoToken(session: UserSession, outcomes: readonly ToolOutcome[], tokenInEnv = true): void {
  expect(findSecretLeaks(session, outcomes, [token], { childEnvironment: !tokenInEnv })).toEqual([]);
}

function countLines(text: string, needle: string): number {
  return text.split('\n').filter((line) => line.includes(needle)).length;
}

describe('hosted notebooks on a real Jupyter Server, through the shipped proxy', () => {
  it('connects by URL (the token only in it) and runs code; a SIGKILLed runt-mcp is back on the same kernel at the very next call; a local daemon restart leaves it alone; a server-side edit is never overwritten; the token appears nowhere', {
    timeout: 180_000,
  }, async () => {
    const server = await serverWithNotebook('work.ipynb');
    const url = server.notebookUrl('work.ipynb');
    // No JUPYTER_TOKEN: only the URL has the token, and the restarted child gets it from the proxy.
    const session = await userSession({}, { tokenInEnv: false });
    const seen: ToolOutcome[] = [];
    const call = async (name: string, args: Record<string, unknown> = {}) => {
      const outcome = await session.call(name, args);
      seen.push(outcome);
      return outcome;
    };

    const connected = await call('connect_notebook', { url: `${url}?token=${token}` });
    expect(connected.isError, connected.text).toBe(false);
    expect(connected.json).toMatchObject({ path: url, connected: true, readiness: { runtime: 'ready' } });
    expect(connected.session?.target).toBe(url);
    const first = await call('create_cell', { source: 'x = 41', and_run: true });
    expect(first.isError, first.text).toBe(false);
    await waitFor('one kernel on the server', () => server.kernels().length === 1);
    const [kernel] = server.kernels();
    const sessionsBefore = (await server.api('GET', 'api/sessions')).json as { kernel: { id: string } }[];
    expect(sessionsBefore).toHaveLength(1);

    // SIGKILL the child under the proxy; the very next call finds the session back, same kernel.
    const killed = await session.faults.killChild();
    const after = await call('create_cell', { source: 'print(x + 1)', and_run: true });
    expect(after.isError, after.text).toBe(false);
    expect(after.text).toContain('42');
    expect(after.text).not.toMatch(/new kernel/);
    expect(session.pids.child()).not.toBe(killed);
    expect(after.session?.rejoin).toEqual({ requested: url, outcome: 'rejoined' });
    expect(server.kernels()).toEqual([kernel]);
    expect(((await server.api('GET', 'api/sessions')).json as { kernel: { id: string } }[])[0]?.kernel.id).toBe(
      sessionsBefore[0]?.kernel.id,
    );

    // A local daemon restart does not touch the hosted session.
    const statusBefore = await call('session_status');
    const activeBefore = statusBefore.json?.active as Record<string, unknown>;
    expect(activeBefore).toMatchObject({ target: url, daemon_incarnation: null });
    // `runtimed start` as a user types it; the child may have started (or restarted) it first.
    const startDaemon = async (): Promise<void> => {
      if (session.pids.daemon() !== undefined) return;
      const started = await session.runtimed(['start']);
      if (started.code !== 0) expect(started.stderr).toContain('already running');
    };
    await startDaemon();
    const daemon = await session.pids.waitForDaemon();
    await session.faults.stopDaemon();
    await startDaemon();
    await session.pids.waitForDaemon(daemon);
    expect(session.pids.daemon()).not.toBe(daemon);
    const statusAfter = await call('session_status');
    expect(statusAfter.json?.active).toMatchObject({
      target: url,
      activation: activeBefore.activation,
      origin: activeBefore.origin,
    });
    const still = await call('create_cell', { source: 'print(x + 1)', and_run: true });
    expect(still.text).toContain('42');
    expect(server.kernels()).toEqual([kernel]);

    // An edit made on the server meanwhile is not overwritten.
    const theirs = notebook([{ source: 'edited on the server' }]);
    expect((await server.api('PUT', 'api/contents/work.ipynb', theirs)).status).toBeLessThan(300);
    const refused = await call('create_cell', { source: 'y = 1' });
    expect(refused.isError).toBe(true);
    expect(refused.text).toContain(`${url} was changed on the Jupyter Server since it was loaded here`);
    expect(refused.text).toContain(`connect_notebook(url="${url}")`);
    const onServer = (await server.api('GET', 'api/contents/work.ipynb')).json as {
      content: { cells: { source: string }[] };
    };
    expect(onServer.content.cells.map((cell) => cell.source)).toEqual(['edited on the server']);
    const reloaded = await call('connect_notebook', { url });
    expect(reloaded.isError, reloaded.text).toBe(false);
    const cells = await call('get_all_cells', { format: 'json' });
    expect(cells.text).toContain('edited on the server');

    const listed = await call('list_active_notebooks');
    expect(listed.text).toContain(url);
    expectNoToken(session, seen, false);
  });

  it('run_code runs scratch code in the notebook’s kernel: it sees the cells’ variables, adds nothing to the notebook, leaves the execution count alone; past its wait it says running and interrupt_kernel stops it', {
    timeout: 180_000,
  }, async () => {
    const server = await serverWithNotebook('scratch.ipynb');
    const url = server.notebookUrl('scratch.ipynb');
    const session = await userSession();
    const seen: ToolOutcome[] = [];
    const call = async (name: string, args: Record<string, unknown> = {}) => {
      const outcome = await session.call(name, args);
      seen.push(outcome);
      return outcome;
    };
    expect((await call('connect_notebook', { url })).isError).toBe(false);
    const defined = await call('create_cell', { source: 'x = 41', and_run: true });
    expect(defined.isError, defined.text).toBe(false);

    const ran = await call('run_code', { code: 'y = x * 2\nprint("scratch sees", x + 1)' });
    expect(ran.isError, ran.text).toBe(false);
    expect(ran.json).toMatchObject({ status: 'ok' });
    expect(ran.text).toContain('scratch sees 42');
    const failed = await call('run_code', { code: '1 / 0' });
    expect(failed.json).toMatchObject({ status: 'error' });
    expect(failed.text).toContain('ZeroDivisionError');

    // The scratch run set y in the kernel, and the next cell's count follows the first cell's.
    const next = await call('create_cell', { source: 'print("y is", y)', and_run: true });
    expect(next.text).toContain('y is 82');
    const saved = (await server.api('GET', 'api/contents/scratch.ipynb')).json as {
      content: { cells: { source: string; execution_count?: number | null }[] };
    };
    expect(saved.content.cells.map((cell) => cell.source)).toEqual(['# Hosted', 'x = 41', 'print("y is", y)']);
    expect(saved.content.cells.map((cell) => cell.execution_count ?? null)).toEqual([null, 1, 2]);

    // Past its wait: running, and the code goes on until interrupt_kernel stops it.
    const slow = await call('run_code', {
      code: 'import time\nprint("started", flush=True)\ntime.sleep(60)',
      timeout_secs: 1,
    });
    expect(slow.isError, slow.text).toBe(false);
    expect(slow.json).toMatchObject({ status: 'running' });
    expect(slow.text).toContain('interrupt_kernel');
    const interrupted = await call('interrupt_kernel');
    expect(interrupted.isError, interrupted.text).toBe(false);
    expect(interrupted.json).toMatchObject({ interrupted: true });
    const after = await call('run_code', { code: 'print("still", y)' });
    expect(after.text).toContain('still 82');
    expect(server.kernels()).toHaveLength(1);
    expectNoToken(session, seen);
  });

  it('creates on the server; a restarted server is rejoined on the retry timer with the kernel-lost note; a server gone for good is given up after the bound with a clear reason', {
    timeout: 180_000,
  }, async () => {
    const server = await startJupyterServer({ token });
    servers.push(server);
    const session = await userSession();
    const seen: ToolOutcome[] = [];
    const call = async (name: string, args: Record<string, unknown> = {}) => {
      const outcome = await session.call(name, args);
      seen.push(outcome);
      return outcome;
    };

    const created = await call('create_notebook', { url: `${server.baseUrl}lab/tree/` });
    expect(created.isError, created.text).toBe(false);
    const url = created.json?.url as string;
    expect(url).toBe(server.notebookUrl('Untitled.ipynb'));
    expect((await call('create_cell', { source: 'x = 41', and_run: true })).isError).toBe(false);

    // The server stops and comes back (its kernels gone): retried on the timer, rejoined with no call.
    await server.stop();
    await waitFor('two failed rejoin attempts', () => countLines(session.stderr(), 'rejoin failed; retrying') >= 2, {
      timeoutMs: 60_000,
    });
    await server.start();
    await waitFor('the rejoin', () => session.stderr().includes('rejoined notebook'), { timeoutMs: 90_000 });
    const rejoined = await call('session_status');
    expect((rejoined.json?.active as { kernel_notice?: string } | undefined)?.kernel_notice).toMatch(
      /no longer had this notebook's kernel .*: code now runs in a new kernel/,
    );
    const back = await call('create_cell', { source: 'print(x + 1)', and_run: true });
    expect(back.isError, back.text).toBe(false);
    expect(back.text).toContain("no longer had this notebook's kernel");
    expect(back.text).toContain('runs in a new kernel');
    expect(back.text).toContain('NameError');
    const status = await call('session_status');
    expect(status.json?.active).toMatchObject({ target: url, origin: 'rejoin' });
    expect((status.json?.active as { kernel_notice?: string } | undefined)?.kernel_notice).toBeUndefined();
    expectNoToken(session, seen);

    // A second session with a short retry schedule (NTERACT_MCP_HOSTED_RETRY, documented in --help).
    const short = await userSession({ NTERACT_MCP_HOSTED_RETRY: '200,400,4' });
    const shortSeen: ToolOutcome[] = [];
    const connected = await short.call('connect_notebook', { url });
    shortSeen.push(connected);
    expect(connected.isError, connected.text).toBe(false);
    await server.stop();
    await waitFor('the hosted rejoin to give up', () => short.stderr().includes('gave up an automatic rejoin'), {
      timeoutMs: 60_000,
    });
    const dropped = await short.call('get_all_cells');
    shortSeen.push(dropped);
    expect(dropped.isError).toBe(true);
    expect(dropped.text).toMatch(
      new RegExp(
        `^No active notebook session \\(connection to its server lost\\)\\. Could not rejoin ${url.replace(/[.?]/g, '\\$&')} after 4 attempts \\(last: .+\\)\\. Reconnect with: connect_notebook\\(url="${url.replace(/[.?]/g, '\\$&')}"\\) once the server answers\\.$`,
      ),
    );
    const droppedStatus = await short.call('session_status');
    shortSeen.push(droppedStatus);
    expect(droppedStatus.json?.last_drop).toMatchObject({ reason: 'disconnected', rejoin_target: url });
    expect(countLines(short.stderr(), '"contribution":"hosted.rejoin-retry","target"')).toBe(4);
    expectNoToken(short, shortSeen);
  });
});
