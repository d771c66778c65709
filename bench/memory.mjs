// Resident memory on the user's path (a fresh HOME, the daemon auto-started by the child): the
// proxy, the child with 1 active + 8 parked notebooks, the daemon with 32 rooms and 64 more peers
// in them (kernels are their own processes and not counted), next to a bare byte-pipe Node process
// (the floor of any Node proxy; most of its RSS is the node binary, shared by every Node process);
// list_rooms, list_active_notebooks and connect latency there; and what 1,000 connect/disconnect
// cycles add to the child's and the daemon's RSS: the raw growth with its curve (RSS and anonymous
// pages at 0, 100, 250, 500, 1,000 cycles), what 1,000 more add (to 2,000), and the retained
// growth, what is left after a full GC (read from outside over the inspector), and how many
// collections of each kind ran during the cycles, with what their scavenges promoted to the old
// generation per cycle (the old generation grows by that until its next mark-compact, so it is
// what the cycles' raw growth comes from: on Node 20 every AbortSignal, every socket and, with
// zod 4.6, every failed safeParse leaves from a few hundred bytes to 1.5 KB there, and the MCP SDK
// makes one signal and two failed parses per request). Raw growth that a GC gives back is V8's heap
// sizing (its young generation grows with the bytes that survive scavenges, up to the 2 × 4 MB
// the product caps it at, and garbage waits in the old generation for the next mark-compact,
// which V8 schedules once the old generation has grown past what the last one left by a factor
// of it or by 8 MB, whichever is more, plus the young generation's capacity), not a leak.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { RuntimedConnection, resolveRuntimedSocketPath } from '@nteract-mcp/runtimed-protocol';
import { activateInspector, countCollections, heapFigures } from './lib/inspect-memory.mjs';
import { JsonlPeer } from './lib/jsonl-peer.mjs';
import { processesOf } from './lib/processes-of.mjs';
import { rssMb, summarize } from './lib/stats.mjs';
import { createUserHome } from './lib/user-home.mjs';
import { verdict } from './lib/verdict.mjs';

const ms = (start) => Number(process.hrtime.bigint() - start) / 1e6;

/** A /proc/<pid>/status figure in MB: `VmRSS` (all resident pages), `RssAnon` (the process's own: heap, stacks, without the mapped binary). */
function statusMb(pid, field) {
  try {
    return Number(new RegExp(`${field}:\\s+(\\d+)`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]) / 1024;
  } catch {
    return Number.NaN;
  }
}
const anonymousMb = (pid) => statusMb(pid, 'RssAnon');
const idOf = (result) => JSON.parse(result.content[0].text).notebook_id;

/** Where the growth curve is sampled (and at the last cycle). */
const checkpoints = [100, 250, 500, 1000, 2000, 5000, 10000];

