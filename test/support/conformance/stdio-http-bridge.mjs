#!/usr/bin/env node
// A loopback Streamable-HTTP front for a stdio MCP server, so the conformance suite (which speaks
// HTTP only) can test the server. Plain Node, no dependencies.
//
//   node stdio-http-bridge.mjs [--port 0] [--host 127.0.0.1] [--path /mcp] [--warm-up tools/list|none]
//     -- <command> [args...]
//
// Once listening it prints one line on stdout, `listening <url>`, and nothing else there; its
// own log lines go to stderr, only with CONFORMANCE_BRIDGE_DEBUG=1 (the children's stderr is
// passed through as is). It stops, and stops its children, on SIGTERM/SIGINT, or when its stdin
// is a pipe and ends (the process that started it went away).
//
// Two eras, two ways of holding a child:
// - 2026-07-28 (a request whose `_meta` claims a protocol version, or that carries a
//   MCP-Protocol-Version header naming no legacy version): every such POST goes to ONE
//   long-lived child. JSON-RPC ids are rewritten on the way in (so concurrent HTTP requests never
//   collide) and restored on the way out; notifications find their POST by
//   `_meta.subscriptionId` (a `subscriptions/listen` stream) or `progressToken`, and turn the
//   answer into an SSE stream. An untagged `notifications/message` goes to the one request in
//   flight (dropped when there are several); any other untagged notification names no request
//   and is dropped (said on stderr): HTTP would carry it on no stream the bridge offers. A client that goes away before its answer makes the bridge send
//   `notifications/cancelled` for that request (how stdio cancels, and ends a listen).
//   HTTP status from the JSON-RPC error: -32601 -> 404; -32020/-32021/-32022 -> 400; -32602 ->
//   400 when the request's envelope lacks a required key (else 200).
// - 2025-11-25 and older: an `initialize` that claims no modern version starts a dedicated child
//   for a new Mcp-Session-Id (a legacy stdio server serves one session per process); DELETE ends
//   it. Requests the child sends (sampling, elicitation) go out on the open POST as SSE; the
//   client POSTs the answers back.
//
// The warm-up (`--warm-up tools/list`; off by default, `--warm-up none`). On HTTP the
// MCP-Protocol-Version header makes every request self-describing as 2026-07-28, whatever its
// body; stdio has no header, so a dual-era stdio server that has not yet seen a valid request
// must judge from the body alone, where an envelope-less request may read as a legacy client's
// request before `initialize`. For such a server the warm-up puts the shared child in the state
// the header states: one valid enveloped request opens its native era first. nteract-mcp needs
// none (it knows `server/discover` and `subscriptions/listen` as native-only methods, so even
// envelope-less they get the native -32602), and the conformance test runs without it, so the
// suite meets the server unopened, as a client does.
//
// What the bridge checks itself is only what the HTTP binding owns: MCP-Protocol-Version header
// against the body's `_meta` version, Mcp-Method against the method, Mcp-Name against
// `params.name`/`params.uri` (400, -32020), and loopback-only Host/Origin (403). Everything about
// the envelope, versions and methods is left to the server. Not implemented: `Mcp-Param-*`
// headers, a GET stream, resumption (Last-Event-ID).
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { fstatSync } from 'node:fs';
import { createServer } from 'node:http';
import { createInterface } from 'node:readline';

const VERSION_KEY = 'io.modelcontextprotocol/protocolVersion';
const CAPABILITIES_KEY = 'io.modelcontextprotocol/clientCapabilities';
const SUBSCRIPTION_KEY = 'io.modelcontextprotocol/subscriptionId';
const LEGACY_VERSIONS = new Set(['2024-11-05', '2025-03-26', '2025-06-18', '2025-11-25']);
/** Methods whose target must be repeated in the Mcp-Name header. */
const NAMED_METHODS = new Set(['tools/call', 'resources/read', 'prompts/get']);
const MAX_BODY_BYTES = 4 * 1024 * 1024;
/** How long a child may take to exit after its stdin closed, then after SIGTERM. */
const EXIT_GRACE_MS = 5000;

