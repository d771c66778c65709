// How fast the product comes back, on the user's path (a fresh HOME, the daemon auto-started by
// the child, a real ipykernel): a SIGKILL of runt-mcp until the next call is answered on the same
// notebook with its kernel state; `tools/list` while the child is down (served from the cache);
// a daemon restart (`runtimed stop` + `runtimed start`) until the session is back; a daemon
// upgrade (a new version reported), from the child's exit 75 until the next child answers on the
// rejoined notebook; cold start (client start until the full tool list) without and with a tool cache.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { JsonlPeer } from './lib/jsonl-peer.mjs';
import { summarizeEach, until } from './lib/stats.mjs';
import { createUserHome } from './lib/user-home.mjs';
import { verdict } from './lib/verdict.mjs';

/** The pids whose parent is `pid` (Linux /proc). */
function childrenOf(pid) {
  const children = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (parent === pid) children.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return children;
}

const ms = (start) => Number(process.hrtime.bigint() - start) / 1e6;

export async function recoveryBenchmark({ dist, size }) {
  const kills = size === 'smoke' ? 2 : 10;
  const restarts = size === 'smoke' ? 1 : 3;
  const colds = size === 'smoke' ? 1 : 5;
  const proxyEntry = join(dist, 'nteract-mcp.js');
  const user = createUserHome(dist);
  const env = { ...user.env, NTERACT_MCP_LOG_LEVEL: 'error' };
  const results = {
    childKillToAnswerMs: [],
    toolsListWhileDownMs: [],
    daemonRestartToSessionMs: [],
    upgradeExitToReadyMs: [],
    coldStartMs: [],
    warmStartMs: [],
  };
  try {
    // A generous crash budget: the benchmark kills more often than the breaker allows by default.
    const peer = new JsonlPeer(process.execPath, [proxyEntry, '--crash-budget', '1000'], env);
    await peer.initialize();
    const created = await peer.call('create_notebook', {});
    const notebookId = JSON.parse(created.content[0].text).notebook_id;
    await peer.call('create_cell', { source: 'x = 41', and_run: true, timeout_secs: 120 });
    const proxyPid = peer.process.pid;
    const childPid = () => childrenOf(proxyPid)[0];
    // A first crash each time: a proxy whose child crashed moments ago waits longer before the
    // next restart (the restart policy's backoff), so every sample is a fresh client's session on
    // the notebook (its kernel kept by the daemon, which the first client still holds).
    for (let kill = 0; kill < kills; kill++) {
      const client = new JsonlPeer(process.execPath, [proxyEntry], env);
      await client.initialize();
      await client.call('connect_notebook', { notebook_id: notebookId });
      const before = await until('its child', () => childrenOf(client.process.pid)[0]);
      process.kill(before, 'SIGKILL');
      const start = process.hrtime.bigint();
      // Sent the moment the fault happens, as a user's next call would be.
      const answer = await client.call('create_cell', { source: 'print(x + 1)', and_run: true, timeout_secs: 120 });
      const elapsed = ms(start);
      if (!JSON.stringify(answer.content).includes('42'))
        throw new Error(`kernel state lost: ${JSON.stringify(answer)}`);
      results.childKillToAnswerMs.push(elapsed);
      await client.close();
    }
    for (let kill = 0; kill < kills; kill++) {
      const before = await until('a child', childPid);
      process.kill(before, 'SIGKILL');
      const start = process.hrtime.bigint();
      const listed = await peer.request('tools/list', {});
      results.toolsListWhileDownMs.push(ms(start));
      if (!(listed.result?.tools?.length > 10)) throw new Error('no tool list while the child was down');
      await until('the new child', () => childPid() !== undefined && childPid() !== before);
      await peer.call('session_status', {});
    }
    const runtimed = (args) =>
      spawnSync(process.execPath, [join(dist, 'runtimed.js'), ...args], { env, encoding: 'utf8', timeout: 60_000 });
    await peer.call('save_notebook', { path: join(user.dirs.project, 'bench.ipynb') });
    for (let restart = 0; restart < restarts; restart++) {
      runtimed(['stop']);
      const started = runtimed(['start']);
      if (started.status !== 0 && !started.stderr.includes('already running')) throw new Error(started.stderr);
      const start = process.hrtime.bigint();
      await until('the session back', async () => {
        const status = await peer.call('session_status', {});
        return JSON.parse(status.content[0].text).active?.notebook_id === notebookId;
      });
      results.daemonRestartToSessionMs.push(ms(start));
    }
    for (let upgrade = 0; upgrade < restarts; upgrade++) {
      const before = await until('a child', childPid);
      runtimed(['stop']);
      const started = spawnSync(process.execPath, [join(dist, 'runtimed.js'), 'start'], {
        env: { ...env, RUNTIMED_REPORTED_VERSION: `99.0.${upgrade}-bench` },
        encoding: 'utf8',
        timeout: 60_000,
      });
      if (started.status !== 0) throw new Error(started.stderr);
      // The child sees another version and exits 75; from then until the next child serves.
      await until('the exit 75', () => !existsSync(`/proc/${before}`), 60_000, 1);
      const start = process.hrtime.bigint();
      const status = await peer.call('session_status', {});
      if (JSON.parse(status.content[0].text).active?.notebook_id !== notebookId)
        throw new Error(`the notebook was not rejoined after the upgrade: ${status.content[0].text}`);
      results.upgradeExitToReadyMs.push(ms(start));
    }
    await peer.close();
    for (let cold = 0; cold < colds; cold++) {
      for (const [key, cacheArgs] of [
        ['coldStartMs', ['--tool-cache', join(user.dirs.home, `fresh-${cold}.json`)]],
        ['warmStartMs', []],
      ]) {
        const start = process.hrtime.bigint();
        const client = new JsonlPeer(process.execPath, [proxyEntry, ...cacheArgs], env);
        await client.initialize();
        const listed = await client.request('tools/list', {});
        results[key].push(ms(start));
        if (!(listed.result?.tools?.length > 10)) throw new Error(`${key}: no full tool list`);
        await client.close();
      }
    }
  } finally {
    user.stop();
  }
  const stats = summarizeEach(results);
  return {
    name: 'recovery',
    unit: 'ms (median and p90 of each)',
    results: stats,
    targets: {
      childKillToAnswerMs: 'p50 <= 300',
      toolsListWhileDownMs: '<= 5',
      daemonRestartToSessionMs: '<= 1000 after the daemon answers',
      upgradeExitToReadyMs: '<= 300',
      coldStartMs: '<= 1500',
    },
    verdicts: [
      verdict('child SIGKILL → next answer, p50', stats.childKillToAnswerMs.p50, 'ms', '<= 300'),
      verdict('tools/list while the child is down, p50', stats.toolsListWhileDownMs.p50, 'ms', '<= 5'),
      verdict('daemon restart → session back, p50', stats.daemonRestartToSessionMs.p50, 'ms', '<= 1000'),
      verdict('upgrade exit 75 → ready, p50', stats.upgradeExitToReadyMs.p50, 'ms', '<= 300'),
      verdict('cold start → full tool list, p50', stats.coldStartMs.p50, 'ms', '<= 1500'),
    ],
    samples: { unit: 'ms', sets: results },
    chart: Object.entries(stats).map(([name, summary]) => ({ label: `${name} p50`, value: summary.p50, unit: 'ms' })),
  };
}
