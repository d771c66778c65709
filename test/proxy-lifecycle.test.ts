import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterEach, describe, expect, it } from 'vitest';
import { startUserSession, type UserSession, waitFor } from './support/index.js';

const proxyBin = fileURLToPath(new URL('../packages/nteract-mcp/dist/nteract-mcp.js', import.meta.url));
const everything = fileURLToPath(
  new URL('../node_modules/@modelcontextprotocol/server-everything/dist/index.js', import.meta.url),
);
const cleanups: (() => Promise<void> | void)[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** nteract-mcp as a user starts it (test/support): shipped proxy, auto-started daemon, fresh HOME. */
async function userSession(faultHooks = false): Promise<UserSession> {
  const session = await startUserSession({ faultHooks });
  cleanups.push(() => session.stop());
  return session;
}

async function cellsWith(session: UserSession, source: string): Promise<number> {
  const cells = (await session.call('get_all_cells', { format: 'json' })).json?.cells as
    | { source: string }[]
    | undefined;
  return (cells ?? []).filter((cell) => cell.source === source).length;
}

describe('nteract-mcp as a user runs it: the proxy, its child and the auto-started daemon', () => {
  it('survives a SIGKILL of the idle child: same notebook, same kernel state, one banner', {
    timeout: 120_000,
  }, async () => {
    const t = await userSession();
    const created = await t.call('create_notebook', {});
    expect((await t.call('create_cell', { source: 'x = 41', and_run: true })).isError).toBe(false);
    await t.faults.killChild();
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
    const t = await userSession(true);
    await t.call('create_notebook', {});
    for (let round = 0; round < 3; round++) {
      const source = `marker_${round} = ${round}`;
      // round 0: the child dies on reading the call; 1: after running it, before replying; 2: SIGKILL at once.
      if (round === 0) t.faults.killChildOnRequest('create_cell', `marker_${round}`);
      if (round === 1) t.faults.killChildBeforeReply('create_cell', `marker_${round}`);
      const pending = t.send('create_cell', { source });
      if (round === 2) await t.faults.killChild();
      const answer = await pending;
      expect(answer.ok && !answer.outcome.isError, JSON.stringify(answer)).toBe(true);
      expect(await cellsWith(t, source)).toBe(1);
    }
    expect(t.faults.fired().map((entry) => entry.point)).toEqual(['on-request', 'armed-before-reply', 'before-reply']);
  });

  it('answers a long execution interrupted by a child crash exactly once, without running it twice', {
    timeout: 120_000,
  }, async () => {
    const t = await userSession();
    await t.call('create_notebook', {});
    const runs = join(t.dirs.project, 'runs.log');
    const source = `import time\nwith open(${JSON.stringify(runs)}, 'a') as f:\n    f.write('run\\n')\nruns = globals().get("runs", 0) + 1\ntime.sleep(2)\nprint("done", runs)`;
    const pending = t.send('create_cell', { source, and_run: true, timeout_secs: 60 });
    await waitFor('the execution to start', () => existsSync(runs));
    await t.faults.killChild();
    const answer = await pending;
    expect(answer.ok, JSON.stringify(answer)).toBe(true);
    const text = answer.ok ? answer.outcome.text : '';
    expect(text.includes('done 1') || text.includes('may or may not have taken effect'), text).toBe(true);
    expect(await cellsWith(t, source)).toBe(1);
    const check = await t.call('create_cell', { source: 'print(runs)', and_run: true });
    expect(check.text).toContain('1');
    expect(readFileSync(runs, 'utf8')).toBe('run\n');
    expect(t.transport.requests().every((request) => request.answers === 1)).toBe(true);
  });

  it('opens the breaker after 6 crashes in 30 s and closes it on reconnect', { timeout: 120_000 }, async () => {
    const t = await userSession();
    await t.call('list_active_notebooks');
    let previous: number | undefined;
    for (let crash = 0; crash < 6; crash++) {
      const pid = await t.pids.waitForChild(previous);
      process.kill(pid, 'SIGKILL');
      previous = pid;
    }
    const refused = await t.send('list_active_notebooks');
    expect(refused.ok ? refused.outcome.text : refused.error.message).toMatch(/restart/i);
    const reconnect = await t.call('reconnect');
    expect(reconnect.text).toMatch(/Restart #\d+ \(was #\d+\)/);
    expect((await t.call('list_active_notebooks')).isError).toBe(false);
  });

  it('restarts on a daemon upgrade (exit 75) without using the crash budget, and says so', {
    timeout: 120_000,
  }, async () => {
    const t = await userSession();
    await t.call('create_notebook', { ephemeral: false });
    await t.call('create_cell', { source: 'kept = 1' });
    const before = (await t.call('session_status')).json?.daemon as { version?: string };
    await t.faults.upgradeDaemon('9.9.0');
    const texts: string[] = [];
    const status = await waitFor('the child restart after the upgrade', async () => {
      const answer = await t.call('session_status');
      texts.push(answer.text);
      return (answer.json?.proxy as { restart_count?: number } | undefined)?.restart_count === 1 ? answer : undefined;
    });
    expect(texts.join('\n')).toContain(`[nteract] Daemon upgraded (${String(before.version)} → 9.9.0)`);
    expect(status.json?.proxy).toMatchObject({ restart_count: 1, budget_left: 5, last_exit_class: 'handoff' });
  });
});

/** The proxy alone, with a third-party MCP server as its child (no daemon involved). */
async function startWithChild(child: readonly string[]) {
  const dir = mkdtempSync(join(tmpdir(), 'proxy-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [
      proxyBin,
      '--tool-cache',
      join(dir, 'tools.json'),
      '--child',
      process.execPath,
      ...child.flatMap((arg) => ['--child-arg', arg]),
    ],
    cwd: dir,
    stderr: 'pipe',
  });
  const client = new Client({ name: 'claude-code', title: 'Claude Code', version: '1.0.0' });
  await client.connect(transport);
  cleanups.push(() => client.close());
  const proxyPid = transport.pid as number;
  const call = async (name: string, args: Record<string, unknown> = {}) => {
    const result = (await client.callTool({ name, arguments: args })) as {
      content: { type: string; text: string }[];
      isError?: boolean;
    };
    return { text: result.content.map((item) => item.text).join('\n'), isError: result.isError === true };
  };
  return { call, client, proxyPid };
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
  return waitFor('a new child of the proxy', () => childPids(proxyPid).find((pid) => pid !== previous));
}

describe('nteract-mcp proxy with a third-party child', () => {
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

  it("passes a third-party child's result on unchanged in shape after a restart: content[0] and structuredContent as sent, the notice last", {
    timeout: 60_000,
  }, async () => {
    const t = await startWithChild([everything]);
    const weather = () => t.client.callTool({ name: 'get-structured-content', arguments: { location: 'Chicago' } });
    const before = await weather();
    expect(before.structuredContent).toMatchObject({ conditions: 'Light rain / drizzle' });
    process.kill(await waitForNewChild(t.proxyPid, undefined), 'SIGKILL');
    const after = await weather();
    const content = after.content as { type: string; text?: string }[];
    // What a client reading content[0] (the JSON text) or structuredContent sees is what the child sent.
    expect(content[0]).toEqual((before.content as unknown[])[0]);
    expect(JSON.parse(content[0]?.text ?? '')).toEqual(after.structuredContent);
    expect(after.structuredContent).toEqual(before.structuredContent);
    expect(content.slice(1)).toEqual([{ type: 'text', text: '[nteract] MCP server restarted\n' }]);
    expect(Object.keys(after).sort()).toEqual(Object.keys(before).sort());
    // Delivered once: the next result is exactly what the child sends.
    expect(await weather()).toEqual(before);
  });

  it('keeps a third-party server usable: kill server-everything, the next echo still works', {
    timeout: 60_000,
  }, async () => {
    const t = await startWithChild([everything]);
    expect((await t.call('echo', { message: 'before' })).text).toContain('before');
    process.kill(await waitForNewChild(t.proxyPid, undefined), 'SIGKILL');
    const after = await t.call('echo', { message: 'after' });
    expect(after.isError).toBe(false);
    expect(after.text).toContain('after');
  });
});
