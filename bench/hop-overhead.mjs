// The cost of the proxy hop: the same child call (get_all_cells on a 10-cell notebook) made
// (a) straight to runt-mcp, (b) through a bare byte pipe (the limit of one extra hop) and
// (c) through nteract-mcp, in interleaved rounds in one run; latency with 1 call in flight and
// throughput with 64. The figure of merit is (c - a) / (b - a): 1 means the proxy costs no more
// than copying bytes.
import { join } from 'node:path';
import { JsonlPeer } from './lib/jsonl-peer.mjs';
import { elapsedUs, summarize } from './lib/stats.mjs';
import { createUserHome } from './lib/user-home.mjs';

/** `size`: `smoke` for CI (a few calls, to keep the benchmark working), `full` for the figures. */
export async function hopOverheadBenchmark({ dist, here, size }) {
  const rounds = size === 'smoke' ? 2 : 12;
  const perRound = size === 'smoke' ? 10 : 100;
  const inFlight = 64;
  const batchesPerRound = size === 'smoke' ? 1 : 4;
  const user = createUserHome(dist);
  const runt = join(dist, 'runt-mcp.js');
  const paths = {
    direct: [runt],
    pipe: [join(here, 'lib', 'byte-pipe.mjs'), runt],
    proxy: [join(dist, 'nteract-mcp.js')],
  };
  const peers = {};
  try {
    for (const [name, args] of Object.entries(paths)) {
      const peer = new JsonlPeer(process.execPath, args, { ...user.env, NTERACT_MCP_LOG_LEVEL: 'error' });
      peers[name] = peer;
      await peer.initialize();
      await peer.call('create_notebook', {});
      for (let cell = 0; cell < 10; cell++) await peer.call('create_cell', { source: `x${cell} = ${cell}` });
      // Warm up the path (JIT, caches) before anything is measured.
      for (let i = 0; i < 50; i++) await peer.call('get_all_cells', { format: 'json' });
    }
    const latency = Object.fromEntries(Object.keys(paths).map((name) => [name, []]));
    const throughput = Object.fromEntries(Object.keys(paths).map((name) => [name, []]));
    for (let round = 0; round < rounds; round++) {
      for (const [name, peer] of Object.entries(peers)) {
        for (let i = 0; i < perRound; i++) {
          const start = process.hrtime.bigint();
          await peer.call('get_all_cells', { format: 'json' });
          latency[name].push(elapsedUs(start));
        }
        for (let batch = 0; batch < batchesPerRound; batch++) {
          const start = process.hrtime.bigint();
          await Promise.all(Array.from({ length: inFlight }, () => peer.call('get_all_cells', { format: 'json' })));
          throughput[name].push(inFlight / (elapsedUs(start) / 1e6));
        }
      }
    }
    const stats = Object.fromEntries(Object.entries(latency).map(([name, samples]) => [name, summarize(samples)]));
    const calls = Object.fromEntries(
      Object.entries(throughput).map(([name, samples]) => [name, summarize(samples).p50]),
    );
    const hop = (q) => (stats.proxy[q] - stats.direct[q]) / (stats.pipe[q] - stats.direct[q]);
    return {
      name: 'hop-overhead',
      unit: 'µs per get_all_cells round trip (10 cells); calls/s with 64 in flight',
      results: { latency: stats, callsPerSecondAt64: calls },
      ratios: {
        hopP50: hop('p50'),
        hopP99: hop('p99'),
        proxyThroughputOverDirect: calls.proxy / calls.direct,
        pipeThroughputOverDirect: calls.pipe / calls.direct,
      },
      targets: { hopP50: '<= 1.2', hopP99: '<= 1.2', proxyThroughputOverDirect: '>= 0.9' },
      chart: [
        { label: 'direct p50', value: stats.direct.p50, unit: 'µs' },
        { label: 'byte pipe p50', value: stats.pipe.p50, unit: 'µs' },
        { label: 'nteract-mcp p50', value: stats.proxy.p50, unit: 'µs' },
        { label: 'direct p99', value: stats.direct.p99, unit: 'µs' },
        { label: 'byte pipe p99', value: stats.pipe.p99, unit: 'µs' },
        { label: 'nteract-mcp p99', value: stats.proxy.p99, unit: 'µs' },
      ],
    };
  } finally {
    for (const peer of Object.values(peers)) await peer.close();
    user.stop();
  }
}
