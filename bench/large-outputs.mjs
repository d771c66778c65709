// What large outputs cost in memory on the user's path (a fresh HOME, the shipped nteract-mcp bin,
// the daemon auto-started by the child, a Python kernel): cells print 1, 10 and 100 MB of text (a
// stream output) and, at the largest size, display that much text/plain (a rich output, another
// path through the kernel, the daemon and the shaping); the agent reads each as an agent does (the
// execute_cell answer, get_cell, get_results pages at the start, the middle and the end) and the
// notebook is saved. Before the first cell (after a warm-up and a full GC forced from outside over
// the inspector) and after each, the daemon's, the child's and the proxy's RSS are read from /proc:
// raw (at once: the peak the step left, garbage not yet collected), settled (once V8's memory
// reducer, which collects an idle heap some seconds later, gave pages back) and after a full GC of
// the daemon and the child forced from outside. The target: what an output adds to the
// daemon's and the child's RSS is at most twice the largest output so far (outputs above a size
// live on disk, not in memory twice). Outputs stay in the notebook, so growth after the last size
// holds all of them.
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { activateInspector, heapFigures } from './lib/inspect-memory.mjs';
import { JsonlPeer } from './lib/jsonl-peer.mjs';
import { processesOf } from './lib/processes-of.mjs';
import { elapsedUs } from './lib/stats.mjs';
import { createUserHome } from './lib/user-home.mjs';
import { verdict } from './lib/verdict.mjs';

const MB = 1024 * 1024;

/** VmRSS of `pid` in MB. */
function rssOf(pid) {
  try {
    return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]) / 1024;
  } catch {
    return Number.NaN;
  }
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * RSS of each of `pids` after `idleMs` with nothing asked of them: V8's memory reducer collects a
 * heap that stopped growing some seconds (about 8) after the last allocation and gives its pages
 * back; this is what an idle process keeps.
 */
async function settledRss(pids, idleMs = 15_000) {
  await sleep(idleMs);
  return pids.map(rssOf);
}

const textOf = (result) => result.content.map((item) => item.text ?? '').join('');
const round1 = (value) => Math.round(value * 10) / 10;

/** Outputs from this size on are judged (below it, V8's heap sizing moves RSS by more than the output). */
const judgedFromMb = 10;

/**
 * The Python of a cell whose output is `bytes` of ASCII text in lines of 100: printed (`stream`)
 * or displayed as text/plain (`display`).
 */
function cellSource(bytes, kind) {
  const line = `${'y'.repeat(99)}\\n`;
  const build = `_big = '${line}' * ${Math.floor(bytes / 100)}`;
  if (kind === 'stream') return `${build}\nprint(_big, end='')\ndel _big`;
  return `${build}\nfrom IPython.display import display\ndisplay({'text/plain': _big}, raw=True)\ndel _big`;
}

