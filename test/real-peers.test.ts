import { execFile } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterEach, describe, expect, it, onTestFinished } from 'vitest';
import {
  childrenOf,
  createUserEnvironment,
  isAlive,
  processesWithHome,
  shippedBins,
  spawnShippedProxy,
  type UserEnvironment,
  waitFor,
} from './support/index.js';

/** A subclass of the stdio transport: the v2 client then runs its era probe on this process (no sibling spawn). */
class InPlace extends StdioClientTransport {}

type Mode = 'pin' | 'auto' | 'legacy';

interface Peer {
  readonly client: Client;
  readonly transport: StdioClientTransport;
  readonly environment: UserEnvironment;
  call(name: string, args?: Record<string, unknown>): Promise<{ text: string; isError: boolean; json: unknown }>;
  childPid(): number | undefined;
  stderr(): string;
  stop(): Promise<void>;
}

const peers: Peer[] = [];
afterEach(async () => {
  for (const peer of peers.splice(0)) await peer.stop();
});

/**
 * The shipped proxy as a user starts it (fresh HOME/XDG dirs, no daemon, default options), driven
 * by the independent v2 client (@modelcontextprotocol/client 2.4.0) in `mode`.
 */
async function startPeer(mode: Mode): Promise<Peer> {
  const environment = createUserEnvironment(shippedBins.runtimed);
  const { transport, stderr } = spawnShippedProxy(mode === 'legacy' ? StdioClientTransport : InPlace, {
    env: environment.env,
    cwd: environment.dirs.project,
  });
  const client = new Client(
    { name: 'v2-peer', version: '2.4.0' },
    { versionNegotiation: { mode: mode === 'pin' ? { pin: '2026-07-28' } : mode } },
  );
  const childPid = (): number | undefined => {
    const proxy = transport.pid;
    if (proxy === null) return undefined;
    return childrenOf(proxy).find((info) => info.cmdline.includes('runt-mcp'))?.pid;
  };
  let stopped: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopped ??= (async () => {
      const started = [transport.pid, childPid()].filter((pid): pid is number => typeof pid === 'number');
      await client.close().catch(() => undefined);
      for (const pid of started) {
        await waitFor(`process ${pid} to exit`, () => !isAlive(pid), { timeoutMs: 15_000 }).catch(() => {
          if (isAlive(pid)) process.kill(pid, 'SIGKILL');
        });
      }
      await environment.cleanup();
    })();
    return stopped;
  };
  const peer: Peer = {
    client,
    transport,
    environment,
    call: async (name, args = {}) => {
      const raw = (await client.callTool({ name, arguments: args }, { timeout: 180_000 })) as {
        content?: { type: string; text?: string }[];
        isError?: boolean;
      };
      const texts = (raw.content ?? []).filter((item) => item.type === 'text').map((item) => item.text ?? '');
      const jsonText = texts.find((text) => text.trimStart().startsWith('{'));
      return {
        text: texts.join('\n'),
        isError: raw.isError === true,
        json: jsonText ? JSON.parse(jsonText) : undefined,
      };
    },
    childPid,
    stderr,
    stop,
  };
  peers.push(peer);
  try {
    await client.connect(transport);
  } catch (error) {
    throw new Error(`the v2 client (${mode}) did not connect: ${(error as Error).message}\n${stderr()}`);
  }
  return peer;
}

/** The eras the children opened, from their `protocol era opened` log lines (stderr), in order. */
function erasOpened(peer: Peer): string[] {
  return peer
    .stderr()
    .split('\n')
    .filter((line) => line.includes('protocol era opened'))
    .map((line) => {
      const fields = JSON.parse(line.slice(line.indexOf('{'))) as { era: string; protocolVersion: string };
      return `${fields.era} ${fields.protocolVersion}`;
    });
}

/** connect → create_notebook → create_cell with and_run → get_all_cells showing the output. */
async function runNotebook(peer: Peer): Promise<string> {
  const created = await peer.call('create_notebook', {});
  expect(created.isError, created.text).toBe(false);
  const notebookId = (created.json as { notebook_id?: string } | undefined)?.notebook_id;
  expect(notebookId).toEqual(expect.any(String));
  const run = await peer.call('create_cell', { source: 'x = 6 * 7\nprint(x)', and_run: true });
  expect(run.isError, run.text).toBe(false);
  expect(run.text).toContain('42');
  const cells = await cellsOf(peer);
  expect(cells, JSON.stringify(cells)).toHaveLength(1);
  expect(cells[0]?.source).toBe('x = 6 * 7\nprint(x)');
  expect(JSON.stringify(cells[0]?.outputs)).toContain('42');
  await expectInputErrorsAsResults(peer);
  return notebookId as string;
}

