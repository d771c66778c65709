// A minimal MCP client over a child's stdio, for benchmarks: newline-delimited JSON-RPC, ids
// matched to answers, nothing else (no schema work, so it adds the same small cost to every path).
import { spawn } from 'node:child_process';

export class JsonlPeer {
  /** Spawns `command args` with `env` and speaks JSON-RPC lines on its stdio. */
  constructor(command, args, env) {
    this.process = spawn(command, args, { env, stdio: ['pipe', 'pipe', 'ignore'] });
    this.pending = new Map();
    this.nextId = 1;
    this.notifications = 0;
    let buffer = '';
    this.process.stdout.setEncoding('utf8').on('data', (chunk) => {
      buffer += chunk;
      let end = buffer.indexOf('\n');
      while (end !== -1) {
        const line = buffer.slice(0, end);
        buffer = buffer.slice(end + 1);
        if (line.length > 0) this.#receive(JSON.parse(line));
        end = buffer.indexOf('\n');
      }
    });
    this.exited = new Promise((resolve) => this.process.once('exit', resolve));
  }

  #receive(message) {
    if (message.id === undefined || message.method !== undefined) {
      this.notifications += 1;
      return;
    }
    const resolve = this.pending.get(message.id);
    this.pending.delete(message.id);
    resolve?.(message);
  }

  /** Sends a request; resolves with the whole answer (result or error). */
  request(method, params = {}) {
    const id = this.nextId++;
    return new Promise((resolve) => {
      this.pending.set(id, resolve);
      this.process.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
    });
  }

  notify(method, params = {}) {
    this.process.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method, params })}\n`);
  }

  /** The legacy handshake a client does first. */
  async initialize() {
    const answer = await this.request('initialize', {
      protocolVersion: '2025-06-18',
      capabilities: {},
      clientInfo: { name: 'bench', version: '1' },
    });
    this.notify('notifications/initialized');
    return answer;
  }

  /** A tool call; throws on a JSON-RPC error or an isError result. */
  async call(name, args = {}) {
    const answer = await this.request('tools/call', { name, arguments: args });
    if (answer.error) throw new Error(`${name}: ${answer.error.message}`);
    if (answer.result?.isError) throw new Error(`${name}: ${JSON.stringify(answer.result.content)}`);
    return answer.result;
  }

  /** Closes stdin (an MCP client's shutdown) and waits for the exit. */
  async close() {
    this.process.stdin.end();
    const timer = setTimeout(() => this.process.kill('SIGKILL'), 10_000);
    await this.exited;
    clearTimeout(timer);
  }
}
