import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { readSessionReport } from '@nteract-mcp/core';
import { RuntimedConnection } from '@nteract-mcp/runtimed-protocol';
import { afterEach, describe, expect, it } from 'vitest';

const proxyBin = fileURLToPath(new URL('../packages/nteract-mcp/dist/nteract-mcp.js', import.meta.url));
const runtMcpBin = fileURLToPath(new URL('../packages/nteract-mcp/dist/runt-mcp.js', import.meta.url));
const cleanups: (() => Promise<void> | void)[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A fresh user: temp HOME and XDG dirs, no daemon socket configured, auto-start left on. */
function freshUser(): { dir: string; env: Record<string, string>; socketPath: string; infoPath: string } {
  // Short: the socket path must stay under the Unix limit.
  const dir = mkdtempSync(join(tmpdir(), 'crash-'));
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value !== undefined && !key.startsWith('RUNTIMED_') && !key.startsWith('NTERACT_MCP_')) env[key] = value;
  }
  const xdg = {
    HOME: join(dir, 'home'),
    XDG_RUNTIME_DIR: join(dir, 'run'),
    XDG_CACHE_HOME: join(dir, 'cache'),
    XDG_DATA_HOME: join(dir, 'data'),
    XDG_CONFIG_HOME: join(dir, 'config'),
    XDG_STATE_HOME: join(dir, 'state'),
  };
  for (const path of Object.values(xdg)) mkdirSync(path, { recursive: true, mode: 0o700 });
  Object.assign(env, xdg);
  const socketDir = join(xdg.XDG_RUNTIME_DIR, 'runt');
  return { dir, env, socketPath: join(socketDir, 'runtimed.sock'), infoPath: join(socketDir, 'daemon.json') };
}

