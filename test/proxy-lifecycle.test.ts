import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { startTestDaemon, type TestDaemon } from '@nteract-mcp/daemon/testing';
import { afterEach, describe, expect, it } from 'vitest';

const proxyBin = fileURLToPath(new URL('../packages/nteract-mcp/dist/nteract-mcp.js', import.meta.url));
const everything = fileURLToPath(
  new URL('../node_modules/@modelcontextprotocol/server-everything/dist/index.js', import.meta.url),
);
const cleanups: (() => Promise<void> | void)[] = [];

afterEach(async () => {
  delete process.env.RUNTIMED_REPORTED_VERSION;
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface ToolResult {
  readonly text: string;
  readonly isError: boolean;
  readonly json: Record<string, unknown> | undefined;
}

/** The children of a process (the proxy's child MCP server). */
function childPids(pid: number): number[] {
  try {
    return execFileSync('pgrep', ['-P', String(pid)], { encoding: 'utf8' })
      .split('\n')
      .filter(Boolean)
      .map(Number);
  } catch {
    return [];
  }
}

async function waitForNewChild(proxyPid: number, previous: number | undefined): Promise<number> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const [pid] = childPids(proxyPid);
    if (pid !== undefined && pid !== previous) return pid;
    if (Date.now() > deadline) throw new Error('the proxy did not start a new child');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** A real daemon, the real proxy and, under it, the real runt-mcp, driven by an SDK client. */
async function start(
  options: { daemonArgs?: readonly string[]; proxyArgs?: readonly string[]; child?: readonly string[] } = {},
) {
  const dir = mkdtempSync(join(tmpdir(), 'proxy-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  let daemon: TestDaemon | undefined;
  if (!options.child) {
    daemon = await startTestDaemon(options.daemonArgs ?? ['--keep-alive-ms', '60000']);
    const started = daemon;
    cleanups.push(() => started.dispose());
  }
  const childArgs = options.child
    ? ['--child', process.execPath, ...options.child.flatMap((arg) => ['--child-arg', arg])]
    : [];
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [proxyBin, '--tool-cache', join(dir, 'tools.json'), ...childArgs, ...(options.proxyArgs ?? [])],
    env: {
      ...process.env,
      RUNTIMED_SOCKET_PATH: daemon?.socketPath ?? join(dir, 'none.sock'),
      NTERACT_MCP_NO_AUTOSTART: '1',
    } as Record<string, string>,
    cwd: dir,
    stderr: 'pipe',
  });
  const client = new Client({ name: 'claude-code', title: 'Claude Code', version: '1.0.0' });
  await client.connect(transport);
  cleanups.push(() => client.close());
  const proxyPid = transport.pid as number;
  const call = async (name: string, args: Record<string, unknown> = {}): Promise<ToolResult> => {
    const result = (await client.callTool({ name, arguments: args }, undefined, { timeout: 120_000 })) as {
      content: { type: string; text: string }[];
      isError?: boolean;
    };
    const text = result.content.map((item) => item.text).join('\n');
    const jsonText = result.content.find((item) => item.text.trimStart().startsWith('{'))?.text;
    let json: Record<string, unknown> | undefined;
    try {
      json = jsonText === undefined ? undefined : JSON.parse(jsonText);
    } catch {
      json = undefined;
    }
    return { text, isError: result.isError === true, json };
  };
  const killChild = async (): Promise<number> => {
    const pid = await waitForNewChild(proxyPid, undefined);
    process.kill(pid, 'SIGKILL');
    return pid;
  };
  const cellsWith = async (source: string): Promise<number> => {
    const cells = (await call('get_all_cells', { format: 'json' })).json?.cells as { source: string }[] | undefined;
    return (cells ?? []).filter((cell) => cell.source === source).length;
  };
  return { client, call, killChild, cellsWith, proxyPid, daemon, dir };
}

describe('nteract-mcp proxy with a real child and daemon', () => {
  it('survives a SIGKILL of the idle child: same notebook, same kernel state, one banner', {
    timeout: 120_000,
  }, async () => {
    const t = await start();
    const created = await t.call('create_notebook', {});
    expect((await t.call('create_cell', { source: 'x = 41', and_run: true })).isError).toBe(false);
    const old = await t.killChild();
    await waitForNewChild(t.proxyPid, old);
    const after = await t.call('create_cell', { source: 'print(x + 1)', and_run: true });
    expect(after.isError, after.text).toBe(false);
    expect(after.text).toContain('[nteract] MCP server restarted, session reconnected');
    expect(after.text).toContain('42');
    const status = await t.call('session_status');
    expect(status.text).not.toContain('[nteract]');
    expect(status.json).toMatchObject({
      active: { notebook_id: created.json?.notebook_id },
      proxy: { restart_count: 1, breaker: 'closed' },
    });
  });

  it('never inserts a cell twice when the child dies right after the call was written', {
    timeout: 120_000,
  }, async () => {
    const t = await start();
    await t.call('create_notebook', {});
    for (let round = 0; round < 3; round++) {
      const source = `marker_${round} = ${round}`;
      const pending = t.client.callTool({ name: 'create_cell', arguments: { source } }, undefined, {
        timeout: 120_000,
      });
      await t.killChild();
      const answer = await pending.then(
        (result) => ({ ok: true, result }),
        (error: unknown) => ({ ok: false, error }),
      );
      expect(answer.ok, JSON.stringify(answer)).toBe(true);
      expect(await t.cellsWith(source)).toBe(1);
    }
  });

  it('answers a long execution interrupted by a child crash exactly once, without running it twice', {
    timeout: 120_000,
  }, async () => {
    const t = await start();
    await t.call('create_notebook', {});
    const source = 'import time\nruns = globals().get("runs", 0) + 1\ntime.sleep(2)\nprint("done", runs)';
    const pending = t.client.callTool(
      { name: 'create_cell', arguments: { source, and_run: true, timeout_secs: 60 } },
      undefined,
      { timeout: 120_000 },
    );
    await new Promise((resolve) => setTimeout(resolve, 800));
    await t.killChild();
    const answer = (await pending) as { content: { text: string }[]; isError?: boolean };
    const text = answer.content.map((item) => item.text).join('\n');
    expect(text.includes('done 1') || text.includes('may or may not have taken effect'), text).toBe(true);
    expect(await t.cellsWith(source)).toBe(1);
    const check = await t.call('create_cell', { source: 'print(runs)', and_run: true });
    expect(check.text).toContain('1');
  });

  it('opens the breaker after 6 crashes in 30 s and closes it on reconnect', { timeout: 120_000 }, async () => {
    const t = await start();
    await t.call('list_active_notebooks');
    let previous: number | undefined;
    for (let crash = 0; crash < 6; crash++) {
      const pid = await waitForNewChild(t.proxyPid, previous);
      process.kill(pid, 'SIGKILL');
      previous = pid;
    }
    await new Promise((resolve) => setTimeout(resolve, 300));
    const refused = await t.client.callTool({ name: 'list_active_notebooks', arguments: {} }).then(
      () => undefined,
      (error: Error) => error,
    );
    expect(refused?.message).toMatch(/restart/i);
    const reconnect = await t.call('reconnect');
    expect(reconnect.text).toMatch(/Restart #\d+ \(was #\d+\)/);
    expect((await t.call('list_active_notebooks')).isError).toBe(false);
  });

  it('restarts on a daemon upgrade (exit 75) without using the crash budget, and says so', {
    timeout: 120_000,
  }, async () => {
    process.env.RUNTIMED_REPORTED_VERSION = '1.0.0';
    const t = await start();
    await t.call('create_notebook', { ephemeral: false });
    await t.call('create_cell', { source: 'kept = 1' });
    const daemon = t.daemon as TestDaemon;
    await daemon.stop();
    process.env.RUNTIMED_REPORTED_VERSION = '1.1.0';
    const upgraded = await daemon.restart();
    cleanups.push(() => upgraded.dispose());
    const deadline = Date.now() + 30_000;
    let status = await t.call('session_status');
    while (
      (status.json?.proxy as { restart_count?: number } | undefined)?.restart_count !== 1 &&
      Date.now() < deadline
    ) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      status = await t.call('session_status');
    }
    expect(status.text).toContain('[nteract] Daemon upgraded (1.0.0 → 1.1.0)');
    expect(status.json?.proxy).toMatchObject({ restart_count: 1, budget_left: 5, last_exit_class: 'handoff' });
  });

  it('keeps the upstream handshake single for a legacy client across child restarts', { timeout: 60_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'proxy-raw-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const proxy = spawn(
      process.execPath,
      [
        proxyBin,
        '--tool-cache',
        join(dir, 't.json'),
        '--max-line-bytes',
        '4096',
        '--child',
        process.execPath,
        '--child-arg',
        everything,
      ],
      {
        stdio: ['pipe', 'pipe', 'pipe'],
      },
    );
    cleanups.push(() => {
      proxy.kill('SIGKILL');
    });
    let out = '';
    proxy.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      out += chunk;
    });
    const send = (message: object) => proxy.stdin.write(`${JSON.stringify(message)}\n`);
    const lines = () =>
      out
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as Record<string, unknown>);
    const answerTo = async (id: number) => {
      const deadline = Date.now() + 20_000;
      for (;;) {
        const found = lines().find((line) => line.id === id);
        if (found) return found;
        if (Date.now() > deadline) throw new Error(`no answer to ${id}: ${out}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    };
    send({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    });
    await answerTo(1);
    send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'echo', arguments: { message: 'one' } } });
    expect(JSON.stringify(await answerTo(2))).toContain('one');
    process.kill(await waitForNewChild(proxy.pid as number, undefined), 'SIGKILL');
    send({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'echo', arguments: { message: 'two' } } });
    expect(JSON.stringify(await answerTo(3))).toContain('two');
    send('not json' as unknown as object);
    proxy.stdin.write('{"jsonrpc":"2.0","id":4,\n');
    const parseErrors = () => lines().filter((line) => (line.error as { code?: number } | undefined)?.code === -32700);
    const deadline = Date.now() + 5000;
    while (parseErrors().length < 2 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(parseErrors().every((line) => line.id === null)).toBe(true);
    expect(
      lines().filter((line) => (line.result as { serverInfo?: unknown } | undefined)?.serverInfo !== undefined),
    ).toHaveLength(1);
    expect(lines().some((line) => line.method === 'initialize')).toBe(false);
    send({
      jsonrpc: '2.0',
      id: 5,
      method: 'tools/call',
      params: { name: 'echo', arguments: { message: 'x'.repeat(5000) } },
    });
    expect((await answerTo(5)).error).toMatchObject({ code: -32600 });
    send({
      jsonrpc: '2.0',
      id: 6,
      method: 'tools/call',
      params: { name: 'echo', arguments: { message: 'after the long line' } },
    });
    expect(JSON.stringify(await answerTo(6))).toContain('after the long line');
  });

  it('keeps a third-party server usable: kill server-everything, the next echo still works', {
    timeout: 60_000,
  }, async () => {
    const t = await start({ child: [everything] });
    expect((await t.call('echo', { message: 'before' })).text).toContain('before');
    const old = await t.killChild();
    await waitForNewChild(t.proxyPid, old);
    const after = await t.call('echo', { message: 'after' });
    expect(after.isError).toBe(false);
    expect(after.text).toContain('after');
  });
});
