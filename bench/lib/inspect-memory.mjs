// Reads a running Node process's own memory figures from outside it, over its inspector (started
// with `--inspect-port=127.0.0.1:0` through NODE_OPTIONS, which opens nothing until SIGUSR1; see
// activateInspector): heap used/total, external, array buffers and V8's heap spaces, before and
// after a full GC, and its active handles. No product code takes part.
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { createRequire } from 'node:module';

// Node 20 has no WebSocket client without a flag; `ws` is a dependency of plugin-hosted (resolved
// from there, so the bench needs no dependency of its own).
const WebSocket = createRequire(new URL('../../packages/plugin-hosted/package.json', import.meta.url))('ws');

/** The TCP ports process `pid` listens on (its inspector's among them; the daemon also serves its page). */
export function listeningPortsOf(pid) {
  const inodes = new Set();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const match = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (match) inodes.add(match[1]);
    } catch {
      // closed meanwhile
    }
  }
  const ports = [];
  for (const table of ['tcp', 'tcp6']) {
    let text;
    try {
      text = readFileSync(`/proc/${pid}/net/${table}`, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      if (fields.length < 10 || fields[3] !== '0A' || !inodes.has(fields[9])) continue;
      ports.push(Number.parseInt(fields[1].split(':')[1], 16));
    }
  }
  return ports;
}

/** The inspector target of process `pid`: the first of its listening ports that answers `/json/list`. */
async function inspectorTargetOf(pid) {
  for (const port of listeningPortsOf(pid)) {
    const answer = await fetch(`http://127.0.0.1:${port}/json/list`).catch(() => undefined);
    if (!answer?.ok) continue;
    const [target] = await answer.json().catch(() => []);
    if (target?.webSocketDebuggerUrl) return target;
  }
  return undefined;
}

/** An inspector session on process `pid`; `evaluate(expression)` returns the JSON value. */
export async function openInspector(pid) {
  const target = await inspectorTargetOf(pid);
  if (target === undefined) throw new Error(`process ${pid} has no inspector listening`);
  const socket = new WebSocket(target.webSocketDebuggerUrl);
  await new Promise((resolve, reject) => {
    socket.once('open', resolve);
    socket.once('error', reject);
  });
  let nextId = 1;
  const pending = new Map();
  socket.on('message', (data) => {
    const message = JSON.parse(String(data));
    const entry = pending.get(message.id);
    if (!entry) return;
    pending.delete(message.id);
    if (message.error) entry.reject(new Error(message.error.message));
    else entry.resolve(message.result);
  });
  const send = (method, params = {}) =>
    new Promise((resolve, reject) => {
      const id = nextId++;
      pending.set(id, { resolve, reject });
      socket.send(JSON.stringify({ id, method, params }));
    });
  return {
    send,
    async evaluate(expression) {
      const result = await send('Runtime.evaluate', {
        expression,
        returnByValue: true,
        includeCommandLineAPI: true,
        awaitPromise: true,
      });
      if (result.exceptionDetails) throw new Error(JSON.stringify(result.exceptionDetails));
      return result.result.value;
    },
    close() {
      socket.close();
    },
  };
}

const MB = 1024 * 1024;

const FIGURES = `(() => {
  const v8 = require('node:v8');
  const m = process.memoryUsage();
  const spaces = {};
  for (const s of v8.getHeapSpaceStatistics()) spaces[s.space_name] = { used: s.space_used_size, size: s.space_size };
  return {
    rss: m.rss, heapUsed: m.heapUsed, heapTotal: m.heapTotal, external: m.external, arrayBuffers: m.arrayBuffers,
    spaces,
    handles: process._getActiveHandles().map((h) => h?.constructor?.name ?? typeof h),
    requests: process._getActiveRequests().length,
  };
})()`;