function daemonPid(infoPath: string): number | undefined {
  try {
    const pid = (JSON.parse(readFileSync(infoPath, 'utf8')) as { pid?: unknown }).pid;
    return typeof pid === 'number' ? pid : undefined;
  } catch {
    return undefined;
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function waitFor<T>(
  what: string,
  probe: () => Promise<T | undefined> | T | undefined,
  timeoutMs = 60_000,
  detail: () => string = () => '',
) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\n${detail()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The daemon's rooms, asked on the control channel (not through the agent); `undefined` while none answers. */
async function listRooms(
  socketPath: string,
): Promise<{ notebook_id: string; active_peers: number; notebook_path?: string }[] | undefined> {
  let opened: Awaited<ReturnType<typeof RuntimedConnection.open>>;
  try {
    opened = await RuntimedConnection.open({ socketPath, handshake: { channel: 'control' }, timeoutMs: 2_000 });
  } catch {
    return undefined;
  }
  try {
    const answer = await opened.connection.request({ type: 'list_rooms' });
    return answer.rooms as { notebook_id: string; active_peers: number; notebook_path?: string }[];
  } catch {
    return undefined;
  } finally {
    opened.connection.close();
  }
}

/** Stops the daemon this test caused to run (auto-started ones included) and waits for it to be gone. */
function stopDaemonOnCleanup(infoPath: string, seen: Set<number>): void {
  cleanups.push(async () => {
    const current = daemonPid(infoPath);
    if (current !== undefined) seen.add(current);
    for (const pid of seen) if (isAlive(pid)) process.kill(pid, 'SIGTERM');
    await waitFor('the daemons to exit', () => ([...seen].some(isAlive) ? undefined : true), 20_000).catch(() => {
      for (const pid of seen) if (isAlive(pid)) process.kill(pid, 'SIGKILL');
    });
  });
}

/** The shipped proxy (and under it runt-mcp) for one agent, driven through the SDK client. */
async function startAgent(user: ReturnType<typeof freshUser>, toolCache: string) {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [proxyBin, '--tool-cache', join(user.dir, toolCache)],
    env: user.env,
    cwd: user.dir,
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  const client = new Client({ name: 'claude-code', title: 'Claude Code', version: '1.0.0' });
  await client.connect(transport);
  cleanups.push(() => client.close());
  const call = async (name: string, args: Record<string, unknown> = {}) => {
    const result = (await client.callTool({ name, arguments: args }, undefined, { timeout: 120_000 })) as {
      content: { type: string; text: string }[];
      isError?: boolean;
      _meta?: Record<string, unknown>;
    };
    const text = result.content.map((item) => item.text).join('\n');
    expect(result.isError, `${name}: ${text}\n${stderr.slice(-2000)}`).toBeFalsy();
    const json = text.slice(text.indexOf('{'));
    return { result, json: JSON.parse(json) as Record<string, unknown> };
  };
  return { call, stderr: () => stderr };
}

/** Daemon processes started for this user (found by the runtime dir in their environment). */
function daemonsOf(user: ReturnType<typeof freshUser>): number[] {
  const marker = `XDG_RUNTIME_DIR=${user.env.XDG_RUNTIME_DIR}`;
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      if (!cmdline.includes('runtimed.js')) continue;
      if (readFileSync(`/proc/${entry}/environ`, 'utf8').split('\0').includes(marker)) pids.push(Number(entry));
    } catch {
      // gone meanwhile, or not ours
    }
  }
  return pids;
}

describe('a daemon crash under a running agent session', () => {
  it('restarts the daemon and rejoins the saved notebook without a tool call; its cells are there', {
    timeout: 180_000,
  }, async () => {
    const user = freshUser();
    cleanups.push(() => rmSync(user.dir, { recursive: true, force: true }));
    const daemons = new Set<number>();
    stopDaemonOnCleanup(user.infoPath, daemons);
    const agent = await startAgent(user, 'tools.json');
    const { call } = agent;
    const stderr = agent.stderr;

    const created = await call('create_notebook', { ephemeral: false });
    const notebookId = created.json.notebook_id as string;
    const path = join(user.dir, 'kept.ipynb');
    await call('save_notebook', { path });
    for (const source of ['a = 1', 'b = 2', 'c = a + b']) await call('create_cell', { source });

    const status = await call('session_status');
    const firstPid = (status.json.daemon as { pid?: number }).pid as number;
    expect(firstPid).toBe(daemonPid(user.infoPath));
    expect(readSessionReport(status.result)).toMatchObject({ target: path, notebookId });
    daemons.add(firstPid);
    process.kill(firstPid, 'SIGKILL');
    await waitFor('the daemon to die', () => (isAlive(firstPid) ? undefined : true));

    // No tool call from here until the session is back: the test watches the daemon itself.
    const logs = () => stderr().slice(-8000);
    const secondPid = await waitFor(
      'a new daemon',
      () => {
        const pid = daemonPid(user.infoPath);
        return pid !== undefined && pid !== firstPid && isAlive(pid) ? pid : undefined;
      },
      60_000,
      logs,
    );
    daemons.add(secondPid);
    const room = await waitFor(
      'the child to rejoin the notebook',
      async () =>
        (await listRooms(user.socketPath))?.find(
          (candidate) => candidate.notebook_path === path && candidate.active_peers > 0,
        ),
      60_000,
      logs,
    );
    expect(room.notebook_id).toBe(notebookId);
    // Still without a call: the new daemon replayed the journal and saves the edits to the file.
    const sourcesOnDisk = () => {
      try {
        const stored = JSON.parse(readFileSync(path, 'utf8')) as { cells: { source: string | string[] }[] };
        return stored.cells.map((cell) => (Array.isArray(cell.source) ? cell.source.join('') : cell.source));
      } catch {
        return undefined;
      }
    };
    await waitFor(
      'the three acknowledged edits in the saved file',
      () => (sourcesOnDisk()?.join('|') === 'a = 1|b = 2|c = a + b' ? true : undefined),
      30_000,
      () => `${path} holds ${JSON.stringify(sourcesOnDisk())}`,
    );

    // The agent's next call: it finds the session (waiting, if the rejoin is still settling in).
    const cells = (await call('get_all_cells', { format: 'json' })).json.cells as { source: string }[];
    const after = await call('session_status');
    expect(after.json.active, `${JSON.stringify(after.json)}\n${stderr().slice(-6000)}`).toMatchObject({
      notebook_id: notebookId,
      path,
      origin: 'rejoin',
    });
    expect((after.json.daemon as { pid?: number }).pid).toBe(secondPid);
    // The same child all along: neither auto-start (at the first call, and after the crash) was
    // taken for a daemon upgrade (exit 75).
    expect(after.json.proxy).toMatchObject({ restart_count: 0 });
    expect(readSessionReport(after.result)).toMatchObject({ target: path, notebookId });
    // Acknowledged edits survive the crash (the room's journal, replayed by the new daemon).
    expect(cells.map((cell) => cell.source)).toEqual(['a = 1', 'b = 2', 'c = a + b']);
  });
});

describe('several agents on one daemon when it crashes', () => {
  it('brings back one daemon (its singleton lock decides) and every agent rejoins the notebook', {
    timeout: 180_000,
  }, async () => {
    const user = freshUser();
    cleanups.push(() => rmSync(user.dir, { recursive: true, force: true }));
    const daemons = new Set<number>();
    stopDaemonOnCleanup(user.infoPath, daemons);
    const first = await startAgent(user, 'tools-1.json');
    const second = await startAgent(user, 'tools-2.json');
    const created = await first.call('create_notebook', { ephemeral: false });
    const notebookId = created.json.notebook_id as string;
    const path = join(user.dir, 'shared.ipynb');
    await first.call('save_notebook', { path });
    await second.call('connect_notebook', { path });
    const firstPid = daemonPid(user.infoPath) as number;
    daemons.add(firstPid);
    expect(daemonsOf(user)).toEqual([firstPid]);

    process.kill(firstPid, 'SIGKILL');
    await waitFor('the daemon to die', () => (isAlive(firstPid) ? undefined : true));
    const logs = () => `${first.stderr().slice(-4000)}\n---\n${second.stderr().slice(-4000)}`;
    const room = await waitFor(
      'both agents to rejoin',
      async () =>
        (await listRooms(user.socketPath))?.find(
          (candidate) => candidate.notebook_path === path && candidate.active_peers >= 2,
        ),
      60_000,
      logs,
    );
    expect(room.notebook_id).toBe(notebookId);
    for (const pid of daemonsOf(user)) daemons.add(pid);
    const describe = (pid: number) => {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8').split(' ');
        return `${pid} (ppid ${stat[3]}): ${readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ')}`;
      } catch {
        return `${pid} (gone)`;
      }
    };
    // Every child tried to start one; the losers of the daemon's singleton lock give up.
    const winner = daemonPid(user.infoPath) as number;
    await waitFor(
      'one daemon process to remain',
      () => {
        const alive = daemonsOf(user);
        for (const pid of alive) daemons.add(pid);
        return alive.length === 1 && alive[0] === winner ? true : undefined;
      },
      30_000,
      () => `${daemonsOf(user).map(describe).join('\n')}\n${logs()}`,
    );
    for (const agent of [first, second]) {
      await agent.call('get_all_cells', { format: 'json' });
      const status = await agent.call('session_status');
      expect(status.json.active).toMatchObject({ notebook_id: notebookId, path, origin: 'rejoin' });
      expect(readSessionReport(status.result)).toMatchObject({ target: path, notebookId });
    }
  });
});

