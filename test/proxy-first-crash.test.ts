import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterEach, describe, expect, it } from 'vitest';

const dist = fileURLToPath(new URL('../packages/nteract-mcp/dist/', import.meta.url));
const cleanups: (() => Promise<void> | void)[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A user's environment on a fresh machine: empty HOME and XDG dirs, nothing pre-started, default options. */
function freshUserEnvironment(): Record<string, string> {
  const root = mkdtempSync(join(tmpdir(), 'first-crash-'));
  cleanups.push(() => rmSync(root, { recursive: true, force: true }));
  const dirs = {
    HOME: join(root, 'home'),
    XDG_CACHE_HOME: join(root, 'cache'),
    XDG_DATA_HOME: join(root, 'data'),
    XDG_CONFIG_HOME: join(root, 'config'),
    XDG_RUNTIME_DIR: join(root, 'run'),
  };
  for (const dir of Object.values(dirs)) mkdirSync(dir, { recursive: true, mode: 0o700 });
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value !== undefined && !key.startsWith('NTERACT_MCP_') && !key.startsWith('RUNTIMED_')) env[key] = value;
  }
  return { ...env, ...dirs };
}

/** Stops the daemon the child auto-started under `env`, and waits until none answers. */
function stopDaemon(env: Record<string, string>): void {
  const runtimed = join(dist, 'runtimed.js');
  spawnSync(process.execPath, [runtimed, 'stop'], { env, encoding: 'utf8', timeout: 30_000 });
  const status = spawnSync(process.execPath, [runtimed, 'status'], { env, encoding: 'utf8', timeout: 30_000 });
  if (status.status !== 3) throw new Error(`the auto-started daemon is still running: ${status.stdout}`);
}

/** The value of `name` in a live process's environment (Linux `/proc`), if it is set. */
function environmentOf(pid: number, name: string): string | undefined {
  const entries = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
  const entry = entries.find((item) => item.startsWith(`${name}=`));
  return entry?.slice(name.length + 1);
}

interface ToolAnswer {
  readonly text: string;
  readonly isError: boolean;
  readonly json: Record<string, unknown> | undefined;
}

describe('nteract-mcp on a fresh install: the first crash of the MCP server', () => {
  it('hands the notebook to the restarted child, which answers the very next call in the same kernel', {
    timeout: 240_000,
  }, async () => {
    const env = freshUserEnvironment();
    cleanups.push(() => stopDaemon(env));
    const stderr: string[] = [];
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [join(dist, 'nteract-mcp.js')],
      env,
      cwd: env.HOME,
      stderr: 'pipe',
    });
    transport.stderr?.on('data', (chunk: Buffer) => stderr.push(chunk.toString()));
    const client = new Client({ name: 'claude-code', title: 'Claude Code', version: '1.0.0' });
    await client.connect(transport);
    cleanups.push(() => client.close());
    const call = async (name: string, args: Record<string, unknown> = {}): Promise<ToolAnswer> => {
      const result = (await client.callTool({ name, arguments: args }, undefined, { timeout: 120_000 })) as {
        content: { type: string; text?: string }[];
        isError?: boolean;
      };
      const texts = result.content.map((item) => item.text ?? '');
      const jsonText = texts.find((text) => text.trimStart().startsWith('{'));
      let json: Record<string, unknown> | undefined;
      try {
        json = jsonText === undefined ? undefined : JSON.parse(jsonText);
      } catch {
        json = undefined;
      }
      return { text: texts.join('\n'), isError: result.isError === true, json };
    };

    const created = await call('create_notebook');
    expect(created.isError, created.text).toBe(false);
    const first = await call('create_cell', { source: 'x = 41', and_run: true });
    expect(first.isError, first.text).toBe(false);
    const before = await call('session_status');
    const proxyBefore = before.json?.proxy as { child_pid: number; handoff_target: string | null } | undefined;
    expect(proxyBefore?.handoff_target, before.text).toBeTruthy();
    const oldPid = proxyBefore?.child_pid as number;

    process.kill(oldPid, 'SIGKILL');
    // The agent's next call, sent at once, as an agent does.
    const after = await call('create_cell', { source: 'print(x + 1)', and_run: true });

    const status = await call('session_status');
    const proxyAfter = status.json?.proxy as { child_pid: number; restart_count: number } | undefined;
    expect(proxyAfter?.restart_count, status.text).toBe(1);
    expect(proxyAfter?.child_pid).not.toBe(oldPid);
    expect(environmentOf(proxyAfter?.child_pid as number, 'NTERACT_MCP_REJOIN_NOTEBOOK')).toBe(
      proxyBefore?.handoff_target,
    );
    expect(after.isError, `${after.text}\n--- proxy stderr ---\n${stderr.join('').slice(-4000)}`).toBe(false);
    expect(after.text).toContain('[nteract] MCP server restarted, session reconnected to');
    expect(after.text).toContain('42');
  });
});