/** The process's own figures in MB, before and after a full GC. */
export async function heapFigures(pid, { collect = true } = {}) {
  const inspector = await openInspector(pid);
  try {
    const before = await inspector.evaluate(FIGURES);
    if (collect) await inspector.send('HeapProfiler.collectGarbage');
    const after = collect ? await inspector.evaluate(FIGURES) : before;
    const mb = (figures) => ({
      rss: figures.rss / MB,
      heapUsed: figures.heapUsed / MB,
      heapTotal: figures.heapTotal / MB,
      external: figures.external / MB,
      arrayBuffers: figures.arrayBuffers / MB,
      spaces: Object.fromEntries(
        Object.entries(figures.spaces).map(([name, s]) => [name, { used: s.used / MB, size: s.size / MB }]),
      ),
    });
    const handleCounts = {};
    for (const name of after.handles) handleCounts[name] = (handleCounts[name] ?? 0) + 1;
    return { before: mb(before), after: mb(after), handles: handleCounts, requests: after.requests };
  } finally {
    inspector.close();
  }
}

/**
 * Opens the inspector of a running process started with `--inspect-port=127.0.0.1:0` (SIGUSR1, as
 * `node inspect -p` does; the process runs on unchanged) and waits until it listens.
 */
export async function activateInspector(pid, timeoutMs = 15_000) {
  if ((await inspectorTargetOf(pid)) !== undefined) return;
  process.kill(pid, 'SIGUSR1');
  const deadline = Date.now() + timeoutMs;
  while ((await inspectorTargetOf(pid)) === undefined) {
    if (Date.now() > deadline) throw new Error(`process ${pid} did not open its inspector`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * Counts collections by kind (`gc` performance entries, node:perf_hooks
 * `constants.NODE_PERFORMANCE_GC_*`) and, with a `v8.GCProfiler`, what each scavenge moved into
 * the old generation (its old-space bytes after minus before).
 */
const GC_COUNTER = `(() => {
  const { PerformanceObserver, constants } = require('node:perf_hooks');
  const { GCProfiler } = require('node:v8');
  const counts = { minor: 0, major: 0, incremental: 0, weakCallbacks: 0 };
  const names = {
    [constants.NODE_PERFORMANCE_GC_MINOR]: 'minor',
    [constants.NODE_PERFORMANCE_GC_MAJOR]: 'major',
    [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental',
    [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weakCallbacks',
  };
  const count = (entries) => {
    for (const entry of entries) {
      const name = names[entry.detail?.kind];
      if (name) counts[name] += 1;
    }
  };
  const observer = new PerformanceObserver((list) => count(list.getEntries()));
  observer.observe({ entryTypes: ['gc'] });
  const profiler = new GCProfiler();
  profiler.start();
  globalThis.__benchGc = { counts, observer, count, profiler };
  return true;
})()`;

/** Ends the counting started by GC_COUNTER: the counts, and the bytes the scavenges promoted. */
const GC_COUNTER_STOP = `(() => {
  const { counts, observer, count, profiler } = globalThis.__benchGc;
  // Entries not yet delivered to the observer are taken with it.
  count(observer.takeRecords());
  observer.disconnect();
  delete globalThis.__benchGc;
  const used = (statistics, space) => statistics.heapSpaceStatistics.find((s) => s.spaceName === space)?.spaceUsedSize ?? 0;
  let promotedBytes = 0;
  for (const gc of profiler.stop()?.statistics ?? []) {
    if (gc.gcType === 'Scavenge') promotedBytes += used(gc.afterGC, 'old_space') - used(gc.beforeGC, 'old_space');
  }
  return { ...counts, promotedBytes };
})()`;

/**
 * Starts counting the garbage collections of process `pid` (its inspector active); `stop()`
 * resolves with how many of each kind ran since (minor: scavenges of the young generation;
 * major: mark-compacts of the whole heap), the bytes the scavenges promoted to the old generation
 * (what survived two of them: the old generation grows by that until its next mark-compact), and
 * stops counting.
 */
export async function countCollections(pid) {
  const inspector = await openInspector(pid);
  try {
    await inspector.evaluate(GC_COUNTER);
  } finally {
    inspector.close();
  }
  return {
    async stop() {
      const reader = await openInspector(pid);
      try {
        return await reader.evaluate(GC_COUNTER_STOP);
      } finally {
        reader.close();
      }
    },
  };
}
