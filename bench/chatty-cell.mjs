// What a chatty cell costs on the user's path (a fresh HOME, the shipped nteract-mcp bin, the
// daemon auto-started by the child, a Python kernel): a cell logs the way a training loop does,
// one flushed line at a time (`print("step", i, "loss", 1/(i+1), flush=True)`: each line its own
// kernel message), at 1,000, 10,000 and 100,000 lines, while a page peer follows the room's event
// stream. Read from outside (Linux /proc) around each run:
// - CPU of the daemon and the child (utime + stime), per printed line;
// - bytes per printed line on each hop: daemon → child (the child's bytes read), child → proxy
//   (the proxy's bytes read), proxy → client (what this client read), daemon → page (what this
//   page peer read from its event stream);
// - the peak RSS of the daemon and the child during the run (VmHWM, reset before it), over the
//   RSS before it, and their heap after a full GC (forced from outside over the inspector) over
//   the heap before it: what they hold of what was printed.
// Judged flat: each per-line figure at 100,000 lines is at most 1.5 × the one at 1,000 (work that
// grows with what was printed before shows as a rising curve). Memory is judged against the bytes
// printed: the heap held after the run at most 2 × them (the output held once, not per peer or per
// event), and peak RSS growth per printed byte flat from 10,000 to 100,000 lines (at fewer lines
// V8's heap steps of several MB outweigh what was printed).
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { followAsPage } from './lib/follow-as-page.mjs';
import { activateInspector, heapFigures } from './lib/inspect-memory.mjs';
import { JsonlPeer } from './lib/jsonl-peer.mjs';
import { processesOf } from './lib/processes-of.mjs';
import { elapsedUs } from './lib/stats.mjs';
import { createUserHome } from './lib/user-home.mjs';
import { verdict } from './lib/verdict.mjs';

const MB = 1024 * 1024;
const ticksPerSecond = 100;

/** CPU time (user + system) of `pid` in ms. */
function cpuMs(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / ticksPerSecond;
}

