import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import type { KnownKind } from './json-rpc-fuzz-batch.js';
import type { JsonRpcReply } from './json-rpc-reply-ledger.js';

export interface JsonRpcStdioTargetOptions {
  readonly command: string;
  readonly args: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  readonly cwd: string;
  /** Every reply that is not to one of the driver's own requests. */
  readonly onReply: (reply: JsonRpcReply) => void;
  /** A stdout line that is not JSON-RPC (stdout must carry protocol bytes only). */
  readonly onGarbage: (line: string) => void;
}

type Pending = { resolve: (message: Record<string, unknown>) => void; reject: (error: Error) => void };

const driverIdPrefix = 'driver-';
const knownPatterns: readonly [KnownKind, RegExp][] = [
  ['cell', /"cell_id":\s*"([A-Za-z0-9_-]{4,64})"/g],
  ['execution', /"execution_id":\s*"([A-Za-z0-9_-]{4,64})"/g],
  ['notebook', /"notebook_id":\s*"([0-9a-f-]{36})"/g],
];

/**
 * A real MCP stdio server process driven line by line: writes raw bytes (split as given), sends
 * the driver's own requests (ids `driver-N`), answers the server's requests to the client
 * (`roots/list`, `ping`; anything else "method not found"), and hands every other reply to
 * `onReply`. Remembers the cell, execution and notebook ids the server mentions, so later fuzz
 * inputs can name real ones.
 */
export class JsonRpcStdioTarget {
  public readonly known: Record<KnownKind, string[]> = { cell: [], execution: [], notebook: [] };
  readonly #process: ChildProcessWithoutNullStreams;
  readonly #pending = new Map<string, Pending>();
  readonly #options: JsonRpcStdioTargetOptions;
  #nextId = 1;
  #stdout: Buffer = Buffer.alloc(0);
  #stderr = '';
  #exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  readonly #exited: Promise<void>;
  #childExits = 0;

