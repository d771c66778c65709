#!/usr/bin/env node
// `npm run demo`: a scripted agent session through the shipped proxy (packages/nteract-mcp/dist),
// driven by the MCP SDK client as any MCP client drives it, in a fresh temp HOME with nothing
// pre-started. It prints a readable transcript on stdout (this script is not an MCP process) and
// exits non-zero when a step does not behave as promised. It stops what the session started (the
// proxy, its child, the auto-started daemon and its kernels) and removes its temp dirs.
//
//   node scripts/bootstrap.mjs demo   (installs and builds first when needed)
//   node scripts/demo.mjs             (on a built checkout)
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const dist = join(root, 'packages', 'nteract-mcp', 'dist');
const bins = { proxy: join(dist, 'nteract-mcp.js'), runtimed: join(dist, 'runtimed.js') };

const out = (line = '') => process.stdout.write(`${line}\n`);

/** A step that did not behave as promised: the demo stops and exits 1. */
class DemoFailure extends Error {}

function check(condition, what) {
  if (!condition) throw new DemoFailure(what);
}

/** A fresh user: temp HOME with XDG dirs under it and a runtime dir beside it; nothing of ours inherited. */
function freshUser() {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'nmcp-demo-')));
  const dirs = {
    dir,
    home: join(dir, 'home'),
    project: join(dir, 'project'),
    runtime: join(dir, 'run'),
  };
  for (const path of [dirs.home, dirs.project, dirs.runtime]) mkdirSync(path, { recursive: true, mode: 0o700 });
  const env = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value === undefined || /^(NTERACT_|RUNTIMED_|XDG_|JUPYTER_|JPY_|npm_|NODE_OPTIONS$)/i.test(key)) continue;
    env[key] = value;
  }
  Object.assign(env, {
    HOME: dirs.home,
    XDG_CONFIG_HOME: join(dirs.home, '.config'),
    XDG_CACHE_HOME: join(dirs.home, '.cache'),
    XDG_DATA_HOME: join(dirs.home, '.local', 'share'),
    XDG_STATE_HOME: join(dirs.home, '.local', 'state'),
    XDG_RUNTIME_DIR: dirs.runtime,
  });
  return { dirs, env };
}

function runtimed(args, env) {
  return new Promise((resolve) => {
    execFile(process.execPath, [bins.runtimed, ...args], { env, timeout: 60_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr });
    });
  });
}

/** `/proc/<pid>` facts (Linux): the parent, the command line, whether HOME is `home`; undefined when gone. */
function processInfo(pid, home) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (fields[0] === 'Z' || fields[0] === 'X') return undefined;
    const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
    let ours = false;
    if (home !== undefined) {
      try {
        ours = `\0${readFileSync(`/proc/${pid}/environ`, 'utf8')}`.includes(`\0HOME=${home}\0`);
      } catch {
        ours = false;
      }
    }
    return { pid, ppid: Number(fields[1]), cmdline, ours };
  } catch {
    return undefined;
  }
}

function processes(home) {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry) && Number(entry) !== process.pid)
    .map((entry) => processInfo(Number(entry), home))
    .filter((info) => info !== undefined);
}

async function waitFor(what, probe, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new DemoFailure(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Width and height from a PNG's IHDR chunk. */
function pngSize(bytes) {
  const signature = '89504e470d0a1a0a';
  if (bytes.subarray(0, 8).toString('hex') !== signature) return undefined;
  return { width: bytes.readUInt32BE(16), height: bytes.readUInt32BE(20) };
}

/** One agent connection: the shipped proxy started by the SDK's stdio transport, as an MCP client starts it. */
async function connect(user) {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [bins.proxy],
    env: user.env,
    cwd: user.dirs.project,
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk) => {
    stderr += chunk.toString();
  });
  const client = new Client({ name: 'nteract-mcp-demo', version: '1.0.0' });
  await client.connect(transport);
  const call = async (name, args = {}) => {
    const result = await client.callTool({ name, arguments: args }, undefined, { timeout: 180_000 });
    const content = result.content ?? [];
    const texts = content.filter((item) => item.type === 'text').map((item) => item.text);
    let json;
    for (const text of texts) {
      if (!text.trimStart().startsWith('{')) continue;
      try {
        json = JSON.parse(text);
        break;
      } catch {
        // not JSON
      }
    }
    return { content, texts, text: texts.join('\n'), json, isError: result.isError === true };
  };
  const childPid = () =>
    processes()
      .filter((info) => info.ppid === transport.pid && info.cmdline.includes('runt-mcp'))
      .map((info) => info.pid)[0];
  return { client, transport, call, childPid, stderr: () => stderr };
}