export async function memoryBenchmark({ dist, here, size, memoryCycles }) {
  const cycles = memoryCycles ?? (size === 'smoke' ? 20 : 1000);
  const rooms = size === 'smoke' ? 10 : 32;
  const extraPeers = size === 'smoke' ? 4 : 64;
  const peers = [];
  // The MCP processes (the proxy, the byte pipe): closed before the daemon is stopped, or their
  // runt-mcp children, seeing it gone, would start it again in the benchmark's HOME.
  const clients = [];
  const user = createUserHome(dist);
  // The inspector port is set, not opened: the child and the daemon open it on SIGUSR1 only before
  // the cycles (to read their heap and force a GC from outside), so nothing else is measured with it.
  const env = { ...user.env, NTERACT_MCP_LOG_LEVEL: 'error', NODE_OPTIONS: '--inspect-port=127.0.0.1:0' };
  try {
    const peer = new JsonlPeer(process.execPath, [join(dist, 'nteract-mcp.js')], env);
    clients.push(peer);
    await peer.initialize();
    const ids = [];
    for (let room = 0; room < rooms; room++) ids.push(idOf(await peer.call('create_notebook', { ephemeral: false })));
    // The last 9: one active, eight parked.
    for (const id of ids.slice(-9)) await peer.call('connect_notebook', { notebook_id: id });
    const [child] = processesOf('runt-mcp.js', user.dirs.home);
    const [daemon] = processesOf('runtimed.js', user.dirs.home);
    // More peers in the rooms, as other clients (editors, agents) would be.
    const socketPath = resolveRuntimedSocketPath(user.env);
    for (let i = 0; i < extraPeers; i++) {
      const { connection } = await RuntimedConnection.open({
        socketPath,
        handshake: {
          channel: 'notebook',
          mode: 'attach',
          peer_label: `bench peer ${i}`,
          notebook_id: ids[i % ids.length],
        },
      });
      peers.push(connection);
    }
    // The floor of a Node process that forwards bytes, measured beside the proxy.
    const pipe = new JsonlPeer(process.execPath, [join(here, 'lib', 'byte-pipe.mjs'), join(dist, 'runt-mcp.js')], env);
    clients.push(pipe);
    await pipe.initialize();
    await pipe.request('tools/list', {});
    for (let i = 0; i < 50; i++) await peer.call('list_active_notebooks', {});
    const rss = {
      proxyMb: await rssMb(peer.process.pid),
      bytePipeMb: await rssMb(pipe.process.pid),
      childMb: await rssMb(child),
      daemonMb: await rssMb(daemon),
    };
    const anonymous = {
      proxyMb: anonymousMb(peer.process.pid),
      bytePipeMb: anonymousMb(pipe.process.pid),
      childMb: anonymousMb(child),
      daemonMb: anonymousMb(daemon),
    };
    await pipe.close();
    const control = (await RuntimedConnection.open({ socketPath, handshake: { channel: 'control' } })).connection;
    const listRoomsMs = [];
    for (let i = 0; i < 50; i++) {
      const start = process.hrtime.bigint();
      const listed = await control.requestControl({ type: 'list_rooms' });
      listRoomsMs.push(ms(start));
      if (listed.rooms.length < rooms) throw new Error(`list_rooms named ${listed.rooms.length} rooms`);
    }
    control.close();
    const listMs = [];
    const connectMs = [];
    for (let i = 0; i < 20; i++) {
      let start = process.hrtime.bigint();
      await peer.call('list_active_notebooks', {});
      listMs.push(ms(start));
      start = process.hrtime.bigint();
      await peer.call('connect_notebook', { notebook_id: ids[i % ids.length] });
      connectMs.push(ms(start));
    }
    // The cycles, twice as many as asked. Raw growth is RSS from a just-collected heap to the end of
    // the first `cycles`: everything they add, garbage and V8's grown young generation included.
    // The next `cycles` show the rate once the heap is sized (from the RSS the first left, no GC
    // between). Retained growth is what a full GC at the very end leaves of it all (a leak shows
    // there; heap sizing does not).
    await Promise.all([activateInspector(child), activateInspector(daemon)]);
    const collectedBefore = { child: await heapFigures(child), daemon: await heapFigures(daemon) };
    const curve = {};
    const checkpoint = (cycle) => {
      curve[cycle] = {
        childRssMb: statusMb(child, 'VmRSS'),
        childAnonMb: statusMb(child, 'RssAnon'),
        daemonRssMb: statusMb(daemon, 'VmRSS'),
        daemonAnonMb: statusMb(daemon, 'RssAnon'),
      };
    };
    checkpoint(0);
    const counting = { child: await countCollections(child), daemon: await countCollections(daemon) };
    for (let cycle = 0; cycle < 2 * cycles; cycle++) {
      await peer.call('connect_notebook', { notebook_id: ids[cycle % ids.length] });
      await peer.call('disconnect_notebook', {});
      if (checkpoints.includes(cycle + 1) || cycle + 1 === cycles || cycle + 1 === 2 * cycles) checkpoint(cycle + 1);
    }
    const collections = { child: await counting.child.stop(), daemon: await counting.daemon.stop() };
    const collectedAfter = { child: await heapFigures(child), daemon: await heapFigures(daemon) };
    const growth = (who) => {
      const start = collectedBefore[who].after;
      const end = collectedAfter[who];
      const rssAt = (cycle) => curve[cycle][`${who}RssMb`];
      return {
        rawRssMb: rssAt(cycles) - start.rss,
        // The same from the RSS before that first full GC (which also shrank the young generation).
        rawFromUncollectedRssMb: rssAt(cycles) - collectedBefore[who].before.rss,
        nextRawRssMb: rssAt(2 * cycles) - rssAt(cycles),
        retainedRssMb: end.after.rss - start.rss,
        retainedHeapUsedMb: end.after.heapUsed - start.heapUsed,
        retainedExternalMb: end.after.external - start.external,
        youngGenerationMb: { start: start.spaces.new_space.size, end: end.before.spaces.new_space.size },
        oldSpaceMb: { start: start.spaces.old_space.size, end: end.before.spaces.old_space.size },
      };
    };
    const childCycles = growth('child');
    const daemonCycles = growth('daemon');
    await peer.close();
    return {
      name: 'memory',
      unit: `MB resident (all pages, and the process's own anonymous ones); ms for list/connect with ${rooms} rooms and ${extraPeers + 1} peers`,
      results: {
        rss,
        anonymousRss: anonymous,
        rooms,
        peers: extraPeers + 1,
        listRoomsMs: summarize(listRoomsMs),
        listActiveNotebooksMs: summarize(listMs),
        connectMs: summarize(connectMs),
        cycles,
        growthAfterCyclesMb: { child: childCycles.rawRssMb, daemon: daemonCycles.rawRssMb },
        growthOverNextCyclesMb: { child: childCycles.nextRawRssMb, daemon: daemonCycles.nextRawRssMb },
        retainedAfterCyclesMb: { child: childCycles.retainedRssMb, daemon: daemonCycles.retainedRssMb },
        cycleDetail: { child: childCycles, daemon: daemonCycles },
        promotedPerCycleKb: {
          child: collections.child.promotedBytes / 1024 / (2 * cycles),
          daemon: collections.daemon.promotedBytes / 1024 / (2 * cycles),
        },
        collectionsDuringCycles: collections,
        curve,
      },
      targets: {
        proxyMb: '<= 45',
        childMb: '<= 90 (1 active + 8 parked)',
        daemonMb: '<= 100 (32 rooms)',
        growth:
          '<= 5 per 1,000 cycles after a warm-up of 1,000 (growthOverNextCyclesMb), and <= 5 left by a full GC after both (retainedAfterCyclesMb); the first 1,000 (growthAfterCyclesMb, raw) is reported, not judged',
      },
      verdicts: [
        verdict('proxy RSS − byte pipe RSS, light workload', rss.proxyMb - rss.bytePipeMb, 'MB', '<= 5'),
        verdict('child RSS, 1 active + 8 parked notebooks', rss.childMb, 'MB', '<= 90'),
        verdict(`daemon RSS, ${rooms} rooms`, rss.daemonMb, 'MB', '<= 100'),
        verdict(`child growth, ${cycles} cycles after ${cycles} of warm-up`, childCycles.nextRawRssMb, 'MB', '<= 5'),
        verdict(`daemon growth, ${cycles} cycles after ${cycles} of warm-up`, daemonCycles.nextRawRssMb, 'MB', '<= 5'),
        verdict(`child RSS a full GC leaves after ${2 * cycles} cycles`, childCycles.retainedRssMb, 'MB', '<= 5'),
        verdict(`daemon RSS a full GC leaves after ${2 * cycles} cycles`, daemonCycles.retainedRssMb, 'MB', '<= 5'),
      ],
      chart: [
        { label: 'byte pipe RSS (floor)', value: rss.bytePipeMb, unit: 'MB' },
        { label: 'proxy RSS', value: rss.proxyMb, unit: 'MB' },
        { label: 'byte pipe own (anonymous)', value: anonymous.bytePipeMb, unit: 'MB' },
        { label: 'proxy own (anonymous)', value: anonymous.proxyMb, unit: 'MB' },
        { label: 'child RSS (1+8 notebooks)', value: rss.childMb, unit: 'MB' },
        { label: `daemon RSS (${rooms} rooms)`, value: rss.daemonMb, unit: 'MB' },
        { label: `child growth, first ${cycles} cycles`, value: Math.max(0, childCycles.rawRssMb), unit: 'MB' },
        { label: `child growth, next ${cycles}`, value: Math.max(0, childCycles.nextRawRssMb), unit: 'MB' },
        { label: `child retained, ${2 * cycles} cycles`, value: Math.max(0, childCycles.retainedRssMb), unit: 'MB' },
        { label: `daemon growth, first ${cycles} cycles`, value: Math.max(0, daemonCycles.rawRssMb), unit: 'MB' },
        { label: `daemon growth, next ${cycles}`, value: Math.max(0, daemonCycles.nextRawRssMb), unit: 'MB' },
        { label: `daemon retained, ${2 * cycles} cycles`, value: Math.max(0, daemonCycles.retainedRssMb), unit: 'MB' },
      ],
    };
  } finally {
    for (const connection of peers) connection.close();
    for (const client of clients) await client.close();
    user.stop();
  }
}
