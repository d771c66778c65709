// Scale curves on the user's path (a fresh HOME, the daemon auto-started by the first child):
//
// - agents: 1, 2, 4, 8, 16 agents, each its own nteract-mcp process (as separate MCP clients
//   are), editing one notebook together, then each its own notebook, on one daemon: edits per
//   second (all agents' edits over the wall time of the run) and p50/p99 of an edit, an edit being
//   a set_cell of the agent's own cell or a create_cell appending one, taking turns; and the CPU
//   an edit costs, by kind of process (in one notebook every agent's child follows every edit);
// - cells: a notebook of 10, 1,000 and 10,000 cells written up front (an .ipynb, as users have
//   them) and opened with connect_notebook by path: p50/p99 of an edit (set_cell of a random cell,
//   create_cell at a random index) and of a read (get_cell of a random cell); the answer size and
//   time of connect_notebook and of get_all_cells in each format with no count (what an agent gets
//   by default), and whether paging from the default answer reaches every cell;
// - rooms: 1 to 100 notebooks open on one daemon: the daemon's RSS, list_rooms (control channel)
//   and list_active_notebooks latency, and connect_notebook latency to one of them.
//
// An edit at 10,000 cells must cost what it costs at 10 (p50 ratio <= 1.5), a default answer must
// stay under 64 KB whatever the notebook's size, paging reaching every cell, and with a notebook
// each, 16 agents' edits must each cost the CPU one agent's does (<= 1.5 ×; edits/s on 2 shared
// cores follow the machine's load). Every notebook's kernel (connect_notebook starts it behind its
// answer) is waited for before anything is measured.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { RuntimedConnection, resolveRuntimedSocketPath } from '@nteract-mcp/runtimed-protocol';
import { JsonlPeer } from './lib/jsonl-peer.mjs';
import { processesOf } from './lib/processes-of.mjs';
import { cpuNs, quantile, rssMb } from './lib/stats.mjs';
import { createUserHome } from './lib/user-home.mjs';
import { verdict } from './lib/verdict.mjs';

const ms = (start) => Number(process.hrtime.bigint() - start) / 1e6;
const p50 = (samples) => quantile(samples, 0.5);
const p99 = (samples) => quantile(samples, 0.99);
/** Bytes of a tool result as the client receives it (its JSON). */
const resultBytes = (result) => Buffer.byteLength(JSON.stringify(result));
const textOf = (result) => result.content.map((item) => item.text ?? '').join('');
const idOf = (result) => JSON.parse(textOf(result)).notebook_id;

/** A default answer must stay under this, whatever the notebook's size. */
const defaultAnswerBoundBytes = 64 * 1024;
/** An edit at the largest notebook over an edit at the smallest, p50: the edit stays flat. */
const editFlatRatio = 1.5;

const sizes = {
  smoke: { agents: [1, 2], iterations: 4, cells: [10, 200], edits: 10, reads: 10, rooms: [1, 5], calls: 5 },
  full: {
    agents: [1, 2, 4, 8, 16],
    iterations: 40,
    cells: [10, 1000, 10000],
    edits: 150,
    reads: 150,
    rooms: [1, 10, 25, 50, 100],
    calls: 20,
  },
};

/** An nbformat 4.5 notebook of `count` code cells (ids `cell-<i>`), every other with a small output. */
function writeNotebook(path, count) {
  const cells = Array.from({ length: count }, (_, i) => ({
    id: `cell-${i}`,
    cell_type: 'code',
    execution_count: i % 2 === 0 ? i + 1 : null,
    metadata: {},
    source: [`values_${i} = [n * ${i} for n in range(10)]\n`, `print(sum(values_${i}))`],
    outputs: i % 2 === 0 ? [{ output_type: 'stream', name: 'stdout', text: [`${45 * i}\n`] }] : [],
  }));
  const notebook = {
    nbformat: 4,
    nbformat_minor: 5,
    metadata: { kernelspec: { name: 'python3', display_name: 'Python 3', language: 'python' } },
    cells,
  };
  writeFileSync(path, JSON.stringify(notebook));
  return path;
}

/** `count` agents, each its own nteract-mcp process on the user's environment, initialized. */
async function startAgents(dist, env, count) {
  return Promise.all(
    Array.from({ length: count }, async () => {
      const peer = new JsonlPeer(process.execPath, [join(dist, 'nteract-mcp.js')], env);
      await peer.initialize();
      return peer;
    }),
  );
}

