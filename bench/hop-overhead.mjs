// The cost of the proxy hop: the same child call (get_all_cells with its default arguments on a
// one-cell notebook) made (a) straight to runt-mcp, (b) through a bare byte pipe (the limit of one
// extra hop), (c) through nteract-mcp and (m) through a minimal JSON-line relay (parse, new id,
// serialize: the floor of any relay that reads the messages it carries). The figure of merit is
// (c - a) / (b - a): 1 means the proxy costs no more than copying bytes; (m - a) / (b - a) beside
// it is what reading the messages costs at the least.
//
// Every path runs runt-mcp as nteract-mcp spawns it (the same Node flags), so they differ by
// their middle alone. Each path is measured twice, in one run:
// - Cold, as an outsider measures it: from the first call after the notebook is made, 30 rounds
//   of 20 calls, the paths taking turns round by round, then 10 bursts of 64 calls in flight in
//   turns; then the RSS of the proxy and of the byte pipe, read at the same moment. Every process
//   still compiles its hot code then (V8's tiers), which an agent's first few hundred calls meet.
// - Warm: once every process has settled (its helper threads spend at most a tenth of its main
//   thread's CPU per call, over two blocks of calls in a row) and every path has made as many
//   calls as the slowest to settle: latency with 1 call in flight (settled on calls one at a time,
//   about 3,000 for the proxy), the paths taking turns call by call (so a machine busy with other
//   work slows them alike); then throughput with 64 in flight (settled on bursts of 64 too),
//   batches in turns; in each, the CPU time the middle process spends per call, on its main thread
//   and on its helpers; then the RSS of the proxy and the byte pipe again.
// - Beside, not judged: the old harness's heavier call (get_all_cells as JSON on 10 cells), warm,
//   latency and throughput: the call mix moves the ratios, as the child's share of the work grows.
import { join } from 'node:path';
import { mallocArenaEnvironment, youngGenerationFlags } from '@nteract-mcp/foundation';
import { JsonlPeer } from './lib/jsonl-peer.mjs';
import { elapsedUs, quantile, rssMb, summarizeEach, threadCpuNs } from './lib/stats.mjs';
import { createUserHome } from './lib/user-home.mjs';
import { verdict } from './lib/verdict.mjs';

const call = (peer) => peer.call('get_all_cells', {});
/** The call of the old harness, reported beside: more work in the child per call (10 cells, as JSON). */
const heavierCall = (peer) => peer.call('get_all_cells', { format: 'json' });

/** A process has settled when its helper threads spend at most this share of its main thread's CPU, twice in a row. */
const settledBackgroundShare = 0.1;

/** Latency of `rounds` rounds of `perRound` calls on each path, the paths taking turns round by round. */
async function coldRounds(peers, names, rounds, perRound) {
  const latency = Object.fromEntries(names.map((name) => [name, []]));
  for (let round = 0; round < rounds; round++) {
    for (const name of names) {
      for (let i = 0; i < perRound; i++) {
        const start = process.hrtime.bigint();
        await call(peers[name]);
        latency[name].push(elapsedUs(start));
      }
    }
  }
  return latency;
}

/**
 * Calls per second of `bursts` bursts of `inFlight` calls on each path, the paths taking turns
 * burst by burst: each burst's rate, and (`overall`) all the calls over all the bursts' time.
 */
async function burstRounds(peers, names, bursts, inFlight, callOf = call) {
  const throughput = Object.fromEntries(names.map((name) => [name, []]));
  const busyUs = Object.fromEntries(names.map((name) => [name, 0]));
  for (let burst = 0; burst < bursts; burst++) {
    for (let k = 0; k < names.length; k++) {
      const name = names[(burst + k) % names.length];
      const start = process.hrtime.bigint();
      await Promise.all(Array.from({ length: inFlight }, () => callOf(peers[name])));
      const us = elapsedUs(start);
      throughput[name].push(inFlight / (us / 1e6));
      busyUs[name] += us;
    }
  }
  const overall = Object.fromEntries(names.map((name) => [name, (bursts * inFlight) / (busyUs[name] / 1e6)]));
  return { rates: throughput, overall };
}