export async function largeOutputsBenchmark({ dist, size }) {
  const sizesMb = size === 'smoke' ? [0.25, 1] : [1, 10, 100];
  const user = createUserHome(dist);
  const env = { ...user.env, NTERACT_MCP_LOG_LEVEL: 'error', NODE_OPTIONS: '--inspect-port=127.0.0.1:0' };
  const notebookPath = join(user.dirs.project, 'large-outputs.ipynb');
  const steps = [];
  let peer;
  try {
    peer = new JsonlPeer(process.execPath, [join(dist, 'nteract-mcp.js')], env);
    await peer.initialize();
    await peer.call('create_notebook', { working_dir: user.dirs.project });
    // Warm-up: the kernel started, every tool of the path run once on a small output.
    const warm = JSON.parse(textOf(await peer.call('create_cell', { source: cellSource(10_000, 'stream') })));
    const warmRun = JSON.parse(textOf(await peer.call('execute_cell', { cell_id: warm.cell_id, timeout_secs: 120 })));
    await peer.call('get_cell', { cell_id: warm.cell_id });
    await peer.call('get_results', { execution_id: warmRun.execution_id, offset: 0 });
    await peer.call('save_notebook', { path: notebookPath });
    const [child] = processesOf('runt-mcp.js', user.dirs.home);
    const [daemon] = processesOf('runtimed.js', user.dirs.home);
    const proxy = peer.process.pid;
    await Promise.all([activateInspector(child), activateInspector(daemon)]);
    const read = async () => {
      const raw = { daemon: rssOf(daemon), child: rssOf(child), proxy: rssOf(proxy) };
      const [daemonSettled, childSettled, proxySettled] = await settledRss(
        [daemon, child, proxy],
        size === 'smoke' ? 1000 : 15_000,
      );
      const settled = { daemon: daemonSettled, child: childSettled, proxy: proxySettled };
      const [daemonHeap, childHeap] = await Promise.all([heapFigures(daemon), heapFigures(child)]);
      const collected = { daemon: rssOf(daemon), child: rssOf(child) };
      return {
        raw,
        settled,
        collected,
        heap: {
          daemon: { heapUsedMb: daemonHeap.after.heapUsed, externalMb: daemonHeap.after.external },
          child: { heapUsedMb: childHeap.after.heapUsed, externalMb: childHeap.after.external },
        },
      };
    };
    await Promise.all([heapFigures(daemon), heapFigures(child)]);
    const before = await read();
    const cases = sizesMb.map((mb) => ({ mb, kind: 'stream' }));
    cases.push({ mb: sizesMb[sizesMb.length - 1], kind: 'display' });
    let largestMb = 0;
    for (const { mb, kind } of cases) {
      const bytes = Math.round(mb * MB);
      const cell = JSON.parse(textOf(await peer.call('create_cell', { source: cellSource(bytes, kind) })));
      const start = process.hrtime.bigint();
      const answer = JSON.parse(textOf(await peer.call('execute_cell', { cell_id: cell.cell_id, timeout_secs: 600 })));
      const runAndAnswerMs = elapsedUs(start) / 1000;
      if (answer.status !== 'done') throw new Error(`the ${mb} MB ${kind} cell ended ${answer.status}`);
      await peer.call('get_cell', { cell_id: cell.cell_id });
      // Pages as an agent reads them: the start, the middle and the end of the output.
      const first = JSON.parse(
        textOf(await peer.call('get_results', { execution_id: answer.execution_id, offset: 0 })),
      ).outputs_page;
      const total = first.total_chars;
      for (const offset of [Math.floor(total / 2), Math.max(0, total - first.length)]) {
        const page = JSON.parse(
          textOf(await peer.call('get_results', { execution_id: answer.execution_id, offset })),
        ).outputs_page;
        if (!/^y+$/.test(page.text.replaceAll('\n', '').slice(0, 1000)) && offset > 0)
          throw new Error(`page at ${offset} of the ${mb} MB output is not the output: ${page.text.slice(0, 80)}`);
      }
      await peer.call('save_notebook', {});
      largestMb = Math.max(largestMb, bytes / MB);
      const after = await read();
      steps.push({
        outputMb: mb,
        kind,
        runAndAnswerMs,
        largestOutputMb: largestMb,
        savedFileMb: statSync(notebookPath).size / MB,
        rss: after.raw,
        rssSettled: after.settled,
        rssAfterGc: after.collected,
        heapAfterGc: after.heap,
        growth: {
          daemon: after.raw.daemon - before.raw.daemon,
          child: after.raw.child - before.raw.child,
          proxy: after.raw.proxy - before.raw.proxy,
          daemonSettled: after.settled.daemon - before.settled.daemon,
          childSettled: after.settled.child - before.settled.child,
          proxySettled: after.settled.proxy - before.settled.proxy,
          daemonAfterGc: after.collected.daemon - before.collected.daemon,
          childAfterGc: after.collected.child - before.collected.child,
        },
      });
    }
    await peer.close();
    peer = undefined;
    // Judged where an output is large enough to tell (at 1 MB, V8's heap sizing moves RSS by more):
    // raw (what an outsider reads) and what a full GC leaves; the settled figure is reported.
    const verdicts = steps
      .filter((step) => step.outputMb >= judgedFromMb)
      .flatMap((step) =>
        [
          ['daemon', 'daemon'],
          ['child', 'child'],
          ['daemon after GC', 'daemonAfterGc'],
          ['child after GC', 'childAfterGc'],
        ].map(([process, key]) =>
          verdict(
            `${process} RSS growth / largest output, ${step.outputMb} MB ${step.kind}`,
            round1(step.growth[key] / step.largestOutputMb),
            '×',
            '<= 2',
          ),
        ),
      );
    const streams = steps.filter((step) => step.kind === 'stream');
    const x = streams.map((step) => step.outputMb);
    return {
      name: 'large-outputs',
      unit: 'MB of RSS (from /proc), growth over the RSS before the first large output',
      results: { before, steps },
      verdicts,
      curves: [
        {
          id: 'rss-growth',
          title: 'RSS growth after stream outputs of each size (outputs kept in the notebook)',
          x: { label: 'output MB', values: x },
          y: { label: 'RSS growth MB' },
          series: {
            daemon: streams.map((step) => round1(step.growth.daemon)),
            child: streams.map((step) => round1(step.growth.child)),
            'daemon settled': streams.map((step) => round1(step.growth.daemonSettled)),
            'child settled': streams.map((step) => round1(step.growth.childSettled)),
            'daemon after GC': streams.map((step) => round1(step.growth.daemonAfterGc)),
            'child after GC': streams.map((step) => round1(step.growth.childAfterGc)),
            proxy: streams.map((step) => round1(step.growth.proxy)),
            '2 × output': x.map((mb) => 2 * mb),
          },
        },
      ],
      chart: steps.flatMap((step) => [
        { label: `daemon +${step.outputMb} MB ${step.kind}`, value: step.growth.daemon, unit: 'MB' },
        { label: `child +${step.outputMb} MB ${step.kind}`, value: step.growth.child, unit: 'MB' },
      ]),
    };
  } finally {
    await peer?.close();
    user.stop();
  }
}