/**
 * Waits until the agent's active notebook has its kernel (or knows it has none): connect_notebook
 * answers at once and the kernel starts behind it, a Python process whose start would load the
 * machine while the edits after it are measured.
 */
async function untilKernelSettled(peer) {
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    const status = textOf(await peer.call('session_status', {}));
    if (!/"runtime":\s*"pending"/.test(status)) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error('the kernel of the active notebook did not settle within 120 s');
}

/** One timed call: `[milliseconds, result]`. */
async function timed(peer, tool, args) {
  const start = process.hrtime.bigint();
  const result = await peer.call(tool, args);
  return [ms(start), result];
}

/**
 * Agent `k` edits its notebook `iterations` times: set_cell of its own cell, then create_cell
 * appending one; the latency of every edit.
 */
async function editLoop(peer, k, iterations, latencies) {
  for (let i = 0; i < iterations; i++) {
    const [set] = await timed(peer, 'set_cell', { cell_id: `cell-${k}`, source: `agent_${k} = ${i}` });
    const [create] = await timed(peer, 'create_cell', { source: `agent_${k}_cell_${i} = ${i}` });
    latencies.push(set, create);
  }
}

/**
 * Every agent's processes warmed up together (V8 compiles the hot paths of each process on its own),
 * on a notebook of its own, so that the curve compares agents and not cold processes.
 */
async function warmUp(agents, project, iterations) {
  await Promise.all(
    agents.map(async (peer, k) => {
      await peer.call('connect_notebook', { path: writeNotebook(join(project, `warm-up-${k}.ipynb`), 20) });
      await untilKernelSettled(peer);
      await editLoop(peer, k, iterations, []);
      await peer.call('disconnect_notebook', {});
    }),
  );
}

/** CPU nanoseconds spent so far by each kind of process of the user (the agents' proxies, their children, the daemon). */
async function cpuByKind(agents, home) {
  const sum = async (pids) => (await Promise.all(pids.map(cpuNs))).reduce((total, ns) => total + ns, 0);
  return {
    proxies: await sum(agents.map((peer) => peer.process.pid)),
    children: await sum(processesOf('runt-mcp.js', home)),
    daemon: await sum(processesOf('runtimed.js', home)),
  };
}

/** The agents curve: for each count, one notebook shared, then a notebook each. */
async function agentsCurve({ agents, project, home, plan }) {
  await warmUp(agents, project, plan.iterations);
  const figures = { 'one notebook': [], 'separate notebooks': [] };
  for (const count of plan.agents) {
    for (const mode of Object.keys(figures)) {
      const used = agents.slice(0, count);
      const paths = used.map((_, k) =>
        writeNotebook(
          join(project, mode === 'one notebook' ? `shared-${count}.ipynb` : `agent-${count}-${k}.ipynb`),
          Math.max(20, count),
        ),
      );
      for (const [k, peer] of used.entries()) {
        await peer.call('connect_notebook', { path: paths[k] });
        await untilKernelSettled(peer);
        // Warm-up, and the notebook ready for edits (not timed).
        await editLoop(peer, k, 2, []);
      }
      const latencies = [];
      const cpuBefore = await cpuByKind(agents, home);
      const start = process.hrtime.bigint();
      await Promise.all(used.map((peer, k) => editLoop(peer, k, plan.iterations, latencies)));
      const wallMs = ms(start);
      const cpuAfter = await cpuByKind(agents, home);
      // What one edit costs on the CPU, by kind of process: whether the machine (2 cores) is the limit.
      const cpuMsPerEdit = Object.fromEntries(
        Object.keys(cpuAfter).map((kind) => [kind, (cpuAfter[kind] - cpuBefore[kind]) / 1e6 / latencies.length]),
      );
      figures[mode].push({
        agents: count,
        edits: latencies.length,
        editsPerSecond: latencies.length / (wallMs / 1000),
        p50Ms: p50(latencies),
        p99Ms: p99(latencies),
        cpuMsPerEdit,
      });
      for (const peer of used) await peer.call('disconnect_notebook', {});
    }
  }
  return figures;
}

/** Cell numbers a summary text lists (`[index] id …` lines), and the `start` its last line names, if any. */
function readSummary(text) {
  const indices = [...text.matchAll(/^\[(\d+)\] /gm)].map((match) => Number(match[1]));
  const next = /get_all_cells\(start=(\d+)\)/.exec(text);
  return { indices, next: next === null ? undefined : Number(next[1]) };
}

