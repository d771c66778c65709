// Resident memory on the user's path (a fresh HOME, the daemon auto-started by the child): the
// proxy, the child with 1 active + 8 parked notebooks, the daemon with 32 rooms and 64 more peers
// in them (kernels are their own processes and not counted), next to a bare byte-pipe Node process
// (the floor of any Node proxy; most of its RSS is the node binary, shared by every Node process);
// list_rooms, list_active_notebooks and connect latency there; and what 1,000 connect/disconnect
// cycles add to the child's and the daemon's RSS.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { RuntimedConnection, resolveRuntimedSocketPath } from '@nteract-mcp/runtimed-protocol';
import { JsonlPeer } from './lib/jsonl-peer.mjs';
import { rssMb, summarize } from './lib/stats.mjs';
import { createUserHome } from './lib/user-home.mjs';

/** Pids of processes whose command line contains `needle` and whose HOME is `home`. */
function processesOf(needle, home) {
  const found = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      if (!cmdline.includes(needle)) continue;
      const environ = readFileSync(`/proc/${entry}/environ`, 'utf8').split('\0');
      if (environ.includes(`HOME=${home}`)) found.push(Number(entry));
    } catch {
      // gone, or not ours to read
    }
  }
  return found;
}

const ms = (start) => Number(process.hrtime.bigint() - start) / 1e6;

/** A process's own resident memory, in MB: its anonymous pages (heap, stacks), without the mapped binary. */
function anonymousMb(pid) {
  try {
    return Number(/RssAnon:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]) / 1024;
  } catch {
    return Number.NaN;
  }
}
const idOf = (result) => JSON.parse(result.content[0].text).notebook_id;

export async function memoryBenchmark({ dist, here, size }) {
  const cycles = size === 'smoke' ? 20 : 1000;
  const rooms = size === 'smoke' ? 10 : 32;
  const extraPeers = size === 'smoke' ? 4 : 64;
  const peers = [];
  const user = createUserHome(dist);
  const env = { ...user.env, NTERACT_MCP_LOG_LEVEL: 'error' };
  try {
    const peer = new JsonlPeer(process.execPath, [join(dist, 'nteract-mcp.js')], env);
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
    const before = { childMb: await rssMb(child), daemonMb: await rssMb(daemon) };
    for (let cycle = 0; cycle < cycles; cycle++) {
      await peer.call('connect_notebook', { notebook_id: ids[cycle % ids.length] });
      await peer.call('disconnect_notebook', {});
    }
    const after = { childMb: await rssMb(child), daemonMb: await rssMb(daemon) };
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
        growthAfterCyclesMb: { child: after.childMb - before.childMb, daemon: after.daemonMb - before.daemonMb },
      },
      targets: {
        proxyMb: '<= 45',
        childMb: '<= 90 (1 active + 8 parked)',
        daemonMb: '<= 100 (32 rooms)',
        growth: '<= 5 per 1,000 cycles',
      },
      chart: [
        { label: 'byte pipe RSS (floor)', value: rss.bytePipeMb, unit: 'MB' },
        { label: 'proxy RSS', value: rss.proxyMb, unit: 'MB' },
        { label: 'byte pipe own (anonymous)', value: anonymous.bytePipeMb, unit: 'MB' },
        { label: 'proxy own (anonymous)', value: anonymous.proxyMb, unit: 'MB' },
        { label: 'child RSS (1+8 notebooks)', value: rss.childMb, unit: 'MB' },
        { label: `daemon RSS (${rooms} rooms)`, value: rss.daemonMb, unit: 'MB' },
        { label: `child growth, ${cycles} cycles`, value: Math.max(0, after.childMb - before.childMb), unit: 'MB' },
      ],
    };
  } finally {
    for (const connection of peers) connection.close();
    user.stop();
  }
}
