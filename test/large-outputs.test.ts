import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterEach, describe, expect, it } from 'vitest';

/**
 * A user's session with large outputs, through the shipped bins: a fresh HOME and XDG dirs,
 * nothing pre-started (the child auto-starts runtimed), default options, and the MCP SDK client
 * whose stdio read buffer is 10 MiB. Every line the client reads is measured.
 */

const dist = fileURLToPath(new URL('../packages/nteract-mcp/dist/', import.meta.url));
const proxyBin = join(dist, 'nteract-mcp.js');
const runtimedBin = join(dist, 'runtimed.js');
const clientBufferBytes = 10 * 1024 * 1024;
const run = promisify(execFile);
const cleanups: (() => Promise<void> | void)[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface ToolAnswer {
  readonly text: string;
  readonly isError: boolean;
}

/** A fresh user: temporary HOME and XDG dirs, and the environment a client would start us with. */
function freshUser(): { dir: string; env: Record<string, string> } {
  const dir = mkdtempSync(join(tmpdir(), 'large-outputs-'));
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value !== undefined && !key.startsWith('RUNTIMED_') && !key.startsWith('NTERACT_MCP_')) env[key] = value;
  }
  for (const [key, sub] of [
    ['HOME', 'home'],
    ['XDG_RUNTIME_DIR', 'run'],
    ['XDG_CACHE_HOME', 'cache'],
    ['XDG_DATA_HOME', 'data'],
    ['XDG_CONFIG_HOME', 'config'],
  ] as const) {
    const path = join(dir, sub);
    mkdirSync(path, { recursive: true, mode: 0o700 });
    env[key] = path;
  }
  const stopDaemon = async (): Promise<void> => {
    await run(process.execPath, [runtimedBin, 'stop'], { env }).catch(() => undefined);
    const pidFile = join(env.XDG_RUNTIME_DIR as string, 'runt', 'daemon.lock');
    if (existsSync(pidFile)) {
      const pid = Number(readFileSync(pidFile, 'utf8').trim());
      if (Number.isInteger(pid) && pid > 0) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // already gone
        }
      }
    }
  };
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  cleanups.push(stopDaemon);
  return { dir, env };
}

