import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startTestDaemon, type TestDaemon } from '@nteract-mcp/daemon/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { runJsonRpcFuzz } from './support/fuzz/run-json-rpc-fuzz.js';
import { runRuntimedFuzz } from './support/fuzz/run-runtimed-fuzz.js';

/**
 * Fuzzes the three processes of nteract-mcp with random and mutated input: the proxy and the
 * child MCP server (JSON-RPC lines on stdin) and the daemon (frames on its socket).
 *
 * FUZZ_RUNS sets the number of inputs per process (default 600; `npm run test:fuzz` sends 100,000),
 * FUZZ_SEED replays a run (every run prints its seed). A crash or hang stops the run and is shrunk
 * to a minimal input, unless FUZZ_CONTINUE=1 (long runs): then each is recorded, the process
 * restarted, and the run goes on.
 */
const inputs = Number(process.env.FUZZ_RUNS ?? 600);
// `npm test` replays one fixed seed (a CI run is deterministic); long runs draw a new one each time.
const seed = Number(process.env.FUZZ_SEED ?? (process.env.FUZZ_RUNS ? Date.now() % 2 ** 31 : 20_261_201));
const continueAfterCrash = process.env.FUZZ_CONTINUE === '1';
const timeout = 240_000 + inputs * 30;

const proxyBin = fileURLToPath(new URL('../packages/nteract-mcp/dist/nteract-mcp.js', import.meta.url));
const runtMcpBin = fileURLToPath(new URL('../packages/nteract-mcp/dist/runt-mcp.js', import.meta.url));
/** The proxy's line cap in these runs: low enough that some fuzzed lines pass it. */
const proxyMaxLineBytes = 256 * 1024;

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const log = (line: string): void => {
  process.stderr.write(`${line}\n`);
};

/** A daemon without kernels (fuzzed tool calls create many notebooks) and a private HOME and cwd. */
async function environment(): Promise<{ daemon: TestDaemon; env: Record<string, string>; cwd: string }> {
  const daemon = await startTestDaemon(['--no-kernels', '--keep-alive-ms', '1000']);
  cleanups.push(() => daemon.dispose());
  const home = mkdtempSync(join(tmpdir(), 'fuzz-home-'));
  cleanups.push(() => rmSync(home, { recursive: true, force: true }));
  const cwd = join(home, 'work');
  mkdirSync(cwd);
  const env = {
    ...(process.env as Record<string, string>),
    HOME: home,
    XDG_CACHE_HOME: join(home, '.cache'),
    XDG_DATA_HOME: join(home, '.local', 'share'),
    XDG_CONFIG_HOME: join(home, '.config'),
    RUNTIMED_SOCKET_PATH: daemon.socketPath,
    NTERACT_MCP_NO_AUTOSTART: '1',
  };
  return { daemon, env, cwd };
}

/** No crash or hang (fast-check's shrunk case) and no other broken promise; the report lists both. */
function expectClean(result: {
  readonly summary: string;
  readonly failure: string | undefined;
  readonly violations: { kinds(): Record<string, number>; report(): string };
}): void {
  const report = [result.summary, result.failure ?? 'no crash or hang', result.violations.report()].join('\n');
  expect({ crashOrHang: result.failure !== undefined, violations: result.violations.kinds() }, report).toEqual({
    crashOrHang: false,
    violations: {},
  });
}

describe(`fuzz (${inputs} inputs per process, seed ${seed})`, () => {
  it('the proxy answers every request exactly once, never answers a notification, and survives', {
    timeout,
  }, async () => {
    const { env, cwd } = await environment();
    const result = await runJsonRpcFuzz({
      label: 'nteract-mcp',
      target: {
        command: process.execPath,
        args: [proxyBin, '--tool-cache', join(cwd, 'tools.json'), '--max-line-bytes', String(proxyMaxLineBytes)],
        env,
        cwd,
      },
      inputs,
      seed,
      maxLineBytes: proxyMaxLineBytes,
      watchChild: true,
      continueAfterCrash,
      log,
    });
    expectClean(result);
    expect(result.counts.requests).toBeGreaterThan(inputs / 10);
  });

  it('runt-mcp answers every request exactly once, never answers a notification, and survives', {
    timeout,
  }, async () => {
    const { env, cwd } = await environment();
    const result = await runJsonRpcFuzz({
      label: 'runt-mcp',
      target: { command: process.execPath, args: [runtMcpBin], env, cwd },
      inputs,
      seed,
      continueAfterCrash,
      log,
    });
    expectClean(result);
    expect(result.counts.requests).toBeGreaterThan(inputs / 10);
  });

  it('runtimed survives random and mutated frames; a well-behaved client keeps working', { timeout }, async () => {
    const { daemon, cwd } = await environment();
    const result = await runRuntimedFuzz({ daemon, workDir: cwd, inputs, seed, continueAfterCrash, log });
    expectClean(result);
    expect(result.counts.requests).toBeGreaterThan(inputs / 10);
  });
});
