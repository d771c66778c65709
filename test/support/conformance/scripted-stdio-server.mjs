// A scripted stdio JSON-RPC peer for stdio-http-bridge.spec.ts: it shows what reaches a server
// behind the bridge and emits what a real server would emit, with no MCP logic of its own.
//   journal                -> { received: [every message read so far, in order] }
//   whoami                 -> { pid, idSeen }
//   fail { code }          -> a JSON-RPC error with that code
//   slow                   -> never answered (the client is expected to go away)
//   subscriptions/listen   -> notifications/subscriptions/acknowledged tagged with the request id
//   poke                   -> notifications/tools/list_changed on every open listen, then {}
//   announce               -> an untagged notifications/tools/list_changed, then {}
//   log                    -> an untagged notifications/message, then {}
//   anything else          -> { ok: true } (initialize and tools/list included)
import { createInterface } from 'node:readline';

const SUBSCRIPTION_KEY = 'io.modelcontextprotocol/subscriptionId';
const received = [];
const listens = new Set();
const write = (message) => process.stdout.write(`${JSON.stringify({ jsonrpc: '2.0', ...message })}\n`);

createInterface({ input: process.stdin }).on('line', (line) => {
  const message = JSON.parse(line);
  received.push(message);
  if (message.method === 'notifications/cancelled') listens.delete(message.params?.requestId);
  if (message.id === undefined || message.method === undefined) return;
  const { id, method, params } = message;
  if (method === 'journal') write({ id, result: { received } });
  else if (method === 'whoami') write({ id, result: { pid: process.pid, idSeen: id } });
  else if (method === 'fail') write({ id, error: { code: params.code, message: `failing with ${params.code}` } });
  else if (method === 'slow') return;
  else if (method === 'subscriptions/listen') {
    listens.add(id);
    write({ method: 'notifications/subscriptions/acknowledged', params: { _meta: { [SUBSCRIPTION_KEY]: id } } });
  } else if (method === 'poke') {
    for (const listen of listens)
      write({ method: 'notifications/tools/list_changed', params: { _meta: { [SUBSCRIPTION_KEY]: listen } } });
    write({ id, result: {} });
  } else if (method === 'announce') {
    write({ method: 'notifications/tools/list_changed' });
    write({ id, result: {} });
  } else if (method === 'log') {
    write({ method: 'notifications/message', params: { level: 'info', data: 'a log line' } });
    write({ id, result: {} });
  } else write({ id, result: { ok: true } });
});