/** One proxy process with an SDK client on it; records the size of every line the client reads. */
async function connect(user: { dir: string; env: Record<string, string> }) {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [proxyBin],
    env: user.env,
    cwd: user.dir,
    stderr: 'pipe',
  });
  const client = new Client({ name: 'claude-code', title: 'Claude Code', version: '1.0.0' });
  const lines: number[] = [];
  let current = 0;
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-20_000);
  });
  const errors: string[] = [];
  await client.connect(transport);
  client.onerror = (error) => errors.push(error.message);
  // The transport reads the child's stdout with its own listener; this one only measures.
  const stdout = (transport as unknown as { _process?: { stdout?: Readable } })._process?.stdout;
  if (!stdout) throw new Error('the SDK transport has no child stdout to measure');
  stdout.on('data', (chunk: Buffer) => {
    let start = 0;
    for (;;) {
      const end = chunk.indexOf(0x0a, start);
      if (end === -1) {
        current += chunk.length - start;
        break;
      }
      lines.push(current + end - start);
      current = 0;
      start = end + 1;
    }
  });
  let open = true;
  const close = async (): Promise<void> => {
    if (!open) return;
    open = false;
    await client.close();
  };
  cleanups.push(close);
  const call = async (name: string, args: Record<string, unknown> = {}): Promise<ToolAnswer> => {
    const result = (await client.callTool({ name, arguments: args }, undefined, { timeout: 180_000 })) as {
      content: { type: string; text: string }[];
      isError?: boolean;
    };
    return { text: result.content.map((item) => item.text).join('\n'), isError: result.isError === true };
  };
  /** A call that may be refused while the notebook converges: repeated until it succeeds. */
  const callWhenReady = async (name: string, args: Record<string, unknown> = {}): Promise<ToolAnswer> => {
    const deadline = Date.now() + 120_000;
    for (;;) {
      const answer = await call(name, args);
      if (!answer.isError) return answer;
      if (Date.now() > deadline) throw new Error(`${name} kept failing: ${answer.text}\n${stderr}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  };
  return { client, call, callWhenReady, close, lines, errors, stderr: () => stderr };
}

/** The JSON of a tool answer's text. */
function json(answer: ToolAnswer): Record<string, unknown> {
  expect(answer.isError, answer.text.slice(0, 2000)).toBe(false);
  return JSON.parse(answer.text) as Record<string, unknown>;
}

describe('large outputs through the shipped proxy (real kernel, auto-started daemon)', () => {
  it('keeps a notebook with a 20 MB output usable: run, save, read, edit, reopen, reopen after a daemon restart', {
    timeout: 600_000,
  }, async () => {
    const user = freshUser();
    const path = join(user.dir, 'big.ipynb');
    const first = await connect(user);
    json(await first.call('create_notebook', {}));
    const ran = json(
      await first.callWhenReady('create_cell', {
        source: "print('x' * 20_000_000)",
        and_run: true,
        timeout_secs: 120,
      }),
    );
    expect(ran.status).toBe('done');
    const [output] = ran.outputs as { text: string }[];
    expect(output?.text.startsWith('xxxx')).toBe(true);
    expect(output?.text).toMatch(
      /characters \(0 line breaks\) cut here; read them with get_results\(execution_id="[^"]+", offset=\d+\)\] …\n/,
    );
    expect(output?.text.endsWith('xxxx\n')).toBe(true);
    const cellId = String(ran.cell_id);

    json(await first.call('save_notebook', { path }));
    expect(existsSync(path)).toBe(true);

    // Asked for all of it at once, a page is as much as fits in one result, and says where to go on.
    const full = json(await first.call('get_cell', { cell_id: cellId, offset: 0, length: 50_000_000 }));
    const page = full.outputs_page as { text: string; next_offset?: number; note?: string; total_chars: number };
    expect(page.text.length).toBeGreaterThan(1_000_000);
    expect(page.total_chars).toBeGreaterThan(20_000_000);
    expect(page.next_offset).toBe(page.text.length);
    expect(page.note).toMatch(/^Shortened to \d+ characters to fit the limit of one tool result/);
    const results = json(
      await first.call('get_results', { execution_id: ran.execution_id, offset: 0, length: 50_000_000 }),
    );
    expect((results.outputs_page as { next_offset?: number }).next_offset).toBeGreaterThan(1_000_000);
    const listed = json(await first.call('get_all_cells', { format: 'json' }));
    expect((listed.cells as { cell_id: string }[]).map((cell) => cell.cell_id)).toEqual([cellId]);
    expect((await first.call('get_all_cells', { format: 'rich' })).isError).toBe(false);
    json(await first.call('set_cell', { cell_id: cellId, source: "print('x' * 20_000_000)  # edited" }));
    expect(json(await first.call('get_cell', { cell_id: cellId })).source).toBe("print('x' * 20_000_000)  # edited");
    await first.close();

    // A new client session opens the saved notebook by its path.
    const second = await connect(user);
    json(await second.call('connect_notebook', { path }));
    const reopened = json(await second.callWhenReady('get_cell', { cell_id: cellId }));
    expect(reopened.source).toBe("print('x' * 20_000_000)  # edited");
    expect((reopened.outputs as { text: string }[])[0]?.text.startsWith('xxxx')).toBe(true);
    await second.close();

    // After the daemon stops, a fresh proxy starts it again and the notebook opens from disk.
    await run(process.execPath, [runtimedBin, 'stop'], { env: user.env });
    const third = await connect(user);
    json(await third.call('connect_notebook', { path }));
    const afterRestart = json(await third.callWhenReady('get_cell', { cell_id: cellId }));
    expect((afterRestart.outputs as { text: string }[])[0]?.text.startsWith('xxxx')).toBe(true);
    await third.close();

    for (const session of [first, second, third]) {
      expect(session.errors).toEqual([]);
      expect(session.lines.length).toBeGreaterThan(0);
      expect(Math.max(...session.lines)).toBeLessThan(clientBufferBytes);
    }
  });

  it('answers get_all_cells over four 5 MB cells in json with what fits and where to go on, never a hang; takes a 12 MB cell', {
    timeout: 600_000,
  }, async () => {
    const user = freshUser();
    const session = await connect(user);
    json(await session.call('create_notebook', {}));
    const ids: string[] = [];
    for (const letter of ['a', 'b', 'c', 'd']) {
      const created = json(await session.callWhenReady('create_cell', { source: letter.repeat(5_000_000) }));
      ids.push(String(created.cell_id));
    }
    // Page through with next_start: every answer within the budget, every cell seen once, in order.
    const seen: string[] = [];
    let start = 0;
    for (let page = 0; page < 8; page += 1) {
      const listed = json(await session.call('get_all_cells', { format: 'json', start }));
      const cells = listed.cells as { cell_id: string; source: string }[];
      expect(cells.length).toBeGreaterThan(0);
      seen.push(...cells.map((cell) => cell.cell_id));
      const truncated = listed.truncated as { next_start: number; note: string } | undefined;
      if (truncated === undefined) break;
      expect(truncated.note).toContain(`get_all_cells(format="json", start=${truncated.next_start})`);
      start = truncated.next_start;
    }
    expect(seen).toEqual(ids);
    // A request larger than the SDK's default 10 MiB read buffer reaches the child, and the cell
    // larger than a result comes back cut, saying so.
    const huge = json(await session.call('create_cell', { source: 'e'.repeat(12_000_000) }));
    const cut = json(await session.call('get_cell', { cell_id: String(huge.cell_id) }));
    expect(String(cut.source).startsWith('eeee')).toBe(true);
    expect(cut.source).toMatch(/more characters not shown: one tool result is limited to 8 MiB\]$/);
    // With a count, as much as one tool result holds (without one, a default answer of about 48 KiB).
    const rich = await session.call('get_all_cells', { format: 'rich', count: 5 });
    expect(rich.isError).toBe(false);
    expect(rich.text).toContain('are not shown: one tool result is limited to 8 MiB');
    await session.close();
    expect(session.errors).toEqual([]);
    expect(Math.max(...session.lines)).toBeLessThan(clientBufferBytes);
  });
});