/** Latency of `calls` rounds, the paths taking turns call by call in a rotated order. */
async function latencyRounds(peers, names, calls, callOf = call) {
  const latency = Object.fromEntries(names.map((name) => [name, []]));
  for (let i = 0; i < calls; i++) {
    for (let k = 0; k < names.length; k++) {
      const name = names[(i + k) % names.length];
      const start = process.hrtime.bigint();
      await callOf(peers[name]);
      latency[name].push(elapsedUs(start));
    }
  }
  return latency;
}

/**
 * Runs `block` (one block of calls) until the process `pid` has settled, or `maxBlocks` ran; the
 * blocks it took.
 */
async function settle(block, pid, maxBlocks) {
  let blocks = 0;
  let quietBlocks = 0;
  while (blocks < maxBlocks && quietBlocks < 2) {
    const before = await threadCpuNs(pid);
    await block();
    blocks += 1;
    const after = await threadCpuNs(pid);
    const quiet = after.background - before.background <= settledBackgroundShare * (after.main - before.main);
    quietBlocks = quiet ? quietBlocks + 1 : 0;
  }
  return blocks;
}

/** `size`: `smoke` for CI (a few calls, to keep the benchmark working), `full` for the figures. */
export async function hopOverheadBenchmark({ dist, here, size }) {
  const coldRoundCount = size === 'smoke' ? 2 : 30;
  const coldBursts = size === 'smoke' ? 1 : 10;
  const coldRepeats = size === 'smoke' ? 1 : 5;
  const heavierWarmUp = size === 'smoke' ? 5 : 1000;
  const heavierCalls = size === 'smoke' ? 5 : 1500;
  const heavierBatches = size === 'smoke' ? 1 : 48;
  // More samples for the steady state: its p99 is a difference of tails (the child's pauses), read off 3,000.
  const steadyCalls = size === 'smoke' ? 20 : 3000;
  const batches = size === 'smoke' ? 2 : 128;
  const settleBlock = size === 'smoke' ? 10 : 500;
  const maxSettleCalls = size === 'smoke' ? 20 : 20_000;
  const burstBlock = size === 'smoke' ? 1 : 8;
  const maxSettleBatches = size === 'smoke' ? 1 : 256;
  const inFlight = 64;
  const user = createUserHome(dist);
  // runt-mcp as nteract-mcp spawns it: its young generation capped, its malloc arenas limited
  // (foundation's youngGenerationFlags and mallocArenaEnvironment; the pipe and the relay spawn
  // their child with the arenas limited too). Every middle is started as a client starts the proxy,
  // in the user's environment: their RSS compares like with like.
  const runt = [...youngGenerationFlags(user.env), join(dist, 'runt-mcp.js')];
  const childEnv = mallocArenaEnvironment(user.env);
  const paths = {
    direct: runt,
    pipe: [join(here, 'lib', 'byte-pipe.mjs'), ...runt],
    jsonRelay: [join(here, 'lib', 'json-line-relay.mjs'), ...runt],
    proxy: [join(dist, 'nteract-mcp.js')],
  };
  const names = Object.keys(paths);
  const middles = ['pipe', 'jsonRelay', 'proxy'];
  const peers = {};
  /** Every path started as a client starts it, into `into`, each with a notebook of one cell. */
  const startPaths = async (into) => {
    for (const [name, args] of Object.entries(paths)) {
      const env = name === 'direct' ? childEnv : user.env;
      const peer = new JsonlPeer(process.execPath, args, { ...env, NTERACT_MCP_LOG_LEVEL: 'error' });
      into[name] = peer;
      await peer.initialize();
      await peer.call('create_notebook', {});
      await peer.call('create_cell', { source: 'x = 1' });
    }
    return into;
  };
  const rssOfMiddles = async (of) => ({
    proxyMb: await rssMb(of.proxy.process.pid),
    bytePipeMb: await rssMb(of.pipe.process.pid),
  });
  /** The cold phase on fresh processes: latency rounds, then bursts, then the RSS of the middles. */
  const coldPhase = async (of) => {
    const samples = await coldRounds(of, names, coldRoundCount, 20);
    const { overall } = await burstRounds(of, names, coldBursts, inFlight);
    return { samples, latency: summarizeEach(samples), callsPerSecondAt64: overall, rss: await rssOfMiddles(of) };
  };
  try {
    await startPaths(peers);
    // The cold phase is a few hundred calls of processes that are still compiling: one run of it
    // moves with where their pauses land. It is run `coldRepeats` times on fresh processes (the
    // first set goes on to the warm phase), and each figure is the median of the runs.
    const colds = [await coldPhase(peers)];
    for (let repeat = 1; repeat < coldRepeats; repeat++) {
      const fresh = await startPaths({});
      try {
        colds.push(await coldPhase(fresh));
      } finally {
        for (const peer of Object.values(fresh)) await peer.close();
      }
    }
    // The direct path's process is runt-mcp itself; the others are the middle processes (their
    // runt-mcp children warm up with them, call for call).
    const settleCalls = {};
    const settleBatches = {};
    for (const name of names) {
      const peer = peers[name];
      const oneByOne = async () => {
        for (let i = 0; i < settleBlock; i++) await call(peer);
      };
      settleCalls[name] = settleBlock * (await settle(oneByOne, peer.process.pid, maxSettleCalls / settleBlock));
    }
    // As warm as the others: every path (its runt-mcp too) has made as many calls.
    const warmest = Math.max(...Object.values(settleCalls));
    for (const name of names) for (let i = settleCalls[name]; i < warmest; i++) await call(peers[name]);
    /** CPU µs per call of each middle while `work` makes `calls` calls: its main thread and its helpers. */
    const middleCpu = async (calls, work) => {
      const before = {};
      for (const name of middles) before[name] = await threadCpuNs(peers[name].process.pid);
      const result = await work();
      const cpu = { main: {}, helpers: {} };
      for (const name of middles) {
        const after = await threadCpuNs(peers[name].process.pid);
        cpu.main[name] = (after.main - before[name].main) / 1000 / calls;
        cpu.helpers[name] = (after.background - before[name].background) / 1000 / calls;
      }
      return { result, cpu };
    };
    const steady = await middleCpu(steadyCalls, () => latencyRounds(peers, names, steadyCalls));
    const latency = steady.result;
    // Calls in flight together take code paths of their own (a chunk of many lines, a write of
    // many answers), which V8 compiles when it first meets them: the middles are settled on them
    // too, the same way (runt-mcp's helper threads collect garbage all through a burst), and every
    // path makes as many bursts.
    for (const name of middles) {
      const peer = peers[name];
      const bursts = async () => {
        for (let i = 0; i < burstBlock; i++) await Promise.all(Array.from({ length: inFlight }, () => call(peer)));
      };
      settleBatches[name] = burstBlock * (await settle(bursts, peer.process.pid, maxSettleBatches / burstBlock));
    }
    const mostBatches = Math.max(...Object.values(settleBatches));
    for (const name of names) {
      for (let i = settleBatches[name]; i < mostBatches; i++) {
        await Promise.all(Array.from({ length: inFlight }, () => call(peers[name])));
      }
    }
    const loaded = await middleCpu(batches * inFlight, () => burstRounds(peers, names, batches, inFlight));
    const throughput = loaded.result.rates;
    const warmRss = await rssOfMiddles(peers);
    // The call mix matters: the old harness's call (get_all_cells as JSON on 10 cells) gives the
    // child more to do per call, so one more process's system calls weigh less against it. Warm,
    // reported beside (not judged): each notebook gets 9 more cells, each path warms the call up.
    for (const name of names) {
      for (let cell = 1; cell < 10; cell++) await peers[name].call('create_cell', { source: `x${cell} = ${cell}` });
      for (let i = 0; i < heavierWarmUp; i++) await heavierCall(peers[name]);
    }
    const heavierStats = summarizeEach(await latencyRounds(peers, names, heavierCalls, heavierCall));
    const heavierBursts = await burstRounds(peers, names, heavierBatches, inFlight, heavierCall);
    const heavierRates = Object.fromEntries(
      Object.entries(summarizeEach(heavierBursts.rates)).map(([name, { p50 }]) => [name, p50]),
    );
    const sum = (cpu) => Object.fromEntries(middles.map((name) => [name, cpu.main[name] + cpu.helpers[name]]));
    const middleCpuUsPerCall = sum(steady.cpu);
    const middleCpuUsPerCallAt64 = sum(loaded.cpu);
    const stats = summarizeEach(latency);
    const medians = (sets) =>
      Object.fromEntries(Object.entries(summarizeEach(sets)).map(([name, { p50 }]) => [name, p50]));
    const calls = medians(throughput);
    const hop = (of, q, through = 'proxy') => (of[through][q] - of.direct[q]) / (of.pipe[q] - of.direct[q]);
    // Cold, per run: throughput is all the calls of its bursts over their time (a pause to compile
    // or collect counts for what it costs); each cold figure is the median of the runs.
    const coldRuns = colds.map(({ latency: of, callsPerSecondAt64: rate, rss }) => ({
      hopP50: hop(of, 'p50'),
      hopP99: hop(of, 'p99'),
      jsonRelayHopP50: hop(of, 'p50', 'jsonRelay'),
      proxyThroughputOverDirect: rate.proxy / rate.direct,
      pipeThroughputOverDirect: rate.pipe / rate.direct,
      proxyThroughputOverPipe: rate.proxy / rate.pipe,
      proxyOverPipeRssMb: rss.proxyMb - rss.bytePipeMb,
    }));
    const coldMedian = (key) =>
      quantile(
        coldRuns.map((run) => run[key]),
        0.5,
      );
    const coldSamples = colds[0].samples;
    const ratios = {
      coldHopP50: coldMedian('hopP50'),
      coldHopP99: coldMedian('hopP99'),
      coldJsonRelayHopP50: coldMedian('jsonRelayHopP50'),
      coldProxyThroughputOverDirect: coldMedian('proxyThroughputOverDirect'),
      coldPipeThroughputOverDirect: coldMedian('pipeThroughputOverDirect'),
      coldProxyThroughputOverPipe: coldMedian('proxyThroughputOverPipe'),
      warmHopP50: hop(stats, 'p50'),
      warmHopP99: hop(stats, 'p99'),
      warmJsonRelayHopP50: hop(stats, 'p50', 'jsonRelay'),
      warmJsonRelayHopP99: hop(stats, 'p99', 'jsonRelay'),
      warmProxyThroughputOverDirect: calls.proxy / calls.direct,
      warmPipeThroughputOverDirect: calls.pipe / calls.direct,
      warmProxyThroughputOverPipe: calls.proxy / calls.pipe,
      warmJsonRelayThroughputOverDirect: calls.jsonRelay / calls.direct,
      proxyCpuOverPipeCpu: middleCpuUsPerCall.proxy / middleCpuUsPerCall.pipe,
      jsonRelayCpuOverPipeCpu: middleCpuUsPerCall.jsonRelay / middleCpuUsPerCall.pipe,
      proxyCpuOverPipeCpuAt64: middleCpuUsPerCallAt64.proxy / middleCpuUsPerCallAt64.pipe,
      heavierCallWarmHopP50: hop(heavierStats, 'p50'),
      heavierCallWarmHopP99: hop(heavierStats, 'p99'),
      heavierCallWarmProxyThroughputOverDirect: heavierRates.proxy / heavierRates.direct,
      heavierCallWarmPipeThroughputOverDirect: heavierRates.pipe / heavierRates.direct,
    };
    return {
      name: 'hop-overhead',
      unit: 'µs per get_all_cells round trip (one cell, default arguments); calls/s with 64 in flight; CPU µs per call of the middle process (1 and 64 in flight); MB resident',
      results: {
        coldRuns,
        coldLatencyFirstRun: colds[0].latency,
        coldCallsPerSecondAt64FirstRun: colds[0].callsPerSecondAt64,
        coldRssFirstRun: colds[0].rss,
        warmLatency: stats,
        warmCallsPerSecondAt64: calls,
        warmRss,
        settleCalls,
        settleBatchesOf64: settleBatches,
        middleCpuUsPerCall,
        middleMainThreadCpuUsPerCall: steady.cpu.main,
        middleCpuUsPerCallAt64,
        middleMainThreadCpuUsPerCallAt64: loaded.cpu.main,
        heavierCallWarmLatency: heavierStats,
        heavierCallWarmCallsPerSecondAt64: heavierRates,
      },
      ratios,
      verdicts: [
        verdict(
          `hop p50, cold (first ${coldRoundCount * 20} calls, median of ${coldRepeats} runs)`,
          ratios.coldHopP50,
          '×',
          '<= 1.2',
        ),
        verdict(
          `hop p99, cold (first ${coldRoundCount * 20} calls, median of ${coldRepeats} runs)`,
          ratios.coldHopP99,
          '×',
          '<= 1.2',
        ),
        verdict(
          `throughput / direct, cold (${coldBursts} bursts of ${inFlight}, median of ${coldRepeats} runs)`,
          ratios.coldProxyThroughputOverDirect,
          '×',
          '>= 0.9',
        ),
        verdict('proxy RSS − byte pipe RSS, after the cold workload', coldMedian('proxyOverPipeRssMb'), 'MB', '<= 5'),
        verdict('hop p50, warm', ratios.warmHopP50, '×', '<= 1.2'),
        verdict('hop p99, warm', ratios.warmHopP99, '×', '<= 1.2'),
        verdict('throughput / direct, warm (64 in flight)', ratios.warmProxyThroughputOverDirect, '×', '>= 0.9'),
        verdict(
          'proxy RSS − byte pipe RSS, after the warm workload',
          warmRss.proxyMb - warmRss.bytePipeMb,
          'MB',
          '<= 5',
        ),
      ],
      samples: {
        unit: 'µs',
        sets: { ...latency, ...Object.fromEntries(names.map((name) => [`${name} cold`, coldSamples[name]])) },
      },
      chart: [
        { label: 'direct p50', value: stats.direct.p50, unit: 'µs' },
        { label: 'byte pipe p50', value: stats.pipe.p50, unit: 'µs' },
        { label: 'JSON-line relay p50', value: stats.jsonRelay.p50, unit: 'µs' },
        { label: 'nteract-mcp p50', value: stats.proxy.p50, unit: 'µs' },
        { label: 'byte pipe p50, cold (first run)', value: colds[0].latency.pipe.p50, unit: 'µs' },
        { label: 'nteract-mcp p50, cold (first run)', value: colds[0].latency.proxy.p50, unit: 'µs' },
        { label: 'direct p99', value: stats.direct.p99, unit: 'µs' },
        { label: 'byte pipe p99', value: stats.pipe.p99, unit: 'µs' },
        { label: 'JSON-line relay p99', value: stats.jsonRelay.p99, unit: 'µs' },
        { label: 'nteract-mcp p99', value: stats.proxy.p99, unit: 'µs' },
        { label: 'byte pipe CPU per call', value: middleCpuUsPerCall.pipe, unit: 'µs' },
        { label: 'JSON-line relay CPU per call', value: middleCpuUsPerCall.jsonRelay, unit: 'µs' },
        { label: 'nteract-mcp CPU per call', value: middleCpuUsPerCall.proxy, unit: 'µs' },
        { label: 'byte pipe CPU per call, 64 in flight', value: middleCpuUsPerCallAt64.pipe, unit: 'µs' },
        { label: 'nteract-mcp CPU per call, 64 in flight', value: middleCpuUsPerCallAt64.proxy, unit: 'µs' },
      ],
    };
  } finally {
    for (const peer of Object.values(peers)) await peer.close();
    user.stop();
  }
}