describe('runt-mcp answers every request', () => {
  it('answers array params and a tools/call without params with -32602, a broken line with -32700, and goes on', {
    timeout: 60_000,
  }, async () => {
    const user = freshUser();
    cleanups.push(() => rmSync(user.dir, { recursive: true, force: true }));
    // As a user's client starts it (default options); a daemon it may have started is stopped.
    stopDaemonOnCleanup(user.infoPath, new Set());
    const child = spawn(process.execPath, [runtMcpBin], {
      env: user.env,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    cleanups.push(() => {
      if (child.exitCode === null) child.kill('SIGKILL');
    });
    let stdout = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
    });
    const send = (line: string) => child.stdin.write(`${line}\n`);
    send(
      JSON.stringify({
        jsonrpc: '2.0',
        id: 0,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'fuzz', version: '1' } },
      }),
    );
    send('{"jsonrpc":"2.0","method":"notifications/initialized"}');
    send('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":["session_status"]}');
    send('{"jsonrpc":"2.0","id":2,"method":"tools/call"}');
    send('{"jsonrpc":"2.0","id":3,"method":"tools/list","params":[]}');
    send('{"jsonrpc":"2.0","id":4,');
    send('{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"session_status"}}');
    const lines = () =>
      stdout
        .split('\n')
        .filter(Boolean)
        .map(
          (line) => JSON.parse(line) as { id: unknown; error?: { code: number; message: string }; result?: unknown },
        );
    await waitFor('six answers', () => (lines().length >= 6 ? true : undefined), 30_000);
    const byId = (id: unknown) => lines().find((line) => line.id === id);
    expect(byId(1)?.error).toEqual({
      code: -32602,
      message: 'Invalid params for tools/call: "params" must be an object (MCP uses named parameters), not an array',
    });
    expect(byId(2)?.error?.code).toBe(-32602);
    expect(byId(2)?.error?.message).toBe(
      'Invalid params for tools/call: params: Invalid input: expected object, received undefined',
    );
    expect(byId(3)?.error?.code).toBe(-32602);
    expect(byId(null)?.error).toEqual({ code: -32700, message: 'Parse error: the line is not valid JSON' });
    // No notebook and no rejoin; the daemon's version is there once the child has asked for it.
    const report = readSessionReport(byId(5)?.result);
    expect(report).toMatchObject({ target: null });
    expect(report?.rejoin).toBeUndefined();
    expect(lines()).toHaveLength(6);
    expect(child.exitCode).toBeNull();
    child.stdin.end();
    await waitFor('runt-mcp to exit', () => (child.exitCode === null ? undefined : child.exitCode), 20_000);
    expect(child.exitCode).toBe(0);
  });
});