/** Follows a default get_all_cells answer of `format` page by page; how many distinct cells it reached. */
async function pageThrough(peer, format, total) {
  const seen = new Set();
  let start = 0;
  for (let pages = 0; pages < total + 1; pages++) {
    const result = await peer.call('get_all_cells', { format, ...(start > 0 ? { start } : {}) });
    const text = textOf(result);
    let next;
    if (format === 'json') {
      const answer = JSON.parse(text);
      for (const cell of answer.cells) seen.add(cell.index);
      next = answer.truncated?.next_start;
    } else if (format === 'rich') {
      for (const match of text.matchAll(/^── \[(\d+)\] /gm)) seen.add(Number(match[1]));
      const more = /start=(\d+)\)/.exec(text);
      next = more === null ? undefined : Number(more[1]);
    } else {
      const summary = readSummary(text);
      for (const index of summary.indices) seen.add(index);
      next = summary.next;
    }
    if (next === undefined || next <= start) break;
    start = next;
  }
  return seen.size;
}

/** The cells curve: one agent, a notebook of each size opened by path. */
async function cellsCurve({ agent, project, plan }) {
  const rows = [];
  for (const total of plan.cells) {
    const path = writeNotebook(join(project, `cells-${total}.ipynb`), total);
    const [connectMs, connected] = await timed(agent, 'connect_notebook', { path });
    await untilKernelSettled(agent);
    const random = () => Math.floor(Math.random() * total);
    // The first edit waits for the notebook to be ready; not timed.
    await agent.call('set_cell', { cell_id: 'cell-0', source: 'ready = True' });
    const setMs = [];
    const createMs = [];
    const readMs = [];
    for (let i = 0; i < plan.edits; i++) {
      setMs.push((await timed(agent, 'set_cell', { cell_id: `cell-${random()}`, source: `edited = ${i}` }))[0]);
      if (i % 2 === 0)
        createMs.push((await timed(agent, 'create_cell', { source: `inserted = ${i}`, index: random() }))[0]);
    }
    for (let i = 0; i < plan.reads; i++)
      readMs.push((await timed(agent, 'get_cell', { cell_id: `cell-${random()}` }))[0]);
    const answers = {};
    for (const format of ['summary', 'json', 'rich']) {
      const times = [];
      let bytes = 0;
      for (let i = 0; i < 3; i++) {
        const [took, result] = await timed(agent, 'get_all_cells', format === 'summary' ? {} : { format });
        times.push(took);
        bytes = resultBytes(result);
      }
      answers[format] = { bytes, ms: p50(times) };
    }
    const now = total + Math.ceil(plan.edits / 2);
    const reached = {
      summary: await pageThrough(agent, 'summary', now),
      json: await pageThrough(agent, 'json', now),
      rich: await pageThrough(agent, 'rich', now),
    };
    rows.push({
      cells: total,
      editP50Ms: p50([...setMs, ...createMs]),
      editP99Ms: p99([...setMs, ...createMs]),
      setCellP50Ms: p50(setMs),
      createCellP50Ms: p50(createMs),
      readP50Ms: p50(readMs),
      readP99Ms: p99(readMs),
      connect: { bytes: resultBytes(connected), ms: connectMs },
      getAllCells: answers,
      pagingReached: { ...reached, of: now },
    });
    await agent.call('disconnect_notebook', {});
  }
  return rows;
}

/** The rooms curve, on a daemon of its own: notebooks opened one after another, measured at each count. */
async function roomsCurve({ dist, plan }) {
  const user = createUserHome(dist);
  const agents = [];
  try {
    const env = { ...user.env, NTERACT_MCP_LOG_LEVEL: 'error' };
    agents.push(...(await startAgents(dist, env, 1)));
    const [agent] = agents;
    const ids = [];
    const rows = [];
    const socketPath = resolveRuntimedSocketPath(user.env);
    for (const rooms of plan.rooms) {
      while (ids.length < rooms) ids.push(idOf(await agent.call('create_notebook', { ephemeral: false })));
      const [daemon] = processesOf('runtimed.js', user.dirs.home);
      const control = (await RuntimedConnection.open({ socketPath, handshake: { channel: 'control' } })).connection;
      const listRoomsMs = [];
      let open = 0;
      for (let i = 0; i < plan.calls; i++) {
        const start = process.hrtime.bigint();
        const listed = await control.requestControl({ type: 'list_rooms' });
        listRoomsMs.push(ms(start));
        open = listed.rooms.length;
      }
      control.close();
      const listMs = [];
      const connectMs = [];
      for (let i = 0; i < plan.calls; i++) {
        listMs.push((await timed(agent, 'list_active_notebooks', {}))[0]);
        connectMs.push((await timed(agent, 'connect_notebook', { notebook_id: ids[(i * 7) % ids.length] }))[0]);
        await untilKernelSettled(agent);
      }
      rows.push({
        rooms,
        openRooms: open,
        daemonRssMb: await rssMb(daemon),
        listRoomsP50Ms: p50(listRoomsMs),
        listActiveNotebooksP50Ms: p50(listMs),
        connectP50Ms: p50(connectMs),
      });
    }
    return rows;
  } finally {
    for (const agent of agents) await agent.close();
    user.stop();
  }
}

