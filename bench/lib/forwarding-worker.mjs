// One measurement of bench/proxy-forwarding.mjs, in a process of its own (so the V8 tier flags it
// runs under apply to it alone): the CPU time per tools/call that passes through `proxy` (the real
// McpProxy, with the distribution's protocol eras) or `bare` (a relay that copies chunks both
// ways), over in-memory streams, with a fake child that answers at once as runt-mcp does. Nothing
// waits on a system call, so what differs between the two is the proxy's own JavaScript.
//
//   node [--max-opt=N] forwarding-worker.mjs proxy|bare <warm-up calls> <calls per round>
// prints {"usPerCall": <median of 7 rounds>} on stdout.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import {
  ChildProcessPort,
  Clock,
  ContributionProvider,
  Logger,
  ProtocolAdmission,
  sessionReportMetaKey,
} from '@nteract-mcp/core';
import { createTestContainer } from '@nteract-mcp/core/testing';
import { createLegacyTransportPlugin } from '@nteract-mcp/plugin-transport-legacy';
import { createNativeTransportPlugin } from '@nteract-mcp/plugin-transport-native';
import { ChildSupervisor, createProxyPlugin, McpProxy, ToolListCache } from '@nteract-mcp/proxy';

const [mode, warmText, callsText] = process.argv.slice(2);
const warmUp = Number(warmText);
const perRound = Number(callsText);
const rounds = 7;

// The answer runt-mcp gives get_all_cells on a 10-cell notebook, laid out as the MCP SDK writes it.
const notebookId = '0e0be947-96e6-4d69-8062-a6c6745dcd43';
const cells = Array.from({ length: 10 }, (_, i) => ({
  cell_id: `cell-${i}`,
  cell_type: 'code',
  source: `x${i} = ${i}`,
  execution_count: null,
  outputs: [],
}));
const result = {
  _meta: { [sessionReportMetaKey]: { target: notebookId, notebookId, daemonVersion: '1.0.0' } },
  content: [{ type: 'text', text: JSON.stringify({ notebook_id: notebookId, total_cells: 10, cells }, null, 2) }],
};
const answerHead = `{"result":${JSON.stringify(result)},"jsonrpc":"2.0","id":`;
const tools = [{ name: 'get_all_cells', inputSchema: { type: 'object' }, annotations: { readOnlyHint: true } }];

/** A child that answers every request on its stdin at once, and exits when its stdin ends. */
function fakeChild() {
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  let held = '';
  stdin.setEncoding('utf8').on('data', (chunk) => {
    held += chunk;
    for (let end = held.indexOf('\n'); end !== -1; end = held.indexOf('\n')) {
      const line = held.slice(0, end);
      held = held.slice(end + 1);
      const message = JSON.parse(line);
      if (message.id === undefined) continue;
      if (message.method === 'tools/call') stdout.write(`${answerHead}${message.id}}\n`);
      else {
        const answer =
          message.method === 'initialize'
            ? {
                protocolVersion: '2025-06-18',
                capabilities: { tools: {} },
                serverInfo: { name: 'runt', version: '1', title: 'nteract (daemon 1.0.0)' },
              }
            : message.method === 'tools/list'
              ? { tools }
              : {};
        stdout.write(`${JSON.stringify({ jsonrpc: '2.0', id: message.id, result: answer })}\n`);
      }
    }
  });
  let exit;
  const exited = new Promise((resolve) => {
    exit = resolve;
  });
  const kill = (signal = 'SIGTERM') => {
    stdout.end();
    exit({ code: null, signal });
  };
  // Like a stdio MCP server, it exits 0 when its input ends (how the proxy stops it).
  stdin.on('end', () => {
    stdout.end();
    exit({ code: 0, signal: null });
  });
  return { pid: 1, stdin, stdout, exited, kill };
}

const quiet = { debug() {}, info() {}, warn() {}, error() {}, child: () => quiet };
const input = new PassThrough();
const output = new PassThrough();
const dir = mkdtempSync(join(tmpdir(), 'nteract-bench-forwarding-'));
let proxy;
if (mode === 'proxy') {
  const container = createTestContainer({
    plugins: [createProxyPlugin(), createLegacyTransportPlugin(), createNativeTransportPlugin()],
  })
    .override(ChildProcessPort, { spawn: () => fakeChild() })
    .override(Logger, quiet)
    .build();
  proxy = new McpProxy({
    input,
    output,
    supervisor: container.get(ChildSupervisor),
    eras: container.get(ContributionProvider, { name: ProtocolAdmission }),
    tools: new ToolListCache({ builtInTools: [], filePath: join(dir, 'tools.json'), logger: quiet }),
    clock: container.get(Clock),
    logger: quiet,
    version: '0.0.0',
    resolveChild: () => ({ command: 'runt-mcp', args: [], env: {} }),
    onExit: () => undefined,
  });
  await proxy.start();
} else {
  const child = fakeChild();
  input.on('data', (chunk) => child.stdin.write(chunk));
  child.stdout.on('data', (chunk) => output.write(chunk));
}

const waiting = new Map();
let unread = '';
output.setEncoding('utf8').on('data', (chunk) => {
  unread += chunk;
  for (let end = unread.indexOf('\n'); end !== -1; end = unread.indexOf('\n')) {
    const message = JSON.parse(unread.slice(0, end));
    unread = unread.slice(end + 1);
    waiting.get(message.id)?.(message);
    waiting.delete(message.id);
  }
});
let nextId = 1;
const request = (method, params) =>
  new Promise((resolve) => {
    const id = nextId++;
    waiting.set(id, resolve);
    input.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
  });
await request('initialize', {
  protocolVersion: '2025-06-18',
  capabilities: {},
  clientInfo: { name: 'bench', version: '1' },
});
input.write('{"jsonrpc":"2.0","method":"notifications/initialized"}\n');
const call = () => request('tools/call', { name: 'get_all_cells', arguments: { format: 'json' } });
const first = await call();
if (first.result?.content === undefined) throw new Error(`the call was not relayed: ${JSON.stringify(first)}`);
for (let i = 0; i < warmUp; i++) await call();
const perCall = [];
for (let round = 0; round < rounds; round++) {
  const before = process.cpuUsage();
  for (let i = 0; i < perRound; i++) await call();
  const used = process.cpuUsage(before);
  perCall.push((used.user + used.system) / perRound);
}
perCall.sort((a, b) => a - b);
await proxy?.close(0);
rmSync(dir, { recursive: true, force: true });
process.stdout.write(`${JSON.stringify({ usPerCall: perCall[Math.floor(rounds / 2)] })}\n`);
process.exit(0);