/** The daemon the child auto-started: the pid in `daemon.json` beside the socket, when it runs. */
function daemonPid(user) {
  try {
    const { pid } = JSON.parse(readFileSync(join(user.dirs.runtime, 'runt', 'daemon.json'), 'utf8'));
    return typeof pid === 'number' && processInfo(pid)?.cmdline.includes('runtimed') ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** The text of a cell's outputs as an agent reads them. */
function outputText(answer) {
  const outputs = answer.json?.outputs ?? [];
  return outputs.map((output) => output.text ?? output.traceback ?? output.evalue ?? '').join('\n');
}

function quote(text, width = 110) {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > width ? `${line.slice(0, width - 1)}…` : line;
}

async function demo(user, connections) {
  out('nteract-mcp demo: a scripted agent session through the shipped proxy (MCP SDK client over stdio)');
  out(`  proxy    ${bins.proxy}`);
  out(`  HOME     ${user.dirs.home} (fresh; no daemon running)`);
  out();

  let agent = await connect(user);
  connections.push(agent);
  let step = 0;
  const title = (text) => out(`[${++step}] ${text}`);

  title('tools/list');
  const tools = (await agent.client.listTools()).tools.map((tool) => tool.name);
  check(tools.includes('create_notebook') && tools.includes('reconnect'), `tools/list lacks tools: ${tools}`);
  out(`    ${tools.length} tools: ${tools.join(', ')}`);

  title('create_notebook(ephemeral=false)');
  const created = await agent.call('create_notebook', { ephemeral: false });
  check(!created.isError, `create_notebook failed: ${created.text}`);
  const notebookId = created.json?.notebook_id;
  check(typeof notebookId === 'string', `create_notebook gave no notebook_id: ${created.text}`);
  const firstDaemon = daemonPid(user);
  check(firstDaemon !== undefined, 'no daemon runs after create_notebook (the child should have started one)');
  out(`    notebook ${notebookId}; the child auto-started runtimed (pid ${firstDaemon})`);
  out('    (kept by the daemon until saved, so it survives a daemon restart; the default, ephemeral, is not)');

  title('create_cell "x = 41" and run it');
  const assigned = await agent.call('create_cell', { source: 'x = 41', and_run: true });
  check(!assigned.isError && assigned.json?.status === 'done', `x = 41 did not run: ${assigned.text}`);
  out(`    status ${assigned.json.status}, execution_count ${assigned.json.execution_count ?? '-'}`);

  title('a matplotlib plot');
  const plot = await agent.call('create_cell', {
    source: [
      'import matplotlib.pyplot as plt',
      'plt.plot([1, 2, 3], [1, 4, 9])',
      'plt.title("x squared")',
      'plt.show()',
    ].join('\n'),
    and_run: true,
  });
  check(!plot.isError, `the plot cell failed: ${plot.text}`);
  const images = plot.content.filter((item) => item.type === 'image');
  check(images.length === 1, `expected one image content item, got ${images.length}: ${quote(plot.text, 400)}`);
  const bytes = Buffer.from(images[0].data, 'base64');
  const size = pngSize(bytes);
  check(images[0].mimeType === 'image/png' && size !== undefined, `the image is not a PNG (${images[0].mimeType})`);
  out(`    an MCP image content item: ${images[0].mimeType}, ${size.width}x${size.height} px, ${bytes.length} bytes`);

  title('kill the MCP server child (SIGKILL) and send the next call at once: "x + 1"');
  const child = agent.childPid();
  check(child !== undefined, 'no runt-mcp child under the proxy');
  process.kill(child, 'SIGKILL');
  const killedAt = Date.now();
  out(`    killed runt-mcp pid ${child} (a child of the proxy, pid ${agent.transport.pid})`);
  const after = await agent.call('create_cell', { source: 'x + 1', and_run: true });
  const answeredIn = Date.now() - killedAt;
  check(!after.isError, `x + 1 after the child crash failed: ${after.text}`);
  const banner = after.texts.find((text) => text.startsWith('[nteract]'));
  check(banner?.includes('MCP server restarted'), `no restart banner: ${quote(after.text, 400)}`);
  check(banner.includes('session reconnected'), `the banner does not say the session reconnected: ${banner}`);
  check(/\b42\b/.test(outputText(after)), `x + 1 is not 42: ${quote(after.text, 400)}`);
  const newChild = agent.childPid();
  out(`    banner: ${quote(banner)}`);
  out(
    `    x + 1 = ${outputText(after).trim()} (the same kernel; new child pid ${newChild}; answered ${answeredIn} ms after the kill)`,
  );

  title('restart the daemon: `runtimed stop`, then the next call');
  const stopped = await runtimed(['stop'], user.env);
  check(stopped.code === 0, `runtimed stop failed (${stopped.code}): ${stopped.stderr}`);
  await waitFor(`the daemon ${firstDaemon} to exit`, () => processInfo(firstDaemon) === undefined, 30_000);
  out(`    runtimed stop said "${quote(stopped.stdout || stopped.stderr)}"; the process is gone`);
  const stoppedAt = Date.now();
  const cells = await agent.call('get_all_cells', { format: 'json' });
  const rejoinedIn = Date.now() - stoppedAt;
  check(!cells.isError, `get_all_cells after the daemon restart failed: ${cells.text}`);
  const sources = (cells.json?.cells ?? []).map((cell) => cell.source);
  check(
    sources.includes('x = 41') && sources.includes('x + 1'),
    `the cells did not survive: ${JSON.stringify(sources)}`,
  );
  const status = await agent.call('session_status');
  const secondDaemon = status.json?.daemon?.pid;
  check(
    status.json?.active?.notebook_id === notebookId,
    `session_status shows no rejoined session: ${quote(status.text, 400)}`,
  );
  check(typeof secondDaemon === 'number' && secondDaemon !== firstDaemon, `no new daemon: ${quote(status.text, 400)}`);
  out(
    `    rejoined: notebook ${status.json.active.notebook_id} (origin ${status.json.active.origin}), new daemon pid ${secondDaemon}, ${sources.length} cells kept; the next call answered in ${rejoinedIn} ms`,
  );
  const rerun = await agent.call('create_cell', { source: 'print(x + 1)', and_run: true });
  check(!rerun.isError, `a run on the new daemon failed: ${rerun.text}`);
  // The promise after a daemon restart: the notebook and its cells come back, the kernel is new
  // (its variables are gone), and the run that lands in the new kernel says so (`kernel_notice`).
  const rerunText = outputText(rerun) || rerun.text;
  const lost = /(\w+Error: [^\n]*)/.exec(rerunText)?.[1];
  out(`    create_cell "print(x + 1)" on the new daemon: ${quote(lost ?? rerunText, 160)}`);
  const notice = rerun.json?.kernel_notice;
  check(
    typeof notice === 'string' && notice !== '',
    `the first run in the new kernel carries no kernel_notice: ${quote(rerun.text, 400)}`,
  );
  out(`    the product says (kernel_notice): ${notice}`);

  title('save_notebook to a path');
  const path = join(user.dirs.project, 'demo.ipynb');
  const saved = await agent.call('save_notebook', { path });
  check(!saved.isError, `save_notebook failed: ${saved.text}`);
  const onDisk = JSON.parse(readFileSync(path, 'utf8')).cells.map((cell) =>
    Array.isArray(cell.source) ? cell.source.join('') : cell.source,
  );
  check(onDisk.includes('x = 41'), `the saved file lacks the cells: ${JSON.stringify(onDisk)}`);
  out(`    ${path}: ${onDisk.length} cells on disk`);

  title('disconnect_notebook, close the MCP connection, connect a new one by path');
  const released = await agent.call('disconnect_notebook');
  check(!released.isError, `disconnect_notebook failed: ${released.text}`);
  await agent.client.close();
  await waitFor('the proxy to exit', () => processInfo(agent.transport.pid ?? -1) === undefined, 30_000);
  out('    disconnected; the proxy exited');
  agent = await connect(user);
  connections.push(agent);
  const reconnected = await agent.call('connect_notebook', { path });
  check(!reconnected.isError, `connect_notebook by path failed: ${reconnected.text}`);
  const read = await agent.call('get_all_cells', { format: 'json' });
  const readSources = (read.json?.cells ?? []).map((cell) => cell.source);
  check(
    JSON.stringify(readSources) === JSON.stringify(onDisk),
    `the reconnected notebook differs: ${JSON.stringify(readSources)} vs ${JSON.stringify(onDisk)}`,
  );
  out(`    connect_notebook(path) in a new session: ${readSources.length} cells`);
  for (const [index, source] of readSources.entries())
    out(`      ${index}: ${quote(source.split('\n').join(' ⏎ '), 100)}`);
  out();
  out('PASS: every step behaved as promised');
}

async function cleanup(user, connections) {
  for (const agent of connections) await agent.client.close().catch(() => undefined);
  await runtimed(['stop'], user.env);
  const ours = () => processes(user.dirs.home).filter((info) => info.ours);
  for (const info of ours()) process.kill(info.pid, 'SIGTERM');
  await waitFor('the session processes to exit', () => ours().length === 0, 15_000).catch(() => {
    for (const info of ours()) process.kill(info.pid, 'SIGKILL');
  });
  rmSync(user.dirs.dir, { recursive: true, force: true });
}

async function main() {
  const user = freshUser();
  const connections = [];
  let code = 0;
  try {
    await demo(user, connections);
  } catch (error) {
    code = 1;
    out();
    out(`FAIL: ${error instanceof Error ? error.message : String(error)}`);
    const last = connections.at(-1);
    if (last) process.stderr.write(`--- proxy stderr (last 4000 chars) ---\n${last.stderr().slice(-4000)}\n`);
  } finally {
    await cleanup(user, connections);
  }
  return code;
}

process.exitCode = await main();
