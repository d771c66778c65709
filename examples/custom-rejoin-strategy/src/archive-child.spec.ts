import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { handoffEnvironment, readSessionReport } from '@nteract-mcp/core';
import { runtimedEntry } from 'nteract-mcp';
import { afterEach, describe, expect, it } from 'vitest';

const childBin = fileURLToPath(new URL('../dist/archive-child.js', import.meta.url));
const archivedNotebook = {
  cells: [{ cell_type: 'code', id: 'c1', metadata: {}, source: 'answer = 41 + 1', outputs: [], execution_count: null }],
  metadata: { kernelspec: { name: 'python3', display_name: 'Python 3', language: 'python' } },
  nbformat: 4,
  nbformat_minor: 5,
};

/** A fresh user: temp HOME with its XDG dirs, the archive, the working copies; no daemon running. */
function makeUser() {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'archive-child-')));
  const dirs = {
    root,
    home: join(root, 'home'),
    runtime: join(root, 'run'),
    project: join(root, 'project'),
    archive: join(root, 'archive'),
    work: join(root, 'work'),
  };
  for (const dir of Object.values(dirs)) mkdirSync(dir, { recursive: true, mode: 0o700 });
  writeFileSync(join(dirs.archive, 'report.ipynb'), JSON.stringify(archivedNotebook));
  const inherited = Object.fromEntries(
    Object.entries(process.env).filter(
      (entry): entry is [string, string] =>
        entry[1] !== undefined && !/^(NTERACT_|RUNTIMED_|XDG_|JUPYTER_|JPY_|NODE_OPTIONS$)/.test(entry[0]),
    ),
  );
  const env: Record<string, string> = {
    ...inherited,
    HOME: dirs.home,
    XDG_CONFIG_HOME: join(dirs.home, '.config'),
    XDG_CACHE_HOME: join(dirs.home, '.cache'),
    XDG_DATA_HOME: join(dirs.home, '.local', 'share'),
    XDG_STATE_HOME: join(dirs.home, '.local', 'state'),
    XDG_RUNTIME_DIR: dirs.runtime,
    ACME_ARCHIVE_DIR: dirs.archive,
    ACME_ARCHIVE_WORK_DIR: dirs.work,
  };
  return { dirs, env };
}

/** Every process that runs with `home` as its HOME (the daemon it auto-started, its kernels). */
function processesWithHome(home: string): number[] {
  const needle = `\0HOME=${home}\0`;
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name) && Number(name) !== process.pid)
    .map(Number)
    .filter((pid) => {
      try {
        return `\0${readFileSync(`/proc/${pid}/environ`, 'utf8')}`.includes(needle);
      } catch {
        return false;
      }
    });
}

async function waitFor<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

interface RunningChild {
  readonly client: Client;
  readonly transport: StdioClientTransport;
  readonly stderr: () => string;
  call(name: string, args?: Record<string, unknown>): Promise<CallToolResult>;
}

async function startChild(env: Record<string, string>, cwd: string): Promise<RunningChild> {
  const transport = new StdioClientTransport({ command: process.execPath, args: [childBin], env, cwd, stderr: 'pipe' });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer | string) => {
    stderr += chunk.toString();
  });
  const client = new Client({ name: 'claude-code', title: 'Claude Code', version: '1.0.0' });
  await client.connect(transport);
  return {
    client,
    transport,
    stderr: () => stderr,
    call: async (name, args = {}) => (await client.callTool({ name, arguments: args })) as CallToolResult,
  };
}

function text(result: CallToolResult): string {
  return result.content.map((item) => (item.type === 'text' ? item.text : '')).join('');
}

describe('the archive plugin in a real child (core child server over stdio, the distribution plugins plus this one)', () => {
  let cleanup: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await cleanup?.();
    cleanup = undefined;
  });

  it('connects archive:report.ipynb through connect_notebook, reads it with a notebook tool, and rejoins it with its own strategy after a restart', async () => {
    const { dirs, env } = makeUser();
    const children: RunningChild[] = [];
    cleanup = async () => {
      for (const child of children) await child.client.close().catch(() => undefined);
      spawnSync(process.execPath, [runtimedEntry(), 'stop'], { env, cwd: dirs.project, encoding: 'utf8' });
      await waitFor('the processes of the test user to exit', () => {
        const left = processesWithHome(dirs.home);
        for (const pid of left) process.kill(pid, 'SIGKILL');
        return left.length === 0 ? true : undefined;
      });
      rmSync(dirs.root, { recursive: true, force: true });
    };

    const first = await startChild(env, dirs.project);
    children.push(first);
    const connected = await first.call('connect_notebook', { url: 'archive:report.ipynb' });
    expect(connected.isError, text(connected) + first.stderr()).not.toBe(true);
    expect(JSON.parse(text(connected))).toMatchObject({ path: join(dirs.work, 'report.ipynb'), connected: true });
    expect(readSessionReport(connected)?.target).toBe('archive:report.ipynb');
    const cells = await waitFor('the checked-out notebook to list its cell', async () => {
      const listed = await first.call('get_all_cells');
      return !listed.isError && text(listed).includes('answer = 41 + 1') ? text(listed) : undefined;
    });
    expect(cells).toContain('answer = 41 + 1');

    // The child dies; a new one is handed the rejoin target, as the proxy does on a restart.
    const pid = first.transport.pid;
    if (pid === null) throw new Error('the first child has no pid');
    process.kill(pid, 'SIGKILL');
    await waitFor('the first child to exit', () => (processesWithHome(dirs.home).includes(pid) ? undefined : true));
    const second = await startChild(
      { ...env, [handoffEnvironment.rejoinNotebook]: 'archive:report.ipynb' },
      dirs.project,
    );
    children.push(second);
    const status = JSON.parse(text(await second.call('session_status'))) as {
      active: { target: string; origin: string; path: string } | null;
      session_report: { rejoin?: { outcome: string } };
    };
    expect(status.session_report.rejoin?.outcome, second.stderr()).toBe('rejoined');
    expect(status.active).toMatchObject({
      target: 'archive:report.ipynb',
      origin: 'rejoin',
      path: join(dirs.work, 'report.ipynb'),
    });
    expect(second.stderr()).toMatch(/rejoin at start.*"result":"published"/);
    const again = await second.call('get_all_cells');
    expect(text(again)).toContain('answer = 41 + 1');
  }, 180_000);
});