/**
 * SEP-1303 through the shipped proxy: bad arguments and an unknown cell id are tool results with
 * `isError` and a text saying what to fix; an unknown tool stays a JSON-RPC error (-32602).
 */
async function expectInputErrorsAsResults(peer: Peer): Promise<void> {
  const unknownCell = await peer.call('get_cell', { cell_id: 'no-such-cell' });
  expect(unknownCell).toMatchObject({ isError: true, text: 'Cell not found: no-such-cell' });
  const badFormat = await peer.call('get_all_cells', { format: 'xml' });
  expect(badFormat.isError, badFormat.text).toBe(true);
  expect(badFormat.text).toMatch(
    /^Invalid arguments for get_all_cells: format: .*Correct them and call get_all_cells again/,
  );
  await expect(peer.call('no_such_tool', {})).rejects.toMatchObject({ code: -32602 });
}

/** The live cells of the active notebook (get_all_cells, JSON, with outputs). */
async function cellsOf(peer: Peer): Promise<{ source: string; outputs?: unknown }[]> {
  const read = await peer.call('get_all_cells', { format: 'json' });
  expect(read.isError, read.text).toBe(false);
  return (read.json as { cells?: { source: string; outputs?: unknown }[] } | undefined)?.cells ?? [];
}

describe('real peers: the v2 client (@modelcontextprotocol/client 2.4.0) against the shipped nteract-mcp', () => {
  it('pinned to 2026-07-28: serves the native era end to end', { timeout: 240_000 }, async () => {
    const peer = await startPeer('pin');
    expect(peer.client.getNegotiatedProtocolVersion()).toBe('2026-07-28');
    await runNotebook(peer);
    await waitFor('the child to log its era', () => erasOpened(peer).length > 0);
    expect(erasOpened(peer)).toEqual(['native 2026-07-28']);
  });

  it('auto: probes in place and chooses 2026-07-28', { timeout: 240_000 }, async () => {
    const peer = await startPeer('auto');
    expect(peer.client.getNegotiatedProtocolVersion()).toBe('2026-07-28');
    await runNotebook(peer);
    await waitFor('the child to log its era', () => erasOpened(peer).length > 0);
    expect(erasOpened(peer)).toEqual(['native 2026-07-28']);
  });

  it('legacy: the initialize handshake still serves everything', { timeout: 240_000 }, async () => {
    const peer = await startPeer('legacy');
    expect(peer.client.getNegotiatedProtocolVersion()).toBe('2025-11-25');
    await runNotebook(peer);
    await waitFor('the child to log its era', () => erasOpened(peer).length > 0);
    expect(erasOpened(peer)).toEqual(['legacy 2025-11-25']);
  });

  it('pinned native session survives a SIGKILL of the child: next call answers on the same notebook with the kernel state', {
    timeout: 240_000,
  }, async () => {
    const peer = await startPeer('pin');
    const notebookId = await runNotebook(peer);
    const child = await waitFor('the running child', () => peer.childPid());
    process.kill(child, 'SIGKILL');
    const after = await peer.call('create_cell', { source: 'print(x + 0)', and_run: true });
    expect(after.isError, after.text).toBe(false);
    expect(after.text).toContain('42');
    expect(peer.client.getNegotiatedProtocolVersion()).toBe('2026-07-28');
    const restarted = peer.childPid();
    expect(restarted).toEqual(expect.any(Number));
    expect(restarted).not.toBe(child);
    const status = await peer.call('session_status', {});
    expect(status.json).toMatchObject({ active: { notebook_id: notebookId }, proxy: { restart_count: 1 } });
    const cells = await cellsOf(peer);
    expect(cells.map((cell) => cell.source)).toEqual(['x = 6 * 7\nprint(x)', 'print(x + 0)']);
    expect(JSON.stringify(cells[1]?.outputs)).toContain('42');
    // Each child (the first and its replacement) opened the native era itself: nothing was replayed.
    await waitFor('both children to open their era', () => erasOpened(peer).length === 2);
    expect(erasOpened(peer)).toEqual(['native 2026-07-28', 'native 2026-07-28']);
  });

  it('stop leaves nothing behind', { timeout: 240_000 }, async () => {
    const peer = await startPeer('pin');
    // A notebook starts the daemon (listing finds none and starts none).
    await peer.call('create_notebook', {});
    const daemon = await waitFor('the auto-started daemon', () => peer.environment.daemonPid());
    const started = [peer.transport.pid as number, peer.childPid() as number, daemon];
    await peer.stop();
    for (const pid of started) expect(isAlive(pid), `pid ${pid}`).toBe(false);
    expect(processesWithHome(peer.environment.dirs.home)).toEqual([]);
  });
});

/** The CLI of @modelcontextprotocol/inspector-cli 1.0.3 (a legacy-era client; one MCP method per run). */
const inspectorCli = join(
  dirname(createRequire(import.meta.url).resolve('@modelcontextprotocol/inspector-cli/package.json')),
  'build',
  'index.js',
);

