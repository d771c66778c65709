// What one comment change moves and costs, against how many threads the notebook has and how many
// messages the changed thread has, on the user's path (a fresh HOME, the shipped nteract-mcp bin,
// the daemon auto-started by the child). An agent comments on a cell with `add_comment` and
// `reply_comment` while on the same notebook are a second agent (another client through its own
// proxy and child, which reads comments) and a person's live page (its event stream). Two curves:
// - threads: with N threads already in the notebook (N = 0, 20, 100, 180), K new threads
//   (`add_comment`), then one reply to each of them (`reply_comment`, with N + K threads: up to 200,
//   the per-notebook bound);
// - messages: one reply to each of K threads that hold M messages already (M = 1, 25, 99: a thread
//   keeps 100), in a second notebook.
// Read from outside (Linux /proc, the data dir) per change: the latency through the proxy (p50,
// p90); the bytes the other agent's child and the page read (the room's `comment_thread` event);
// the bytes the editing child read (its answer, and the event it is told too); the bytes appended
// to the comments journal (samples across a rotation, after the sidecar was written, left out); the
// bytes the daemon wrote in all (sockets, journal and the delayed sidecar writes). And per
// `list_comments` (default page): the answer's bytes to the client and those the child read.
// Judged flat: across N, each hop's bytes per change and the journal's within 1.25 × (largest over
// smallest: an event carries one thread, never all of them) and the p50 latency within 2 ×; across M,
// the journal's bytes (a line holds the change, not the thread) and the latency likewise, while the
// peers' bytes may grow with M (the event carries the thread changed: its messages) but by at most
// 300 B per message of that thread; the `list_comments` answer at 200 threads at most 52 KB (its
// page is bounded to about 48 KiB). Not judged: what the daemon sends the child for a
// `list_comments` (every thread: the child pages them) and the daemon's writes in all (the sidecar,
// all threads, is rewritten at most once a second while comments change).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
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

/** Waits until every one of `counters` stayed unchanged for `quietPolls` × 100 ms (at most `timeoutMs`). */
async function settled(counters, quietPolls, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  let last = counters.map((read) => read());
  let quiet = 0;
  while (quiet < quietPolls && Date.now() < deadline) {
    await sleep(100);
    const now = counters.map((read) => read());
    quiet = now.every((value, index) => value === last[index]) ? quiet + 1 : 0;
    last = now;
  }
}

/** A message of always the same length (64 characters), numbered: only the counts change the figures. */
const message = (n) => `bench comment ${String(n).padStart(8, '0')} `.padEnd(64, 'x');