const debug = process.env.CONFORMANCE_BRIDGE_DEBUG === '1';
function log(...parts) {
  if (debug) console.error('[bridge]', ...parts);
}

function parseArguments(argv) {
  const split = argv.indexOf('--');
  if (split === -1 || split === argv.length - 1) {
    throw new Error(
      'usage: stdio-http-bridge.mjs [--port 0] [--host 127.0.0.1] [--path /mcp] [--warm-up tools/list|none] -- <command> [args...]',
    );
  }
  const options = { port: 0, host: '127.0.0.1', path: '/mcp', warmUp: 'none' };
  const own = argv.slice(0, split);
  for (let index = 0; index < own.length; index += 2) {
    const [name, value] = [own[index], own[index + 1]];
    if (value === undefined) throw new Error(`${name} needs a value`);
    if (name === '--port') options.port = Number(value);
    else if (name === '--host') options.host = value;
    else if (name === '--path') options.path = value;
    else if (name === '--warm-up') options.warmUp = value;
    else throw new Error(`unknown option ${name}`);
  }
  if (!Number.isInteger(options.port) || options.port < 0)
    throw new Error('--port must be a port number (0: any free port)');
  const [command, ...args] = argv.slice(split + 1);
  return { ...options, command, args };
}

function rpcError(id, code, message) {
  return { jsonrpc: '2.0', id: id ?? null, error: { code, message } };
}