interface CliCall {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
  /** The printed `tools/call` result, when stdout held one. */
  readonly result?: { content?: { type: string; text?: string }[]; isError?: boolean };
}

/**
 * One run of the inspector CLI against the shipped proxy, as a user types it:
 * `mcp-inspector-cli node nteract-mcp.js [--notebook ID] --method tools/call --tool-name … --tool-arg k=v …`.
 * It spawns its own proxy (and so its own child), makes one call, prints the result as JSON and exits.
 */
function inspect(
  environment: UserEnvironment,
  cwd: string,
  tool: string,
  args: readonly string[],
  proxyArgs: readonly string[] = [],
): Promise<CliCall> {
  const argv = [inspectorCli, process.execPath, shippedBins.proxy, ...proxyArgs];
  argv.push('--method', 'tools/call', '--tool-name', tool);
  if (args.length > 0) argv.push('--tool-arg', ...args);
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      argv,
      { cwd, env: environment.env, timeout: 180_000, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
        let result: CliCall['result'];
        try {
          result = JSON.parse(stdout) as CliCall['result'];
        } catch {
          result = undefined;
        }
        resolve({ code, stdout, stderr, result });
      },
    );
  });
}

/** The first JSON text part of a CLI call's result, after checking the call succeeded. */
function cliJson(call: CliCall, what: string): Record<string, unknown> {
  expect(call.code, `${what}: exit code\n${call.stdout}\n${call.stderr}`).toBe(0);
  expect(call.result?.isError ?? false, `${what}: ${call.stdout}`).toBe(false);
  const text = (call.result?.content ?? []).find(
    (item) => item.type === 'text' && item.text?.trimStart().startsWith('{'),
  );
  expect(text, `${what}: no JSON part in ${call.stdout}`).toBeDefined();
  return JSON.parse(text?.text as string) as Record<string, unknown>;
}

describe('real peers: the inspector CLI (@modelcontextprotocol/inspector-cli 1.0.3) against the shipped nteract-mcp', () => {
  it('one run per call: create_notebook, then connect, create_cell with and_run and get_all_cells on that notebook in later runs', {
    timeout: 300_000,
  }, async () => {
    const environment = createUserEnvironment(shippedBins.runtimed);
    onTestFinished(() => environment.cleanup());
    // The CLI finds its own package.json through `../package.json` from its cwd: run it, as a user
    // does, from a folder of a project that has one.
    writeFileSync(join(environment.dirs.project, 'package.json'), '{"name":"analysis","private":true}\n');
    const cwd = join(environment.dirs.project, 'notebooks');
    mkdirSync(cwd);

    const created = cliJson(await inspect(environment, cwd, 'create_notebook', ['ephemeral=false']), 'create_notebook');
    const notebookId = created.notebook_id as string;
    expect(notebookId).toEqual(expect.any(String));
    // The daemon keeps the notebook after that run's proxy and child are gone.
    const connected = cliJson(
      await inspect(environment, cwd, 'connect_notebook', [`notebook_id=${notebookId}`]),
      'connect_notebook',
    );
    expect(connected).toMatchObject({ notebook_id: notebookId, connected: true });
    // A fresh process has no active notebook: `nteract-mcp --notebook <id>` opens it at start, as a
    // user configures a one-call-per-process client.
    const rejoin = ['--notebook', notebookId];
    const source = 'x = 6 * 7\nprint(x)';
    const run = cliJson(
      await inspect(environment, cwd, 'create_cell', [`source=${source}`, 'and_run=true'], rejoin),
      'create_cell',
    );
    expect(run).toMatchObject({ notebook_id: notebookId, status: 'done' });
    expect(JSON.stringify(run.outputs)).toContain('42');
    const read = cliJson(await inspect(environment, cwd, 'get_all_cells', ['format=json'], rejoin), 'get_all_cells');
    expect(read).toMatchObject({ notebook_id: notebookId, total_cells: 1 });
    const cells = read.cells as { source: string; outputs?: unknown }[];
    expect(cells[0]?.source).toBe(source);
    expect(JSON.stringify(cells[0]?.outputs)).toContain('42');

    // Every run's proxy and child exited with the CLI; only the daemon (and its kernel) remain.
    const sessionProcesses = () =>
      processesWithHome(environment.dirs.home).filter((info) => /nteract-mcp\.js|runt-mcp\.js/.test(info.cmdline));
    await waitFor('every run of the CLI to leave no proxy or child behind', () => sessionProcesses().length === 0);
    const daemon = await waitFor('the auto-started daemon', () => environment.daemonPid());
    await environment.cleanup();
    expect(isAlive(daemon)).toBe(false);
    expect(processesWithHome(environment.dirs.home)).toEqual([]);
  });
});
