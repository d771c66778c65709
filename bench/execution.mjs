// What an execution costs on top of the kernel: the same small cell (`1 + 1`, its result) run
// (a) straight on an ipykernel through jupyter_client from Python (the floor: the Jupyter protocol
// and one kernel round trip) and (b) through nteract-mcp as an agent runs it (`run_code`: proxy,
// child, daemon, kernel), in interleaved rounds in one run. The figure: (b) over (a) at p50.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { JsonlPeer } from './lib/jsonl-peer.mjs';
import { elapsedUs, summarizeEach } from './lib/stats.mjs';
import { createUserHome } from './lib/user-home.mjs';
import { verdict } from './lib/verdict.mjs';

const code = '1 + 1';

/** The Python with ipykernel and jupyter_client (the one the product's kernelspec names). */
function kernelPython() {
  for (const candidate of ['/usr/bin/python3', 'python3']) {
    const probe = spawnSync(candidate, ['-c', 'import ipykernel, jupyter_client'], { stdio: 'ignore' });
    if (probe.status === 0) return candidate;
  }
  throw new Error('no Python with ipykernel and jupyter_client (install python3-ipykernel)');
}

export async function executionBenchmark({ dist, here, size }) {
  const rounds = size === 'smoke' ? 1 : 5;
  const perRound = size === 'smoke' ? 5 : 40;
  const python = kernelPython();
  const user = createUserHome(dist);
  const samples = { jupyterClient: [], nteractMcp: [] };
  try {
    const peer = new JsonlPeer(process.execPath, [join(dist, 'nteract-mcp.js')], {
      ...user.env,
      NTERACT_MCP_LOG_LEVEL: 'error',
    });
    await peer.initialize();
    await peer.call('create_notebook', {});
    // The first run waits for the kernel to start; warm the path up after it.
    for (let i = 0; i < 10; i++) await peer.call('run_code', { code, timeout_secs: 120 });
    for (let round = 0; round < rounds; round++) {
      const floor = spawnSync(python, [join(here, 'lib', 'jupyter-client-round-trips.py'), code, String(perRound)], {
        encoding: 'utf8',
        env: { ...process.env, HOME: user.dirs.home, JUPYTER_RUNTIME_DIR: user.dirs.runtime },
        timeout: 300_000,
      });
      if (floor.status !== 0) throw new Error(`jupyter_client round trips failed: ${floor.stderr}`);
      samples.jupyterClient.push(...JSON.parse(floor.stdout));
      for (let i = 0; i < perRound; i++) {
        const start = process.hrtime.bigint();
        const result = await peer.call('run_code', { code, timeout_secs: 120 });
        samples.nteractMcp.push(elapsedUs(start) / 1000);
        if (!JSON.stringify(result.content).includes('2'))
          throw new Error(`run_code lost its result: ${JSON.stringify(result)}`);
      }
    }
    await peer.close();
  } finally {
    user.stop();
  }
  const stats = summarizeEach(samples);
  return {
    name: 'execution',
    unit: `ms per execution of \`${code}\` with its result`,
    results: stats,
    ratios: {
      nteractMcpOverJupyterClientP50: stats.nteractMcp.p50 / stats.jupyterClient.p50,
      nteractMcpOverJupyterClientP90: stats.nteractMcp.p90 / stats.jupyterClient.p90,
    },
    targets: { nteractMcpOverJupyterClientP50: '<= 1.5' },
    verdicts: [
      verdict('run_code p50 / jupyter_client p50', stats.nteractMcp.p50 / stats.jupyterClient.p50, '×', '<= 1.5'),
    ],
    samples: { unit: 'ms', sets: samples },
    chart: [
      { label: 'jupyter_client p50', value: stats.jupyterClient.p50, unit: 'ms' },
      { label: 'nteract-mcp run_code p50', value: stats.nteractMcp.p50, unit: 'ms' },
      { label: 'jupyter_client p90', value: stats.jupyterClient.p90, unit: 'ms' },
      { label: 'nteract-mcp run_code p90', value: stats.nteractMcp.p90, unit: 'ms' },
    ],
  };
}
