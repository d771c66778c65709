// The proxy's own JavaScript per relayed call, apart from any system call: a tools/call (and its
// answer, laid out as runt-mcp writes it) through the real McpProxy over in-memory streams, beside
// a bare relay that copies chunks (bench/lib/forwarding-worker.mjs). Measured at each of V8's tiers,
// as a session meets them: the interpreter (the first calls), the Sparkplug baseline compiler
// (warm, not yet optimized: most of an agent's session, a few hundred calls) and optimized code
// (after thousands). Each figure is CPU time, the median of 7 rounds in a process of its own; the
// processes of one tier take turns, so a busy machine slows both alike.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { summarize } from './lib/stats.mjs';

const tiers = [
  { name: 'interpreter', flags: ['--max-opt=0'] },
  { name: 'baseline', flags: ['--max-opt=1'] },
  { name: 'optimized', flags: [] },
];

function runWorker(here, flags, mode, warmUp, perRound) {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [...flags, join(here, 'lib', 'forwarding-worker.mjs'), mode, String(warmUp), String(perRound)],
      { timeout: 300_000 },
      (error, stdout, stderr) => {
        if (error)
          reject(new Error(`forwarding worker (${mode} ${flags.join(' ')}) failed: ${stderr || error.message}`));
        else resolve(JSON.parse(stdout).usPerCall);
      },
    );
  });
}

/** `size`: `smoke` for CI (a few calls, to keep the benchmark working), `full` for the figures. */
export async function proxyForwardingBenchmark({ here, size }) {
  const repeats = size === 'smoke' ? 1 : 5;
  const results = {};
  const ratios = {};
  const chart = [];
  const sets = {};
  for (const tier of tiers) {
    // The optimized tier needs thousands of calls before it is reached; the others hold from the start.
    const warmUp = size === 'smoke' ? 20 : tier.name === 'optimized' ? 20_000 : 1_000;
    const perRound = size === 'smoke' ? 10 : 1_000;
    const runs = { bare: [], proxy: [] };
    for (let repeat = 0; repeat < repeats; repeat++) {
      for (const mode of repeat % 2 === 0 ? ['bare', 'proxy'] : ['proxy', 'bare']) {
        runs[mode].push(await runWorker(here, tier.flags, mode, warmUp, perRound));
      }
    }
    const bare = summarize(runs.bare).p50;
    const proxy = summarize(runs.proxy).p50;
    results[tier.name] = { bareUsPerCall: bare, proxyUsPerCall: proxy, proxyOwnUsPerCall: proxy - bare };
    ratios[`${tier.name}ProxyOverBare`] = proxy / bare;
    sets[`${tier.name} bare`] = runs.bare;
    sets[`${tier.name} proxy`] = runs.proxy;
    chart.push(
      { label: `${tier.name}: bare relay`, value: bare, unit: 'µs' },
      { label: `${tier.name}: nteract-mcp`, value: proxy, unit: 'µs' },
    );
  }
  return {
    name: 'proxy-forwarding',
    unit: 'CPU µs per relayed tools/call, in-memory streams (no system calls), by V8 tier',
    results,
    ratios,
    samples: { unit: 'µs', sets },
    chart,
  };
}