export async function scaleBenchmark({ dist, size }) {
  const plan = sizes[size] ?? sizes.full;
  const user = createUserHome(dist);
  const agents = [];
  let agentFigures;
  let cellRows;
  try {
    const env = { ...user.env, NTERACT_MCP_LOG_LEVEL: 'error' };
    // The first agent starts the daemon; the others find it.
    agents.push(...(await startAgents(dist, env, 1)));
    await agents[0].call('list_active_notebooks', {});
    agents.push(...(await startAgents(dist, env, Math.max(...plan.agents) - 1)));
    agentFigures = await agentsCurve({ agents, project: user.dirs.project, home: user.dirs.home, plan });
    cellRows = await cellsCurve({ agent: agents[0], project: user.dirs.project, plan });
  } finally {
    for (const agent of agents) await agent.close();
    user.stop();
  }
  const roomRows = await roomsCurve({ dist, plan });

  const series = (figure) =>
    Object.fromEntries(Object.entries(agentFigures).map(([mode, rows]) => [mode, rows.map(figure)]));
  const first = cellRows[0];
  const last = cellRows[cellRows.length - 1];
  const largest = last.cells.toLocaleString('en-US');
  const editRatio = last.editP50Ms / first.editP50Ms;
  const curves = [
    {
      id: 'agents-edit-throughput',
      title: 'Edits per second by agents (one nteract-mcp each)',
      x: { label: 'agents', values: plan.agents },
      y: { label: 'edits/s' },
      series: series((row) => row.editsPerSecond),
    },
    {
      id: 'agents-edit-latency',
      title: 'Edit latency by agents (set_cell / create_cell)',
      x: { label: 'agents', values: plan.agents },
      y: { label: 'ms' },
      series: {
        'p50, one notebook': agentFigures['one notebook'].map((row) => row.p50Ms),
        'p99, one notebook': agentFigures['one notebook'].map((row) => row.p99Ms),
        'p50, separate notebooks': agentFigures['separate notebooks'].map((row) => row.p50Ms),
        'p99, separate notebooks': agentFigures['separate notebooks'].map((row) => row.p99Ms),
      },
    },
    {
      id: 'agents-cpu-per-edit',
      title: 'CPU per edit by agents (proxies + children + daemon)',
      x: { label: 'agents', values: plan.agents },
      y: { label: 'CPU ms per edit' },
      series: series((row) => Object.values(row.cpuMsPerEdit).reduce((sum, value) => sum + value, 0)),
    },
    {
      id: 'cells-latency',
      title: 'Edit and read latency by notebook size',
      x: { label: 'cells', values: plan.cells, log: true },
      y: { label: 'ms' },
      series: {
        'edit p50': cellRows.map((row) => row.editP50Ms),
        'edit p99': cellRows.map((row) => row.editP99Ms),
        'read p50 (get_cell)': cellRows.map((row) => row.readP50Ms),
        'read p99 (get_cell)': cellRows.map((row) => row.readP99Ms),
      },
    },
    {
      id: 'cells-answer-size',
      title: 'Default answer size by notebook size (no count given)',
      x: { label: 'cells', values: plan.cells, log: true },
      y: { label: 'KB' },
      series: {
        connect_notebook: cellRows.map((row) => row.connect.bytes / 1024),
        'get_all_cells (summary)': cellRows.map((row) => row.getAllCells.summary.bytes / 1024),
        'get_all_cells json': cellRows.map((row) => row.getAllCells.json.bytes / 1024),
        'get_all_cells rich': cellRows.map((row) => row.getAllCells.rich.bytes / 1024),
      },
    },
    {
      id: 'cells-answer-time',
      title: 'Default answer time by notebook size',
      x: { label: 'cells', values: plan.cells, log: true },
      y: { label: 'ms' },
      series: {
        connect_notebook: cellRows.map((row) => row.connect.ms),
        'get_all_cells (summary)': cellRows.map((row) => row.getAllCells.summary.ms),
        'get_all_cells json': cellRows.map((row) => row.getAllCells.json.ms),
        'get_all_cells rich': cellRows.map((row) => row.getAllCells.rich.ms),
      },
    },
    {
      id: 'rooms-latency',
      title: 'Listing and connecting by rooms open on one daemon',
      x: { label: 'rooms', values: plan.rooms },
      y: { label: 'ms (p50)' },
      series: {
        list_rooms: roomRows.map((row) => row.listRoomsP50Ms),
        list_active_notebooks: roomRows.map((row) => row.listActiveNotebooksP50Ms),
        connect_notebook: roomRows.map((row) => row.connectP50Ms),
      },
    },
    {
      id: 'rooms-daemon-rss',
      title: 'Daemon RSS by rooms open',
      x: { label: 'rooms', values: plan.rooms },
      y: { label: 'MB' },
      series: { 'daemon RSS': roomRows.map((row) => row.daemonRssMb) },
    },
  ];
  const boundKb = defaultAnswerBoundBytes / 1024;
  const verdicts = [
    verdict(`edit p50 at ${largest} cells / at ${first.cells} cells`, editRatio, '×', `<= ${editFlatRatio}`),
    verdict(
      `create_cell p50 at ${largest} cells / at ${first.cells} cells`,
      last.createCellP50Ms / first.createCellP50Ms,
      '×',
      `<= ${editFlatRatio}`,
    ),
    verdict(`connect_notebook answer at ${largest} cells`, last.connect.bytes / 1024, 'KB', `<= ${boundKb}`),
    ...['summary', 'json', 'rich'].flatMap((format) => [
      verdict(
        `get_all_cells ${format === 'summary' ? '(default, summary)' : `format=${format}`} answer at ${largest} cells, no count`,
        last.getAllCells[format].bytes / 1024,
        'KB',
        `<= ${boundKb}`,
      ),
      verdict(
        `get_all_cells ${format} paging from the default answer: cells reached at ${largest} cells`,
        last.pagingReached[format] / last.pagingReached.of,
        'of all',
        '= 1',
      ),
    ]),
  ];
  // Edits/s on 2 shared cores follow the machine's load; the CPU an edit costs does not, so the
  // verdict is that: with a notebook each, an agent's edit costs what it costs alone.
  const separate = agentFigures['separate notebooks'];
  const cpuOf = (row) => Object.values(row.cpuMsPerEdit).reduce((sum, value) => sum + value, 0);
  const cpuGrowth = cpuOf(separate[separate.length - 1]) / cpuOf(separate[0]);
  verdicts.push(
    verdict(
      `CPU per edit with ${separate[separate.length - 1].agents} agents / 1 agent, separate notebooks`,
      cpuGrowth,
      '×',
      '<= 1.5',
    ),
  );
  const rooms = roomRows[roomRows.length - 1];
  return {
    name: 'scale',
    unit: 'ms per call (p50/p99), edits/s, KB per answer, MB resident',
    results: { agents: agentFigures, cells: cellRows, rooms: roomRows },
    ratios: { editP50LargestOverSmallest: editRatio, readP50LargestOverSmallest: last.readP50Ms / first.readP50Ms },
    targets: {
      edit: `p50 at the largest notebook <= ${editFlatRatio} × at the smallest`,
      answers: `a default answer <= ${boundKb} KB at any size, paging reaches every cell`,
    },
    chart: [
      { label: `edit p50, ${first.cells} cells`, value: first.editP50Ms, unit: 'ms' },
      { label: `edit p50, ${largest} cells`, value: last.editP50Ms, unit: 'ms' },
      { label: `read p50, ${largest} cells`, value: last.readP50Ms, unit: 'ms' },
      { label: `connect, ${largest} cells`, value: last.connect.ms, unit: 'ms' },
      { label: `list_active_notebooks, ${rooms.rooms} rooms`, value: rooms.listActiveNotebooksP50Ms, unit: 'ms' },
      { label: `connect, ${rooms.rooms} rooms`, value: rooms.connectP50Ms, unit: 'ms' },
    ],
    verdicts,
    curves,
  };
}
