// What a one-line source edit moves, against the size of the edited cell's outputs, on the user's
// path (a fresh HOME, the shipped nteract-mcp bin, the daemon auto-started by the child, a Python
// kernel). An agent edits a cell whose outputs are ~0, 10 KB, 100 KB and 900 KB (a printed stream,
// under the daemon's blob threshold: carried inline) with `set_cell`, one line changed each time,
// while on the same notebook are a second agent (another client through its own proxy and child)
// and a person's live page (its event stream). Read from outside (Linux /proc, the data dir) per edit:
// - bytes the editing agent's child read (its answer; the proxy's request is a few hundred bytes);
// - bytes the other agent's child read (the room's broadcast of the edit);
// - bytes the page's event stream carried;
// - bytes appended to the room's journal (samples across a rotation, after an autosave, left out);
// - bytes the daemon wrote in all (sockets, journal and the debounced autosaves of the .ipynb);
// - the editing agent's `set_cell` latency (p50, p90).
// Then as many edits again with a peer of an older protocol in the room too (a raw runtimed
// connection that declares nothing in its handshake): the bytes it read and the latency then (not
// judged: it is told the whole cell, as every peer was before source edits).
// Judged flat: at the largest outputs, every judged hop and the journal take at most 4 KB per edit
// (a source edit moves the source, not the outputs), and the p50 latency there is at most 5 ms over
// the one at ~0 outputs.
import { createConnection } from 'node:net';
import { join } from 'node:path';
import { encodeRuntimedFrame, runtimedPreamble } from '@nteract-mcp/runtimed-protocol';
import { followAsPage } from './lib/follow-as-page.mjs';
import { JsonlPeer } from './lib/jsonl-peer.mjs';
import { bytesRead, bytesWritten, fileState, parentOf } from './lib/proc-io.mjs';
import { processesOf } from './lib/processes-of.mjs';
import { elapsedUs, summarize } from './lib/stats.mjs';
import { createUserHome } from './lib/user-home.mjs';
import { verdict } from './lib/verdict.mjs';

const textOf = (result) => result.content.map((item) => item.text ?? '').join('');
const round1 = (value) => Math.round(value * 10) / 10;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A peer of an older protocol: a raw notebook connection to the daemon's socket whose handshake
 * declares no capability; counts the bytes it reads after its greeting.
 */