  private constructor(options: JsonRpcStdioTargetOptions) {
    this.#options = options;
    this.#process = spawn(options.command, [...options.args], {
      cwd: options.cwd,
      env: { ...options.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    this.#process.stdin.on('error', () => undefined);
    this.#process.stdout.on('data', (chunk: Buffer) => this.onStdout(chunk));
    this.#process.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      this.#childExits += chunk.match(/\] child exited \{/g)?.length ?? 0;
      this.#stderr = (this.#stderr + chunk).slice(-32_768);
    });
    this.#exited = new Promise((resolve) =>
      this.#process.once('exit', (code, signal) => {
        this.#exit = { code, signal };
        for (const pending of this.#pending.values())
          pending.reject(new Error(`the process exited (${code ?? signal}) before answering`));
        this.#pending.clear();
        resolve();
      }),
    );
  }

  /**
   * Spawns the server, completes the MCP handshake (initialize, initialized) and waits for a
   * `session_status` call to succeed (through a proxy: its child is up and serving).
   */
  public static async start(options: JsonRpcStdioTargetOptions, timeoutMs = 60_000): Promise<JsonRpcStdioTarget> {
    const target = new JsonRpcStdioTarget(options);
    try {
      await target.request(
        'initialize',
        { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'fuzz', version: '1.0.0' } },
        timeoutMs,
      );
      target.notify('notifications/initialized');
      const status = await target.request('tools/call', { name: 'session_status', arguments: {} }, timeoutMs);
      if (!status.result) throw new Error(`session_status failed: ${JSON.stringify(status)}`);
    } catch (error) {
      await target.kill();
      throw new Error(`${(error as Error).message}\n${target.stderrTail()}`);
    }
    return target;
  }

  public get pid(): number | undefined {
    return this.#process.pid;
  }

  /** How the process ended, once it did. */
  public get exit(): { code: number | null; signal: NodeJS.Signals | null } | undefined {
    return this.#exit;
  }

  /** Times a proxy reported its child exiting on its own (`child exited`, not `… as asked`). */
  public get childExits(): number {
    return this.#childExits;
  }

  public stderrTail(chars = 4_000): string {
    return this.#stderr.slice(-chars);
  }

  /** Writes the pieces one by one, letting the reader see each as a separate chunk when it can. */
  public async write(pieces: readonly Buffer[]): Promise<void> {
    for (const piece of pieces) {
      if (this.#exit || !this.#process.stdin.writable) return;
      await new Promise<void>((resolve) => this.#process.stdin.write(piece, () => resolve()));
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  /** One request of the driver; resolves with the whole reply, rejects on timeout or exit. */
  public request(method: string, params: unknown, timeoutMs: number): Promise<Record<string, unknown>> {
    const id = `${driverIdPrefix}${this.#nextId++}`;
    return new Promise((resolve, reject) => {
      if (this.#exit) {
        reject(new Error('the process has exited'));
        return;
      }
      const timer = setTimeout(() => {
        this.#pending.delete(id);
        reject(new Error(`no answer to ${method} within ${timeoutMs} ms`));
      }, timeoutMs);
      this.#pending.set(id, {
        resolve: (message) => {
          clearTimeout(timer);
          resolve(message);
        },
        reject: (error) => {
          clearTimeout(timer);
          reject(error);
        },
      });
      const message = { jsonrpc: '2.0', id, method, ...(params === undefined ? {} : { params }) };
      this.#process.stdin.write(`${JSON.stringify(message)}\n`);
    });
  }

  public notify(method: string, params?: unknown): void {
    const message = { jsonrpc: '2.0', method, ...(params === undefined ? {} : { params }) };
    if (!this.#exit) this.#process.stdin.write(`${JSON.stringify(message)}\n`);
  }

  /** Closes stdin and waits for the exit; SIGKILL after `graceMs`. */
  public async stop(graceMs = 10_000): Promise<void> {
    if (this.#exit) return;
    this.#process.stdin.end();
    const timer = setTimeout(() => this.#process.kill('SIGKILL'), graceMs);
    await this.#exited;
    clearTimeout(timer);
  }

  public async kill(): Promise<void> {
    if (this.#exit) return;
    this.#process.kill('SIGKILL');
    await this.#exited;
  }

  private onStdout(chunk: Buffer): void {
    this.#stdout = this.#stdout.length === 0 ? chunk : Buffer.concat([this.#stdout, chunk]);
    for (;;) {
      const end = this.#stdout.indexOf(0x0a);
      if (end === -1) return;
      const line = this.#stdout.subarray(0, end).toString('utf8');
      this.#stdout = this.#stdout.subarray(end + 1);
      if (line.trim().length > 0) this.onLine(line);
    }
  }

  private onLine(line: string): void {
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      this.#options.onGarbage(line);
      return;
    }
    for (const message of Array.isArray(value) ? value : [value]) {
      if (message === null || typeof message !== 'object' || Array.isArray(message)) {
        this.#options.onGarbage(line);
        continue;
      }
      this.onMessage(message as Record<string, unknown>, line);
    }
  }

  private onMessage(message: Record<string, unknown>, line: string): void {
    if (message.jsonrpc !== '2.0') this.#options.onGarbage(line);
    if (typeof message.method === 'string') {
      if (Object.hasOwn(message, 'id')) this.answerServerRequest(message);
      return;
    }
    const hasResult = Object.hasOwn(message, 'result');
    if (hasResult === Object.hasOwn(message, 'error')) {
      this.#options.onGarbage(line);
      return;
    }
    this.remember(line);
    const id = message.id;
    if (typeof id === 'string' && id.startsWith(driverIdPrefix)) {
      const pending = this.#pending.get(id);
      this.#pending.delete(id);
      pending?.resolve(message);
      return;
    }
    const error = message.error as { code: unknown; message: unknown } | undefined;
    this.#options.onReply({
      id,
      error: hasResult ? undefined : { code: error?.code, message: error?.message },
      line: line.length > 600 ? `${line.slice(0, 600)}…` : line,
    });
  }

  private answerServerRequest(message: Record<string, unknown>): void {
    const reply =
      message.method === 'roots/list'
        ? { result: { roots: [] } }
        : message.method === 'ping'
          ? { result: {} }
          : { error: { code: -32601, message: 'Method not found' } };
    this.#process.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: message.id, ...reply })}\n`);
  }

  private remember(line: string): void {
    const text = line.replace(/\\"/g, '"');
    for (const [kind, pattern] of knownPatterns) {
      for (const match of text.matchAll(pattern)) {
        const list = this.known[kind];
        const value = match[1] as string;
        if (list.includes(value)) continue;
        list.push(value);
        if (list.length > 20) list.shift();
      }
    }
  }
}