export async function commentsBenchmark({ dist, size }) {
  const smoke = size === 'smoke';
  const threadLevels = smoke ? [0, 2] : [0, 20, 100, 180];
  const messageLevels = smoke ? [1, 2] : [1, 25, 99];
  const perLevel = smoke ? 2 : 20;
  // How long every counter stays still before it is read: 300 ms (100 ms at the smoke size, whose figures are not read).
  const quietPolls = smoke ? 1 : 3;
  const user = createUserHome(dist);
  const env = { ...user.env, NTERACT_MCP_LOG_LEVEL: 'error' };
  const journalDir = join(user.env.XDG_DATA_HOME, 'runt', 'journal');
  const threadSteps = [];
  const messageSteps = [];
  let editor;
  let other;
  let page;
  let written = 0;
  try {
    editor = new JsonlPeer(process.execPath, [join(dist, 'nteract-mcp.js')], env);
    await editor.initialize();
    other = new JsonlPeer(process.execPath, [join(dist, 'nteract-mcp.js')], env);
    await other.initialize();
    const rooms = new Map();
    let room;
    /**
     * Enters the room of notebook `name` (made at first: a saved notebook of one cell) with the
     * editing agent, the other agent and a page: its cell, journal and sidecar files.
     */
    const enterRoom = async (name) => {
      page?.stop();
      const path = join(user.dirs.project, `${name}.ipynb`);
      if (!rooms.has(name)) {
        // A notebook file of one cell, as a user's project has it: opened, not created (no kernel is needed).
        const notebook = {
          cells: [
            {
              cell_type: 'code',
              id: 'commented',
              source: 'x = 1\ny = 2\n',
              metadata: {},
              outputs: [],
              execution_count: null,
            },
          ],
          metadata: { kernelspec: { name: 'python3', display_name: 'Python 3', language: 'python' } },
          nbformat: 4,
          nbformat_minor: 5,
        };
        writeFileSync(path, `${JSON.stringify(notebook, null, 1)}\n`);
      }
      const connected = JSON.parse(textOf(await editor.call('connect_notebook', { path })));
      rooms.set(
        name,
        rooms.get(name) ?? {
          cellId: 'commented',
          journal: join(journalDir, `${connected.notebook_id}.comments.jsonl`),
          sidecar: `${path}.comments.json`,
        },
      );
      if (!rooms.get(name).ready) {
        // The room's kernel starts as it opens: waited for (running the cell, which changes nothing
        // commented), so that its start-up is not measured as the first round's latency.
        const run = JSON.parse(textOf(await editor.call('execute_cell', { cell_id: 'commented', timeout_secs: 120 })));
        if (run.status !== 'done') throw new Error(`the kernel of ${name} did not run the cell: ${run.status}`);
        rooms.get(name).ready = true;
      }
      await other.call('connect_notebook', { path });
      page = await followAsPage(textOf(await editor.call('show_notebook', {})).split('\n')[0]);
      room = rooms.get(name);
    };
    // The warm-up (and later the messages curve) in a notebook of its own: its threads do not count towards N.
    await enterRoom('comments-messages');
    const children = processesOf('runt-mcp.js', user.dirs.home);
    const childOf = (proxy) => children.find((pid) => parentOf(pid) === proxy);
    const editorChild = childOf(editor.process.pid);
    const otherChild = childOf(other.process.pid);
    const [daemon] = processesOf('runtimed.js', user.dirs.home);
    if (!editorChild || !otherChild || !daemon) throw new Error('could not find the children and the daemon');
    const counters = {
      editingChild: () => bytesRead(editorChild),
      otherChild: () => bytesRead(otherChild),
      page: () => page.counter.bytes,
      daemonWritten: () => bytesWritten(daemon),
    };
    const readAll = () => Object.fromEntries(Object.entries(counters).map(([name, read]) => [name, read()]));
    const addThread = async () => {
      const added = JSON.parse(
        textOf(await editor.call('add_comment', { cell_id: room.cellId, text: message(written++) })),
      );
      return added.thread.thread_id;
    };
    const reply = (threadId) => editor.call('reply_comment', { thread_id: threadId, text: message(written++) });
    /**
     * `changes` (each makes one comment change) once everything sent before has arrived: each
     * counter's growth per change once everything they sent has arrived, the latencies, the
     * journal's growth per change (samples across a rotation left out), and what each change answered.
     */
    const round = async (changes) => {
      await settled(Object.values(counters), quietPolls);
      const before = readAll();
      const latencies = [];
      const journaled = [];
      const answers = [];
      for (const change of changes) {
        const journalBefore = fileState(room.journal);
        const start = process.hrtime.bigint();
        answers.push(await change());
        latencies.push(elapsedUs(start) / 1000);
        const journalAfter = fileState(room.journal);
        // A rotation (the sidecar was written, the journal restarted: a new file or none) in between: not one append.
        if (journalBefore && journalAfter && journalBefore.ino === journalAfter.ino) {
          journaled.push(journalAfter.size - journalBefore.size);
        }
      }
      await settled(Object.values(counters), quietPolls);
      const after = readAll();
      const perChange = Object.fromEntries(
        Object.keys(counters).map((name) => [name, round1((after[name] - before[name]) / changes.length)]),
      );
      const journalAppended =
        journaled.length === 0
          ? Number.NaN
          : round1(journaled.reduce((sum, bytes) => sum + bytes, 0) / journaled.length);
      return { perChange, latencies, journalAppended, journalSamples: journaled.length, answers };
    };
    const bytesOf = (outcome) => ({
      daemonToEditingChild: outcome.perChange.editingChild,
      daemonToOtherChild: outcome.perChange.otherChild,
      daemonToPage: outcome.perChange.page,
      journalAppended: outcome.journalAppended,
      daemonWrittenInAll: outcome.perChange.daemonWritten,
    });
    /** One `list_comments` (default page): its answer's bytes to the client, those the child read, its latency. */
    const listOnce = async () => {
      await settled(Object.values(counters), quietPolls);
      const childBefore = bytesRead(editorChild);
      const start = process.hrtime.bigint();
      const answer = await editor.request('tools/call', { name: 'list_comments', arguments: {} });
      const ms = elapsedUs(start) / 1000;
      if (answer.error || answer.result?.isError) throw new Error(`list_comments: ${JSON.stringify(answer)}`);
      await settled(Object.values(counters), quietPolls);
      const listed = JSON.parse(textOf(answer.result));
      return {
        answerBytes: Buffer.byteLength(JSON.stringify(answer)),
        threadsShown: listed.threads.length,
        daemonToChildBytes: bytesRead(editorChild) - childBefore,
        ms: round1(ms),
      };
    };

    // Warm-up of the whole path (the first figures are otherwise those of code not yet optimised).
    for (let i = 0; i < (smoke ? 2 : 30); i++) await reply(await addThread());
    await enterRoom('comments-threads');

    // Threads: N existing, then K new ones and one reply to each.
    let threads = 0;
    for (const level of threadLevels) {
      while (threads < level) {
        await addThread();
        threads += 1;
      }
      const added = await round(Array.from({ length: perLevel }, () => addThread));
      threads += perLevel;
      const replied = await round(added.answers.map((threadId) => () => reply(threadId)));
      const list = await listOnce();
      threadSteps.push({
        threadsBefore: level,
        threadsAfter: threads,
        changes: perLevel,
        addBytesPerChange: bytesOf(added),
        replyBytesPerChange: bytesOf(replied),
        journalSamples: { add: added.journalSamples, reply: replied.journalSamples },
        addCommentMs: summarize(added.latencies),
        replyCommentMs: summarize(replied.latencies),
        listComments: list,
        sidecarBytes: fileState(room.sidecar)?.size ?? 0,
      });
    }

    // Messages: K threads of M messages each (in the other notebook: this one holds 200 threads), one reply to each.
    await enterRoom('comments-messages');
    for (const level of messageLevels) {
      const ids = [];
      for (let i = 0; i < perLevel; i++) {
        const id = await addThread();
        for (let m = 1; m < level; m++) await reply(id);
        ids.push(id);
      }
      const replied = await round(ids.map((threadId) => () => reply(threadId)));
      messageSteps.push({
        messagesBefore: level,
        changes: perLevel,
        replyBytesPerChange: bytesOf(replied),
        journalSamples: replied.journalSamples,
        replyCommentMs: summarize(replied.latencies),
        sidecarBytes: fileState(room.sidecar)?.size ?? 0,
      });
    }
    await Promise.all([editor.close(), other.close()]);
    editor = undefined;
    other = undefined;
  } finally {
    page?.stop();
    editor?.process.kill('SIGKILL');
    other?.process.kill('SIGKILL');
    user.stop();
  }

  const firstM = messageSteps[0];
  const lastM = messageSteps[messageSteps.length - 1];
  const lastN = threadSteps[threadSteps.length - 1];
  const hops = {
    daemonToOtherChild: "the other agent's child",
    daemonToPage: 'the live page',
    journalAppended: 'the journal',
  };
  /** The largest of `values` over the smallest (2 decimals): 1 is flat. */
  const spread = (values) => Math.round((Math.max(...values) / Math.min(...values)) * 100) / 100;
  const overN = `N = ${threadSteps.map((step) => step.threadsBefore).join('…')}`;
  const overM = `M = ${messageSteps.map((step) => step.messagesBefore).join('…')}`;
  const nSpread = (kind, figure) => spread(threadSteps.map((step) => step[kind][figure]));
  const mDelta = lastM.messagesBefore - firstM.messagesBefore;
  const verdicts = [
    ...Object.entries(hops).map(([figure, label]) =>
      verdict(
        `add_comment bytes to ${label}, largest/smallest over ${overN} threads`,
        nSpread('addBytesPerChange', figure),
        '×',
        '<= 1.25',
      ),
    ),
    ...Object.entries(hops).map(([figure, label]) =>
      verdict(
        `reply_comment bytes to ${label}, largest/smallest over ${overN} threads`,
        nSpread('replyBytesPerChange', figure),
        '×',
        '<= 1.25',
      ),
    ),
    verdict(
      `add_comment p50, largest/smallest over ${overN} threads`,
      spread(threadSteps.map((step) => step.addCommentMs.p50)),
      '×',
      '<= 2',
    ),
    verdict(
      `reply_comment p50, largest/smallest over ${overN} threads`,
      spread(threadSteps.map((step) => step.replyCommentMs.p50)),
      '×',
      '<= 2',
    ),
    verdict(
      `reply journal bytes, largest/smallest over ${overM} messages in the thread`,
      spread(messageSteps.map((step) => step.replyBytesPerChange.journalAppended)),
      '×',
      '<= 1.25',
    ),
    ...['daemonToOtherChild', 'daemonToPage'].map((figure) =>
      verdict(
        `reply bytes to ${hops[figure]} per message of the thread (M ${firstM.messagesBefore}→${lastM.messagesBefore})`,
        round1((lastM.replyBytesPerChange[figure] - firstM.replyBytesPerChange[figure]) / mDelta),
        'B',
        '<= 300',
      ),
    ),
    verdict(
      `reply_comment p50, largest/smallest over ${overM} messages in the thread`,
      spread(messageSteps.map((step) => step.replyCommentMs.p50)),
      '×',
      '<= 2',
    ),
    verdict(
      `list_comments answer (default page), ${lastN.threadsAfter} threads`,
      lastN.listComments.answerBytes,
      'B',
      '<= 52000',
    ),
  ];
  const xN = threadSteps.map((step) => step.threadsBefore);
  const xM = messageSteps.map((step) => step.messagesBefore);
  const seriesN = (kind, figure) => threadSteps.map((step) => step[kind][figure]);
  const seriesM = (figure) => messageSteps.map((step) => step.replyBytesPerChange[figure]);
  return {
    name: 'comments',
    unit: 'bytes per comment change; add_comment/reply_comment ms; list_comments bytes',
    results: { threadSteps, messageSteps },
    verdicts,
    curves: [
      {
        id: 'bytes-by-threads',
        title: 'Bytes moved per comment change vs threads in the notebook (flat: one thread travels, not all)',
        x: { label: 'threads in the notebook before', values: xN },
        y: { label: 'bytes per change' },
        series: {
          'add → other child': seriesN('addBytesPerChange', 'daemonToOtherChild'),
          'add → page': seriesN('addBytesPerChange', 'daemonToPage'),
          'add → journal': seriesN('addBytesPerChange', 'journalAppended'),
          'reply → other child': seriesN('replyBytesPerChange', 'daemonToOtherChild'),
          'reply → page': seriesN('replyBytesPerChange', 'daemonToPage'),
          'reply → journal': seriesN('replyBytesPerChange', 'journalAppended'),
        },
      },
      {
        id: 'latency-by-threads',
        title: 'add_comment / reply_comment latency vs threads in the notebook',
        x: { label: 'threads in the notebook before', values: xN },
        y: { label: 'ms' },
        series: {
          'add_comment p50': threadSteps.map((step) => round1(step.addCommentMs.p50)),
          'add_comment p90': threadSteps.map((step) => round1(step.addCommentMs.p90)),
          'reply_comment p50': threadSteps.map((step) => round1(step.replyCommentMs.p50)),
          'reply_comment p90': threadSteps.map((step) => round1(step.replyCommentMs.p90)),
        },
      },
      {
        id: 'list-by-threads',
        title: 'list_comments (default page) vs threads in the notebook: the answer is paged, the daemon’s is not',
        x: { label: 'threads in the notebook', values: threadSteps.map((step) => step.threadsAfter) },
        y: { label: 'bytes' },
        series: {
          'answer to the client': threadSteps.map((step) => step.listComments.answerBytes),
          'daemon → child': threadSteps.map((step) => step.listComments.daemonToChildBytes),
          sidecar: threadSteps.map((step) => step.sidecarBytes),
        },
      },
      {
        id: 'bytes-by-messages',
        title: 'Bytes moved per reply vs messages in the thread (the event carries that thread: it grows with it)',
        x: { label: 'messages in the thread before', values: xM },
        y: { label: 'bytes per reply' },
        series: {
          'other child': seriesM('daemonToOtherChild'),
          page: seriesM('daemonToPage'),
          journal: seriesM('journalAppended'),
          'editing child': seriesM('daemonToEditingChild'),
        },
      },
      {
        id: 'latency-by-messages',
        title: 'reply_comment latency vs messages in the thread',
        x: { label: 'messages in the thread before', values: xM },
        y: { label: 'ms' },
        series: {
          p50: messageSteps.map((step) => round1(step.replyCommentMs.p50)),
          p90: messageSteps.map((step) => round1(step.replyCommentMs.p90)),
        },
      },
    ],
    chart: [
      ...threadSteps.map((step) => ({
        label: `${step.threadsBefore} threads: add → page`,
        value: step.addBytesPerChange.daemonToPage / 1000,
        unit: 'KB/change',
      })),
      ...messageSteps.map((step) => ({
        label: `${step.messagesBefore} messages: reply → page`,
        value: step.replyBytesPerChange.daemonToPage / 1000,
        unit: 'KB/change',
      })),
    ],
  };
}