/** Bytes `pid` has read through read(2)-like calls (sockets and pipes included). */
function bytesRead(pid) {
  return Number(/rchar:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/io`, 'utf8'))?.[1]);
}

function statusMb(pid, field) {
  return Number(new RegExp(`${field}:\\s+(\\d+)`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]) / 1024;
}

/** Resets `pid`'s peak RSS (VmHWM) to its RSS now. */
function resetPeak(pid) {
  writeFileSync(`/proc/${pid}/clear_refs`, '5');
}

const textOf = (result) => result.content.map((item) => item.text ?? '').join('');
const round2 = (value) => Math.round(value * 100) / 100;

/** The cell: `lines` flushed lines, as a training loop logs its progress. */
function cellSource(lines) {
  return `for i in range(${lines}):\n    print("step", i, "loss", 1 / (i + 1), flush=True)`;
}

/** The bytes of those lines as printed. */
function printedBytes(lines) {
  let bytes = 0;
  for (let i = 0; i < lines; i++) bytes += `step ${i} loss ${pythonFloat(1 / (i + 1))}\n`.length;
  return bytes;
}

/** Python's repr of a float, near enough for counting bytes (exponents as Python writes them). */
function pythonFloat(value) {
  if (value === 1) return '1.0';
  const text = String(value);
  return text.replace(/e-(\d)$/, 'e-0$1');
}

export async function chattyCellBenchmark({ dist, size }) {
  const sizes = size === 'smoke' ? [500, 2_000, 5_000] : [1_000, 10_000, 100_000];
  const user = createUserHome(dist);
  const env = { ...user.env, NTERACT_MCP_LOG_LEVEL: 'error', NODE_OPTIONS: '--inspect-port=127.0.0.1:0' };
  const steps = [];
  let peer;
  let page;
  try {
    peer = new JsonlPeer(process.execPath, [join(dist, 'nteract-mcp.js')], env);
    const client = { bytes: 0 };
    peer.process.stdout.on('data', (chunk) => {
      client.bytes += Buffer.byteLength(chunk);
    });
    await peer.initialize();
    await peer.call('create_notebook', { working_dir: user.dirs.project });
    await peer.call('save_notebook', { path: join(user.dirs.project, 'chatty.ipynb') });
    // Warm-up: the kernel started, the path run once.
    const warm = JSON.parse(textOf(await peer.call('create_cell', { source: cellSource(200) })));
    await peer.call('execute_cell', { cell_id: warm.cell_id, timeout_secs: 120 });
    const [child] = processesOf('runt-mcp.js', user.dirs.home);
    const [daemon] = processesOf('runtimed.js', user.dirs.home);
    const proxy = peer.process.pid;
    await Promise.all([activateInspector(child), activateInspector(daemon)]);
    /** Heap used (MB) of the daemon and the child after a full GC. */
    const heldHeap = async () => {
      const [daemonHeap, childHeap] = await Promise.all([heapFigures(daemon), heapFigures(child)]);
      return { daemon: daemonHeap.after.heapUsed, child: childHeap.after.heapUsed };
    };
    page = await followAsPage(textOf(await peer.call('show_notebook', {})).split('\n')[0]);
    for (const lines of sizes) {
      const cell = JSON.parse(textOf(await peer.call('create_cell', { source: cellSource(lines) })));
      const heapBefore = await heldHeap();
      const rssBefore = { daemon: statusMb(daemon, 'VmRSS'), child: statusMb(child, 'VmRSS') };
      resetPeak(daemon);
      resetPeak(child);
      const before = {
        cpu: cpuMs(daemon) + cpuMs(child),
        childRead: bytesRead(child),
        proxyRead: bytesRead(proxy),
        client: client.bytes,
        page: page.counter.bytes,
      };
      const start = process.hrtime.bigint();
      const answer = JSON.parse(textOf(await peer.call('execute_cell', { cell_id: cell.cell_id, timeout_secs: 1200 })));
      const wallMs = elapsedUs(start) / 1000;
      if (answer.status !== 'done') throw new Error(`the ${lines}-line cell ended ${answer.status}`);
      const shown = answer.outputs.map((output) => output.text ?? '').join('');
      if (!shown.includes(`step ${lines - 1} loss`)) throw new Error(`the ${lines}-line answer lacks the last line`);
      const cpu = cpuMs(daemon) + cpuMs(child) - before.cpu;
      const peak = { daemon: statusMb(daemon, 'VmHWM'), child: statusMb(child, 'VmHWM') };
      const heapAfter = await heldHeap();
      const printed = printedBytes(lines);
      steps.push({
        lines,
        printedMb: printed / MB,
        wallMs,
        cpuMs: cpu,
        cpuMsPerLine: cpu / lines,
        bytesPerLine: {
          daemonToChild: (bytesRead(child) - before.childRead) / lines,
          childToProxy: (bytesRead(proxy) - before.proxyRead) / lines,
          proxyToClient: (client.bytes - before.client) / lines,
          daemonToPage: (page.counter.bytes - before.page) / lines,
          printed: printed / lines,
        },
        peakRssGrowthMb: { daemon: peak.daemon - rssBefore.daemon, child: peak.child - rssBefore.child },
        heldHeapGrowthMb: { daemon: heapAfter.daemon - heapBefore.daemon, child: heapAfter.child - heapBefore.child },
      });
    }
    page.stop();
    page = undefined;
    await peer.close();
    peer = undefined;
  } finally {
    page?.stop();
    peer?.process.kill('SIGKILL');
    user.stop();
  }
  const first = steps[0];
  const last = steps[steps.length - 1];
  const middle = steps[steps.length - 2];
  const flat = (figure, of) =>
    verdict(`${figure}, ${last.lines} vs ${first.lines} lines`, round2(of(last) / of(first)), '×', '<= 1.5');
  const hops = ['daemonToChild', 'childToProxy', 'proxyToClient', 'daemonToPage'];
  const hopLabel = {
    daemonToChild: 'daemon → child',
    childToProxy: 'child → proxy',
    proxyToClient: 'proxy → client',
    daemonToPage: 'daemon → page',
  };
  const verdicts = [
    flat('CPU (daemon + child) per printed line', (step) => step.cpuMsPerLine),
    ...hops.map((hop) => flat(`bytes per printed line ${hopLabel[hop]}`, (step) => step.bytesPerLine[hop])),
    ...['daemon', 'child'].map((process) =>
      verdict(
        `${process} heap held after a full GC / printed bytes, ${last.lines} lines`,
        round2(last.heldHeapGrowthMb[process] / last.printedMb),
        '×',
        '<= 2',
      ),
    ),
    ...['daemon', 'child'].map((process) => {
      const perByte = (step) => step.peakRssGrowthMb[process] / step.printedMb;
      return verdict(
        `${process} peak RSS growth per printed byte, ${last.lines} vs ${middle.lines} lines`,
        round2(perByte(last) / perByte(middle)),
        '×',
        '<= 1.5',
      );
    }),
  ];
  const x = steps.map((step) => step.lines);
  return {
    name: 'chatty-cell',
    unit: 'per printed line: CPU ms and bytes; peak RSS growth MB',
    results: { steps },
    verdicts,
    curves: [
      {
        id: 'cpu-per-line',
        title: 'CPU of daemon + child per printed line (flat: no work grows with what was printed before)',
        x: { label: 'lines printed', values: x },
        y: { label: 'CPU µs per line' },
        series: { 'daemon + child': steps.map((step) => Math.round(step.cpuMsPerLine * 1000)) },
      },
      {
        id: 'bytes-per-line',
        title: 'Bytes sent per printed line on each hop',
        x: { label: 'lines printed', values: x },
        y: { label: 'bytes per line' },
        series: Object.fromEntries([
          ...hops.map((hop) => [hopLabel[hop], steps.map((step) => round2(step.bytesPerLine[hop]))]),
          ['printed', steps.map((step) => round2(step.bytesPerLine.printed))],
        ]),
      },
      {
        id: 'memory',
        title: 'Memory of a chatty cell: peak RSS growth and heap held after a full GC',
        x: { label: 'MB printed', values: steps.map((step) => round2(step.printedMb)) },
        y: { label: 'MB' },
        series: {
          'daemon peak RSS growth': steps.map((step) => round2(step.peakRssGrowthMb.daemon)),
          'child peak RSS growth': steps.map((step) => round2(step.peakRssGrowthMb.child)),
          'daemon heap held': steps.map((step) => round2(step.heldHeapGrowthMb.daemon)),
          'child heap held': steps.map((step) => round2(step.heldHeapGrowthMb.child)),
          '2 × printed': steps.map((step) => round2(2 * step.printedMb)),
        },
      },
    ],
    chart: steps.map((step) => ({
      label: `${step.lines} lines`,
      value: step.cpuMsPerLine * 1000,
      unit: 'µs CPU/line',
    })),
  };
}