function isObject(value) {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The header value, `=?base64?…?=` decoded (how non-ASCII names travel). */
function decodeHeader(value) {
  const encoded = /^=\?base64\?(.*)\?=$/.exec(value);
  return encoded ? Buffer.from(encoded[1], 'base64').toString('utf8') : value;
}

/** One HTTP POST waiting for the answer to its request; notifications for it turn it into SSE. */
class Exchange {
  constructor(response, originalId, statusFor, headers = {}) {
    this.response = response;
    this.originalId = originalId;
    this.statusFor = statusFor;
    this.headers = headers;
    this.streaming = false;
    this.done = false;
  }

  /** A notification (or a request of the server) that belongs to this request. */
  push(message) {
    if (this.done) return;
    if (!this.streaming) {
      this.streaming = true;
      this.response.writeHead(200, {
        'content-type': 'text/event-stream',
        'cache-control': 'no-cache',
        ...this.headers,
      });
    }
    this.response.write(`event: message\ndata: ${JSON.stringify(message)}\n\n`);
  }

  /** The answer: the last SSE event, or the whole JSON body with its mapped status. */
  finish(message) {
    if (this.done) return;
    if (this.streaming) {
      this.push(message);
      this.done = true;
      this.response.end();
      return;
    }
    this.done = true;
    const status = message.error ? this.statusFor(message.error.code) : 200;
    this.response.writeHead(status, { 'content-type': 'application/json', ...this.headers });
    this.response.end(JSON.stringify(message));
  }

  /** Ends the POST without an answer (the request was cancelled): the stream ends, or 204. */
  abandon() {
    if (this.done) return;
    this.done = true;
    if (!this.streaming && !this.response.headersSent) this.response.writeHead(204, this.headers);
    this.response.end();
  }
}

/** One stdio child: JSONL in and out, requests matched to their exchanges by rewritten ids. */
class StdioChild {
  constructor(label, command, args) {
    this.label = label;
    this.sequence = 0;
    /** @type {Map<string, Exchange & { progressToken?: unknown }>} bridge id -> exchange */
    this.inFlight = new Map();
    /** @type {Map<string, (answer: object) => void>} the bridge's own requests */
    this.ownRequests = new Map();
    this.process = spawn(command, args, { stdio: ['pipe', 'pipe', 'inherit'] });
    this.alive = true;
    this.exited = new Promise((resolve) => {
      this.process.once('exit', resolve);
      this.process.once('error', (error) => {
        console.error(`[bridge] ${label}: cannot start the server: ${error.message}`);
        this.alive = false;
        resolve();
      });
    });
    this.process.stdin.on('error', (error) => log(label, 'stdin', error.message));
    this.process.once('exit', (code, signal) => {
      this.alive = false;
      log(label, 'exited', code, signal);
      for (const exchange of this.inFlight.values()) {
        exchange.finish(rpcError(exchange.originalId, -32603, `the MCP server exited (${signal ?? code})`));
      }
      this.inFlight.clear();
      for (const settle of this.ownRequests.values()) settle(rpcError(null, -32603, 'the MCP server exited'));
      this.ownRequests.clear();
    });
    const lines = createInterface({ input: this.process.stdout, crlfDelay: Number.POSITIVE_INFINITY });
    lines.on('line', (line) => this.receive(line));
  }

  send(message) {
    log(this.label, '->', JSON.stringify(message).slice(0, 400));
    if (this.alive) this.process.stdin.write(`${JSON.stringify(message)}\n`);
  }

  /** Sends a request for `exchange`; its answer and its notifications go there. */
  request(message, exchange) {
    this.sequence += 1;
    const bridgeId = `bridge-${this.label}-${this.sequence}`;
    exchange.progressToken = message.params?._meta?.progressToken;
    this.inFlight.set(bridgeId, exchange);
    exchange.response.on('close', () => {
      if (exchange.done || !this.inFlight.has(bridgeId)) return;
      // The client went away first (an aborted fetch, the end of a listen): cancel it in the server.
      exchange.done = true;
      this.inFlight.delete(bridgeId);
      this.send({
        jsonrpc: '2.0',
        method: 'notifications/cancelled',
        params: { requestId: bridgeId, reason: 'client disconnected' },
      });
    });
    this.send({ ...message, id: bridgeId });
  }

  /** A request of the bridge itself; resolves with the server's answer. */
  ownRequest(method, params) {
    this.sequence += 1;
    const id = `bridge-${this.label}-own-${this.sequence}`;
    const answered = new Promise((resolve) => this.ownRequests.set(id, resolve));
    this.send({ jsonrpc: '2.0', id, method, params });
    return answered;
  }

  /**
   * A message the client POSTed that expects no answer. Its own `notifications/cancelled` names the
   * request by the client's id, so that is mapped to the bridge's id (dropped when no request of
   * that id is in flight, or more than one HTTP client used it).
   */
  forward(message) {
    if (message.method !== 'notifications/cancelled' || message.params?.requestId === undefined)
      return this.send(message);
    const matches = [...this.inFlight].filter(([, exchange]) => exchange.originalId === message.params.requestId);
    if (matches.length !== 1)
      return log(this.label, 'cancellation of no single request in flight', message.params.requestId);
    const [bridgeId, exchange] = matches[0];
    this.inFlight.delete(bridgeId);
    exchange.abandon();
    this.send({ ...message, params: { ...message.params, requestId: bridgeId } });
  }

  receive(line) {
    if (line.trim() === '') return;
    let message;
    try {
      message = JSON.parse(line);
    } catch {
      // stdout must carry protocol messages only: say so whatever the debug switch.
      console.error(`[bridge] ${this.label}: not a JSON-RPC line on the server's stdout: ${line.slice(0, 200)}`);
      return;
    }
    log(this.label, '<-', line.slice(0, 400));
    if (!isObject(message)) return;
    if (message.method === undefined) {
      const settle = this.ownRequests.get(message.id);
      if (settle) {
        this.ownRequests.delete(message.id);
        return settle(message);
      }
      const exchange = this.inFlight.get(message.id);
      if (!exchange) return log(this.label, 'answer to an unknown id', message.id);
      this.inFlight.delete(message.id);
      let answer = { ...message, id: exchange.originalId };
      // A listen result names its subscription by the request id: the bridge's, so restore it.
      const resultMeta = isObject(message.result?._meta) ? message.result._meta : undefined;
      if (resultMeta?.[SUBSCRIPTION_KEY] === message.id) {
        answer = {
          ...answer,
          result: { ...message.result, _meta: { ...resultMeta, [SUBSCRIPTION_KEY]: exchange.originalId } },
        };
      }
      exchange.finish(answer);
      return;
    }
    this.route(message);
  }

  /** A notification (or a server request): to the exchange it belongs to, with ids restored. */
  route(message) {
    const params = isObject(message.params) ? message.params : {};
    const meta = isObject(params._meta) ? params._meta : {};
    let bridgeId;
    if (meta[SUBSCRIPTION_KEY] !== undefined) bridgeId = meta[SUBSCRIPTION_KEY];
    else if (message.method === 'notifications/cancelled') bridgeId = params.requestId;
    else if (params.progressToken !== undefined) {
      bridgeId = [...this.inFlight].find(([, exchange]) => exchange.progressToken === params.progressToken)?.[0];
    } else if (message.id !== undefined || message.method === 'notifications/message') {
      // Untagged but about a request (a log line, a legacy server's own request): stdio does not
      // say which, so it goes to the request in flight when there is exactly one.
      if (this.inFlight.size === 1) bridgeId = [...this.inFlight.keys()][0];
    } else {
      // About no request (an untagged list_changed, ...): over HTTP it could only go to a listen
      // stream (2026-07-28) or the GET stream (legacy), neither of which it names or the bridge has.
      console.error(`[bridge] ${this.label}: dropped ${message.method}, which names no request or subscription`);
      return;
    }
    const exchange = bridgeId === undefined ? undefined : this.inFlight.get(bridgeId);
    if (!exchange) {
      console.error(
        `[bridge] ${this.label}: dropped ${message.method}: no single request in flight it could belong to`,
      );
      return;
    }
    let restored = message;
    if (meta[SUBSCRIPTION_KEY] !== undefined) {
      restored = { ...message, params: { ...params, _meta: { ...meta, [SUBSCRIPTION_KEY]: exchange.originalId } } };
    }
    if (message.method === 'notifications/cancelled') {
      // The server ended this request's stream (how a listen ends): pass it on and close it.
      this.inFlight.delete(bridgeId);
      exchange.push({ ...message, params: { ...params, requestId: exchange.originalId } });
      exchange.abandon();
      return;
    }
    exchange.push(restored);
  }

  /** Closes stdin (how MCP clients stop a stdio server), then SIGTERM, then SIGKILL. */
  async stop() {
    if (!this.alive) return;
    this.process.stdin.end();
    for (const signal of ['SIGTERM', 'SIGKILL']) {
      const timer = new Promise((resolve) => setTimeout(resolve, EXIT_GRACE_MS, 'timeout'));
      if ((await Promise.race([this.exited.then(() => 'exited'), timer])) === 'exited') return;
      log(this.label, 'still running, sending', signal);
      this.process.kill(signal);
    }
    await this.exited;
  }
}

/** The binding's own rules for a modern message: a -32020 message when the headers disagree. */
function headerMismatch(headers, message) {
  const claimed = message.params?._meta?.[VERSION_KEY];
  const headerVersion = headers['mcp-protocol-version'];
  if (claimed !== undefined && headerVersion === undefined) return 'MCP-Protocol-Version header missing';
  if (claimed !== undefined && headerVersion !== claimed) {
    return `MCP-Protocol-Version header ${headerVersion} does not match the request's _meta version ${claimed}`;
  }
  const method = headers['mcp-method'];
  const isRequest = message.id !== undefined;
  if ((isRequest || method !== undefined) && method !== message.method) {
    return method === undefined
      ? 'Mcp-Method header missing'
      : `Mcp-Method header ${method} does not match ${message.method}`;
  }
  if (NAMED_METHODS.has(message.method)) {
    const target = message.params?.name ?? message.params?.uri;
    const name = headers['mcp-name'];
    if (name === undefined) return 'Mcp-Name header missing';
    if (decodeHeader(name) !== String(target)) return `Mcp-Name header does not match ${String(target)}`;
  }
  return undefined;
}

/** HTTP status of a modern request's JSON-RPC error. */
function modernStatus(message) {
  const meta = message.params?._meta;
  const envelopeIncomplete = !isObject(meta) || meta[VERSION_KEY] === undefined || meta[CAPABILITIES_KEY] === undefined;
  return (code) => {
    if (code === -32601) return 404;
    if (code === -32020 || code === -32021 || code === -32022 || code === -32600 || code === -32700) return 400;
    if (code === -32602 && envelopeIncomplete) return 400;
    return 200;
  };
}

function isLoopback(hostAndPort) {
  return /^(localhost|127\.0\.0\.1|\[::1\])(:\d+)?$/i.test(hostAndPort ?? '');
}

function reply(response, status, body, headers = {}) {
  response.writeHead(status, { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers });
  response.end(body === undefined ? undefined : JSON.stringify(body));
}

/** The warm-up: one valid 2026-07-28 request, so the child opens its native era (see above). */
async function warmUp(child, method) {
  const answer = await child.ownRequest(method, {
    _meta: {
      [VERSION_KEY]: '2026-07-28',
      [CAPABILITIES_KEY]: {},
      'io.modelcontextprotocol/clientInfo': { name: 'conformance-stdio-http-bridge', version: '1.0.0' },
    },
  });
  if (answer.error) console.error(`[bridge] the warm-up ${method} failed: ${JSON.stringify(answer.error)}`);
  else log('warm-up answered', method);
}

function startBridge({ port, host, path, warmUp: warmUpMethod, command, args }) {
  let modernChild;
  let modernReady;
  let legacyCount = 0;
  /** Every child not yet exited (a DELETEd session's child too, until it is gone). */
  const running = new Set();
  const started = (child) => {
    running.add(child);
    void child.exited.then(() => running.delete(child));
    return child;
  };
  /** @type {Map<string, StdioChild>} Mcp-Session-Id -> the legacy session's child */
  const sessions = new Map();
  /** The shared child, started (and warmed up) on first use and again after it exited. */
  const sharedChild = async () => {
    if (!modernChild?.alive) {
      modernChild = started(new StdioChild('modern', command, args));
      modernReady = warmUpMethod === 'none' ? Promise.resolve() : warmUp(modernChild, warmUpMethod);
    }
    const child = modernChild;
    await modernReady;
    return child;
  };

  const handleModern = async (request, response, message) => {
    if (message.method !== undefined) {
      const mismatch = headerMismatch(request.headers, message);
      if (mismatch) return reply(response, 400, rpcError(message.id, -32020, mismatch));
    }
    const child = await sharedChild();
    if (message.id === undefined || message.method === undefined) {
      // A notification, or the client's answer to a server request: nothing comes back.
      child.forward(message);
      return reply(response, 202);
    }
    child.request(message, new Exchange(response, message.id, modernStatus(message)));
  };

  const handleLegacy = (request, response, message) => {
    const sessionId = request.headers['mcp-session-id'];
    let child = sessionId === undefined ? undefined : sessions.get(sessionId);
    if (sessionId !== undefined && !child)
      return reply(response, 404, rpcError(message.id, -32001, 'Session not found'));
    if (!child) {
      if (message.method !== 'initialize') {
        return reply(
          response,
          400,
          rpcError(message.id, -32000, 'Bad Request: no Mcp-Session-Id and not an initialize'),
        );
      }
      legacyCount += 1;
      child = started(new StdioChild(`legacy-${legacyCount}`, command, args));
      child.sessionId = randomUUID();
      sessions.set(child.sessionId, child);
    }
    if (message.id === undefined || message.method === undefined) {
      child.forward(message);
      return reply(response, 202);
    }
    // Legacy HTTP carries JSON-RPC errors with status 200.
    child.request(message, new Exchange(response, message.id, () => 200, { 'mcp-session-id': child.sessionId }));
  };

  const server = createServer((request, response) => {
    // A client that goes away mid-request must not take the bridge down with it.
    request.on('error', (error) => log('request', error.message));
    response.on('error', (error) => log('response', error.message));
    const url = new URL(request.url ?? '/', 'http://bridge');
    if (url.pathname !== path)
      return reply(response, 404, rpcError(null, -32601, `no MCP endpoint at ${url.pathname}`));
    // DNS-rebinding guard: a loopback server answers loopback Host and Origin values only.
    const origin = request.headers.origin;
    if (
      !isLoopback(request.headers.host) ||
      (origin !== undefined && !isLoopback(origin.replace(/^https?:\/\//i, '')))
    ) {
      return reply(response, 403, rpcError(null, -32000, 'Forbidden: Host and Origin must be loopback'));
    }
    if (request.method === 'DELETE') {
      const sessionId = request.headers['mcp-session-id'];
      const child = sessionId === undefined ? undefined : sessions.get(sessionId);
      if (!child) return reply(response, 404, rpcError(null, -32001, 'Session not found'));
      sessions.delete(sessionId);
      void child.stop();
      return reply(response, 200);
    }
    if (request.method !== 'POST') {
      return reply(response, 405, rpcError(null, -32000, 'Method not allowed'), { allow: 'POST, DELETE' });
    }
    const chunks = [];
    let size = 0;
    request.on('data', (chunk) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) chunks.push(chunk);
    });
    request.on('end', () => {
      if (size > MAX_BODY_BYTES) return reply(response, 413, rpcError(null, -32600, 'Request body too large'));
      let message;
      try {
        message = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        return reply(response, 400, rpcError(null, -32700, 'Parse error'));
      }
      if (!isObject(message))
        return reply(response, 400, rpcError(null, -32600, 'Invalid Request: one JSON-RPC object per POST'));
      const claimed = isObject(message.params?._meta) ? message.params._meta[VERSION_KEY] : undefined;
      const headerVersion = request.headers['mcp-protocol-version'];
      const modern =
        request.headers['mcp-session-id'] === undefined &&
        (claimed !== undefined ||
          (headerVersion !== undefined && !LEGACY_VERSIONS.has(headerVersion) && message.method !== 'initialize'));
      log(modern ? 'modern' : 'legacy', 'POST', JSON.stringify(message).slice(0, 400));
      if (modern) {
        handleModern(request, response, message).catch((error) => {
          console.error(`[bridge] ${error.stack ?? error}`);
          if (!response.headersSent) reply(response, 500, rpcError(message.id, -32603, 'bridge error'));
        });
      } else handleLegacy(request, response, message);
    });
  });

  let stopping;
  const stop = () => {
    stopping ??= (async () => {
      server.close();
      server.closeAllConnections();
      await Promise.all([...running].map((child) => child.stop()));
    })();
    return stopping;
  };

  server.listen(port, host, () => {
    const address = server.address();
    const shownHost = host.includes(':') ? `[${host}]` : host;
    process.stdout.write(`listening http://${shownHost}:${address.port}${path}\n`);
    log('serving', command, args.join(' '));
  });
  return stop;
}

let stop;
try {
  stop = startBridge(parseArguments(process.argv.slice(2)));
} catch (error) {
  console.error(`[bridge] ${error.message}`);
  process.exit(2);
}
const shutdown = () => stop().then(() => process.exit(0));
process.once('SIGTERM', shutdown);
process.once('SIGINT', shutdown);
// Started with a pipe on stdin (as a test starts it): its end means the starter is gone.
const stdin = fstatSync(0);
if (stdin.isFIFO() || stdin.isSocket()) {
  process.stdin.on('end', shutdown);
  process.stdin.on('error', shutdown);
  process.stdin.resume();
}
