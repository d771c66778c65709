// The cost of the proxy hop: the same child call (get_all_cells on a 10-cell notebook) made
// (a) straight to runt-mcp, (b) through a bare byte pipe (the limit of one extra hop),
// (c) through nteract-mcp and (m) through a minimal JSON-line relay (parse, new id, serialize:
// the floor of any relay that reads the messages it carries). Latency with 1 call in flight, the three paths taking turns call by call
// (so a machine busy with other work slows them alike); throughput with 64 in flight, batches in
// turns; and the CPU time the middle process (pipe or proxy) spends per call, which other load
// hardly moves. The figure of merit is (c - a) / (b - a): 1 means the proxy costs no more than
// copying bytes; (m - a) / (b - a) beside it is what reading the messages costs at the least.
import { join } from 'node:path';
import { JsonlPeer } from './lib/jsonl-peer.mjs';
import { cpuNs, elapsedUs, summarizeEach } from './lib/stats.mjs';
import { createUserHome } from './lib/user-home.mjs';

const call = (peer) => peer.call('get_all_cells', { format: 'json' });

/** `size`: `smoke` for CI (a few calls, to keep the benchmark working), `full` for the figures. */
export async function hopOverheadBenchmark({ dist, here, size }) {
  const latencyCalls = size === 'smoke' ? 20 : 1500;
  const batches = size === 'smoke' ? 2 : 48;
  const inFlight = 64;
  const user = createUserHome(dist);
  const runt = join(dist, 'runt-mcp.js');
  const paths = {
    direct: [runt],
    pipe: [join(here, 'lib', 'byte-pipe.mjs'), runt],
    jsonRelay: [join(here, 'lib', 'json-line-relay.mjs'), runt],
    proxy: [join(dist, 'nteract-mcp.js')],
  };
  const names = Object.keys(paths);
  const peers = {};
  try {
    for (const [name, args] of Object.entries(paths)) {
      const peer = new JsonlPeer(process.execPath, args, { ...user.env, NTERACT_MCP_LOG_LEVEL: 'error' });
      peers[name] = peer;
      await peer.initialize();
      await peer.call('create_notebook', {});
      for (let cell = 0; cell < 10; cell++) await peer.call('create_cell', { source: `x${cell} = ${cell}` });
      // Warm up the path (JIT, caches) before anything is measured.
      for (let i = 0; i < 200; i++) await call(peer);
    }
    const middles = ['pipe', 'jsonRelay', 'proxy'];
    const cpuBefore = {};
    for (const name of middles) cpuBefore[name] = await cpuNs(peers[name].process.pid);
    const latency = Object.fromEntries(names.map((name) => [name, []]));
    for (let i = 0; i < latencyCalls; i++) {
      // Each call of round i goes to the paths in a rotated order, so none is always first.
      for (let k = 0; k < names.length; k++) {
        const name = names[(i + k) % names.length];
        const start = process.hrtime.bigint();
        await call(peers[name]);
        latency[name].push(elapsedUs(start));
      }
    }
    const throughput = Object.fromEntries(names.map((name) => [name, []]));
    for (let batch = 0; batch < batches; batch++) {
      for (let k = 0; k < names.length; k++) {
        const name = names[(batch + k) % names.length];
        const start = process.hrtime.bigint();
        await Promise.all(Array.from({ length: inFlight }, () => call(peers[name])));
        throughput[name].push(inFlight / (elapsedUs(start) / 1e6));
      }
    }
    const measuredCalls = latencyCalls + batches * inFlight;
    const cpuUsPerCall = {};
    for (const name of middles) {
      cpuUsPerCall[name] = ((await cpuNs(peers[name].process.pid)) - cpuBefore[name]) / 1000 / measuredCalls;
    }
    const stats = summarizeEach(latency);
    const calls = Object.fromEntries(Object.entries(summarizeEach(throughput)).map(([name, { p50 }]) => [name, p50]));
    const hop = (q, through = 'proxy') => (stats[through][q] - stats.direct[q]) / (stats.pipe[q] - stats.direct[q]);
    return {
      name: 'hop-overhead',
      unit: 'µs per get_all_cells round trip (10 cells); calls/s with 64 in flight; CPU µs per call of the middle process',
      results: { latency: stats, callsPerSecondAt64: calls, middleCpuUsPerCall: cpuUsPerCall },
      ratios: {
        hopP50: hop('p50'),
        hopP99: hop('p99'),
        jsonRelayHopP50: hop('p50', 'jsonRelay'),
        jsonRelayHopP99: hop('p99', 'jsonRelay'),
        proxyThroughputOverDirect: calls.proxy / calls.direct,
        pipeThroughputOverDirect: calls.pipe / calls.direct,
        jsonRelayThroughputOverDirect: calls.jsonRelay / calls.direct,
        proxyCpuOverPipeCpu: cpuUsPerCall.proxy / cpuUsPerCall.pipe,
        jsonRelayCpuOverPipeCpu: cpuUsPerCall.jsonRelay / cpuUsPerCall.pipe,
      },
      targets: { hopP50: '<= 1.2', hopP99: '<= 1.2', proxyThroughputOverDirect: '>= 0.9' },
      samples: { unit: 'µs', sets: latency },
      chart: [
        { label: 'direct p50', value: stats.direct.p50, unit: 'µs' },
        { label: 'byte pipe p50', value: stats.pipe.p50, unit: 'µs' },
        { label: 'JSON-line relay p50', value: stats.jsonRelay.p50, unit: 'µs' },
        { label: 'nteract-mcp p50', value: stats.proxy.p50, unit: 'µs' },
        { label: 'direct p99', value: stats.direct.p99, unit: 'µs' },
        { label: 'byte pipe p99', value: stats.pipe.p99, unit: 'µs' },
        { label: 'JSON-line relay p99', value: stats.jsonRelay.p99, unit: 'µs' },
        { label: 'nteract-mcp p99', value: stats.proxy.p99, unit: 'µs' },
        { label: 'byte pipe CPU per call', value: cpuUsPerCall.pipe, unit: 'µs' },
        { label: 'JSON-line relay CPU per call', value: cpuUsPerCall.jsonRelay, unit: 'µs' },
        { label: 'nteract-mcp CPU per call', value: cpuUsPerCall.proxy, unit: 'µs' },
      ],
    };
  } finally {
    for (const peer of Object.values(peers)) await peer.close();
    user.stop();
  }
}
