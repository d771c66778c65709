// How long a new `runt-mcp` takes from its spawn until it answers `initialize`: the start-up that
// every child restart puts in front of the agent's next call. Three ways, interleaved round by
// round: the bundle compiled from its code cache (what users run after a child's first start), the
// bundle on its very first start (no cache yet), and from the packages (as with a third-party
// plugin). Beside the wall time, the child's own CPU time until the answer, which load barely
// moves. No daemon is involved (none listens at the socket given, and none is auto-started): the
// user's path with a daemon is measured by recovery.mjs.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cpuNs, summarizeEach, until } from './lib/stats.mjs';

const noOpPlugin = fileURLToPath(new URL('./lib/no-op-plugin.mjs', import.meta.url));
const initialize = `${JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bench', version: '1' } },
})}\n`;

/** Spawns the child, sends `initialize`; resolves with ms until the answer and the child's CPU ms by then. */
async function startOnce(entry, env) {
  const start = process.hrtime.bigint();
  const child = spawn(process.execPath, [entry], { env, stdio: ['pipe', 'pipe', 'ignore'] });
  try {
    child.stdin.write(initialize);
    await new Promise((resolve, reject) => {
      child.stdout.once('data', resolve);
      child.once('exit', (code) => reject(new Error(`runt-mcp exited (${code}) before answering`)));
    });
    const wallMs = Number(process.hrtime.bigint() - start) / 1e6;
    const cpuMs = (await cpuNs(child.pid)) / 1e6;
    return { wallMs, cpuMs };
  } finally {
    child.kill('SIGKILL');
    await new Promise((resolve) =>
      child.exitCode !== null || child.signalCode !== null ? resolve() : child.once('exit', resolve),
    );
  }
}

export async function childStartBenchmark({ dist, size }) {
  const rounds = size === 'smoke' ? 2 : 20;
  const entry = join(dist, 'runt-mcp.js');
  const root = mkdtempSync(join(tmpdir(), 'nteract-bench-start-'));
  const base = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: join(root, 'home'),
    RUNTIMED_SOCKET_PATH: join(root, 'no-daemon.sock'),
    NTERACT_MCP_NO_AUTOSTART: '1',
    NTERACT_MCP_LOG_LEVEL: 'error',
  };
  mkdirSync(base.HOME, { recursive: true });
  const warmCache = join(root, 'warm-cache');
  const samples = { cached: [], firstStart: [], packages: [] };
  const cpu = { cached: [], firstStart: [], packages: [] };
  let writer;
  try {
    // One start that lives long enough to write its code cache, as a user's first child does.
    writer = spawn(process.execPath, [entry], {
      env: { ...base, XDG_CACHE_HOME: warmCache },
      stdio: ['pipe', 'ignore', 'ignore'],
    });
    const cacheDir = join(warmCache, 'nteract-mcp', 'compile-cache');
    await until(
      `a compile cache in ${cacheDir}`,
      () => existsSync(cacheDir) && readdirSync(cacheDir).some((name) => name.endsWith('.bin')),
      60_000,
      20,
    );
    writer.kill('SIGKILL');
    for (let round = 0; round < rounds; round++) {
      const ways = {
        cached: { ...base, XDG_CACHE_HOME: warmCache },
        firstStart: { ...base, XDG_CACHE_HOME: join(root, `cold-${round}`) },
        packages: { ...base, XDG_CACHE_HOME: warmCache, NTERACT_MCP_PLUGINS: noOpPlugin },
      };
      // Rotated order, so that no way always goes first after the previous one's exit.
      const names = Object.keys(ways);
      for (let k = 0; k < names.length; k++) {
        const name = names[(round + k) % names.length];
        const { wallMs, cpuMs } = await startOnce(entry, ways[name]);
        samples[name].push(wallMs);
        cpu[name].push(cpuMs);
      }
    }
  } finally {
    writer?.kill('SIGKILL');
    rmSync(root, { recursive: true, force: true });
  }
  const results = {
    wallMs: summarizeEach(samples),
    cpuMs: summarizeEach(cpu),
  };
  return {
    name: 'child-start',
    unit: 'ms from spawn to the initialize answer (wall; and the child CPU time by then)',
    results,
    ratios: {
      cachedOverPackagesWallP50: results.wallMs.cached.p50 / results.wallMs.packages.p50,
      firstStartOverPackagesWallP50: results.wallMs.firstStart.p50 / results.wallMs.packages.p50,
      cachedOverPackagesCpuP50: results.cpuMs.cached.p50 / results.cpuMs.packages.p50,
    },
    samples: {
      unit: 'ms',
      sets: Object.fromEntries(Object.entries(samples).map(([name, set]) => [`${name} wall`, set])),
    },
    chart: [
      ...Object.entries(results.wallMs).map(([name, s]) => ({ label: `${name} wall p50`, value: s.p50, unit: 'ms' })),
      ...Object.entries(results.cpuMs).map(([name, s]) => ({ label: `${name} CPU p50`, value: s.p50, unit: 'ms' })),
    ],
  };
}