async function rawPeer(socketPath, path) {
  const socket = createConnection(socketPath);
  await new Promise((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  const counter = { bytes: 0 };
  let greeted = false;
  const greeting = new Promise((resolve) => {
    socket.on('data', (chunk) => {
      if (greeted) counter.bytes += chunk.byteLength;
      else {
        // The greeting and anything after it in the same read: from here on, only what follows counts.
        greeted = true;
        resolve();
      }
    });
  });
  socket.write(runtimedPreamble());
  socket.write(encodeRuntimedFrame({ channel: 'notebook', mode: 'open', path, peer_label: 'bench:older-peer' }));
  await greeting;
  return { counter, stop: () => socket.destroy() };
}

/** Waits until every one of `counters` stayed unchanged for 300 ms (at most `timeoutMs`). */
async function settled(counters, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  let last = counters.map((read) => read());
  let quiet = 0;
  while (quiet < 3 && Date.now() < deadline) {
    await sleep(100);
    const now = counters.map((read) => read());
    quiet = now.every((value, index) => value === last[index]) ? quiet + 1 : 0;
    last = now;
  }
}

/** The Python of a cell that prints `bytes` characters (no output for 0), then the line each edit changes. */
function cellSource(bytes, edit) {
  const run = bytes === 0 ? 'x = 1' : `print('y' * ${bytes}, end='')`;
  return `${run}\n# edit ${edit}`;
}

export async function sourceEditsBenchmark({ dist, size }) {
  const outputSizes = size === 'smoke' ? [0, 10_000, 100_000] : [0, 10_000, 100_000, 900_000];
  const editsPerSize = size === 'smoke' ? 4 : 60;
  const user = createUserHome(dist);
  const env = { ...user.env, NTERACT_MCP_LOG_LEVEL: 'error' };
  const notebookPath = join(user.dirs.project, 'source-edits.ipynb');
  const steps = [];
  let editor;
  let other;
  let page;
  let older;
  try {
    editor = new JsonlPeer(process.execPath, [join(dist, 'nteract-mcp.js')], env);
    await editor.initialize();
    const created = JSON.parse(textOf(await editor.call('create_notebook', { working_dir: user.dirs.project })));
    await editor.call('save_notebook', { path: notebookPath });
    other = new JsonlPeer(process.execPath, [join(dist, 'nteract-mcp.js')], env);
    await other.initialize();
    await other.call('connect_notebook', { path: notebookPath });
    page = await followAsPage(textOf(await editor.call('show_notebook', {})).split('\n')[0]);
    const socketPath = join(user.dirs.runtime, 'runt', 'runtimed.sock');
    const children = processesOf('runt-mcp.js', user.dirs.home);
    const childOf = (proxy) => children.find((pid) => parentOf(pid) === proxy);
    const editorChild = childOf(editor.process.pid);
    const otherChild = childOf(other.process.pid);
    const [daemon] = processesOf('runtimed.js', user.dirs.home);
    if (!editorChild || !otherChild || !daemon) throw new Error('could not find the children and the daemon');
    const journal = join(user.env.XDG_DATA_HOME, 'runt', 'journal', `${created.notebook_id}.jsonl`);
    const counters = {
      editingChild: () => bytesRead(editorChild),
      otherChild: () => bytesRead(otherChild),
      page: () => page.counter.bytes,
      olderPeer: () => older?.counter.bytes ?? 0,
      daemonWritten: () => bytesWritten(daemon),
    };
    const readAll = () => Object.fromEntries(Object.entries(counters).map(([name, read]) => [name, read()]));
    /**
     * `count` one-line edits of `cellId` (numbered from `first`) once everything sent before has
     * arrived: each counter's growth per edit once everything they sent has arrived, the latencies,
     * and the journal's growth per edit (samples across a rotation left out).
     */
    const editRound = async (cellId, outputBytes, first, count) => {
      await settled(Object.values(counters));
      const before = readAll();
      const latencies = [];
      const journaled = [];
      for (let edit = first; edit < first + count; edit++) {
        const journalBefore = fileState(journal);
        const start = process.hrtime.bigint();
        await editor.call('set_cell', { cell_id: cellId, source: cellSource(outputBytes, edit) });
        latencies.push(elapsedUs(start) / 1000);
        const journalAfter = fileState(journal);
        // A rotation (an autosave rewrote the journal: a new file) in between: not one append.
        if (journalBefore && journalAfter && journalBefore.ino === journalAfter.ino) {
          journaled.push(journalAfter.size - journalBefore.size);
        }
      }
      await settled(Object.values(counters));
      const after = readAll();
      const perEdit = Object.fromEntries(
        Object.keys(counters).map((name) => [name, round1((after[name] - before[name]) / count)]),
      );
      const journalAppended =
        journaled.length === 0
          ? Number.NaN
          : round1(journaled.reduce((sum, bytes) => sum + bytes, 0) / journaled.length);
      return { perEdit, latencies, journalAppended, journalSamples: journaled.length };
    };
    // Warm-up of the whole path (the first figures are otherwise those of code not yet optimised).
    const warm = JSON.parse(textOf(await editor.call('create_cell', { source: cellSource(100, 0) })));
    await editor.call('execute_cell', { cell_id: warm.cell_id, timeout_secs: 120 });
    for (let edit = 1; edit <= 20; edit++) {
      await editor.call('set_cell', { cell_id: warm.cell_id, source: cellSource(100, edit) });
    }
    for (const outputBytes of outputSizes) {
      const cell = JSON.parse(textOf(await editor.call('create_cell', { source: cellSource(outputBytes, 0) })));
      const run = JSON.parse(textOf(await editor.call('execute_cell', { cell_id: cell.cell_id, timeout_secs: 120 })));
      if (run.status !== 'done') throw new Error(`the cell printing ${outputBytes} bytes ended ${run.status}`);
      // Warm-up: a few edits of this cell.
      for (let edit = 1; edit <= 3; edit++) {
        await editor.call('set_cell', { cell_id: cell.cell_id, source: cellSource(outputBytes, edit) });
      }
      // The first-party peers only (they declare source edits): what is judged.
      const own = await editRound(cell.cell_id, outputBytes, 4, editsPerSize);
      // Then with a peer of an older protocol in the room too: it is told the whole cell.
      older = await rawPeer(socketPath, notebookPath);
      const withOlder = await editRound(cell.cell_id, outputBytes, 4 + editsPerSize, editsPerSize);
      older.stop();
      older = undefined;
      steps.push({
        outputBytes,
        edits: editsPerSize,
        bytesPerEdit: {
          daemonToEditingChild: own.perEdit.editingChild,
          daemonToOtherChild: own.perEdit.otherChild,
          daemonToPage: own.perEdit.page,
          journalAppended: own.journalAppended,
          daemonWrittenInAll: own.perEdit.daemonWritten,
          daemonToOlderPeer: withOlder.perEdit.olderPeer,
          daemonWrittenInAllWithOlderPeer: withOlder.perEdit.daemonWritten,
        },
        journalSamples: own.journalSamples,
        setCellMs: summarize(own.latencies),
        setCellMsWithOlderPeer: summarize(withOlder.latencies),
      });
    }
    await Promise.all([editor.close(), other.close()]);
    editor = undefined;
    other = undefined;
  } finally {
    page?.stop();
    older?.stop();
    editor?.process.kill('SIGKILL');
    other?.process.kill('SIGKILL');
    user.stop();
  }
  const first = steps[0];
  const last = steps[steps.length - 1];
  const judged = {
    daemonToEditingChild: "the editing agent's child",
    daemonToOtherChild: "the other agent's child",
    daemonToPage: 'the live page',
    journalAppended: 'the journal',
  };
  const sizeLabel = `${round1(last.outputBytes / 1000)} KB of outputs`;
  const verdicts = [
    ...Object.entries(judged).map(([figure, label]) =>
      verdict(`bytes per source edit to ${label}, ${sizeLabel}`, last.bytesPerEdit[figure], 'B', '<= 4096'),
    ),
    // A difference, not a ratio: at a p50 of a few ms, a busy machine moves a ratio by more than 1.5.
    verdict(
      `set_cell p50 added by ${sizeLabel} (p50 there − p50 with none)`,
      round1(last.setCellMs.p50 - first.setCellMs.p50),
      'ms',
      '<= 5',
    ),
  ];
  const x = steps.map((step) => round1(step.outputBytes / 1000));
  const series = (figure) => steps.map((step) => step.bytesPerEdit[figure]);
  return {
    name: 'source-edits',
    unit: 'bytes per one-line source edit; set_cell ms',
    results: { steps },
    verdicts,
    curves: [
      {
        id: 'bytes-per-edit',
        title: 'Bytes moved per one-line source edit vs the cell’s outputs (flat: the source travels, not the outputs)',
        x: { label: 'outputs of the edited cell (KB)', values: x },
        y: { label: 'bytes per edit' },
        series: {
          'daemon → editing child': series('daemonToEditingChild'),
          'daemon → other child': series('daemonToOtherChild'),
          'daemon → page': series('daemonToPage'),
          'daemon → older peer': series('daemonToOlderPeer'),
          'journal appended': series('journalAppended'),
        },
      },
      {
        id: 'latency',
        title: 'set_cell latency vs the cell’s outputs',
        x: { label: 'outputs of the edited cell (KB)', values: x },
        y: { label: 'ms' },
        series: {
          p50: steps.map((step) => round1(step.setCellMs.p50)),
          p90: steps.map((step) => round1(step.setCellMs.p90)),
          'p50, an older peer in the room': steps.map((step) => round1(step.setCellMsWithOlderPeer.p50)),
        },
      },
    ],
    chart: steps.map((step) => ({
      label: `${round1(step.outputBytes / 1000)} KB: other child`,
      value: step.bytesPerEdit.daemonToOtherChild / 1000,
      unit: 'KB/edit',
    })),
  };
}
