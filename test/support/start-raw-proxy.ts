import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import type { UserEnvironment } from './create-user-environment.js';
import { isAlive } from './process-tree.js';
import { shippedBins } from './shipped-bins.js';
import { waitFor } from './wait-for.js';

/** One JSON-RPC line the proxy wrote, parsed. */
export interface RawLine {
  readonly id?: unknown;
  readonly method?: string;
  readonly result?: Record<string, unknown>;
  readonly error?: { readonly code: number; readonly message: string; readonly data?: unknown };
}

/**
 * The shipped proxy spoken to in raw JSON-RPC lines: what it writes, as it writes it, and when (an
 * MCP SDK client would hide that: it sends nothing before `notifications/initialized`, and prints
 * an error as "MCP error <code>: <message>").
 */
export interface RawProxy {
  send(message: object): void;
  /** The answer to request `id` (result or error) and how long after `since` it came. */
  answer(id: unknown, since?: number): Promise<{ readonly line: RawLine; readonly afterMs: number }>;
  lines(): readonly RawLine[];
  /** The line the proxy wrote with the answer to request `id`, as it wrote it (its bytes, as UTF-8 text); after {@link answer}. */
  answerText(id: unknown): string | undefined;
  stderr(): string;
  /** Closes its input (a client ending its session) and waits for it to exit (SIGKILL after 15 s). Idempotent. */
  stop(): Promise<void>;
}

/**
 * Starts the shipped `nteract-mcp` with default options in `environment` (its HOME, its project
 * directory). The environment stays: the caller cleans it up once every proxy it started stopped.
 */
export function startRawProxy(environment: UserEnvironment): RawProxy {
  const proxy: ChildProcessWithoutNullStreams = spawn(process.execPath, [shippedBins.proxy], {
    env: { ...environment.env },
    cwd: environment.dirs.project,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const received: { line: RawLine; at: number; text: string }[] = [];
  let pending = '';
  let stderr = '';
  proxy.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    pending += chunk;
    for (let end = pending.indexOf('\n'); end >= 0; end = pending.indexOf('\n')) {
      const text = pending.slice(0, end);
      pending = pending.slice(end + 1);
      if (text.length > 0) received.push({ line: JSON.parse(text) as RawLine, at: Date.now(), text });
    }
  });
  proxy.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  let stopped: Promise<void> | undefined;
  return {
    send: (message) => proxy.stdin.write(`${JSON.stringify(message)}\n`),
    answer: async (id, since = Date.now()) => {
      const found = await waitFor(`the answer to ${JSON.stringify(id)}\n${stderr}`, () =>
        received.find(({ line }) => line.id === id && line.method === undefined),
      );
      return { line: found.line, afterMs: found.at - since };
    },
    lines: () => received.map(({ line }) => line),
    answerText: (id) => received.find(({ line }) => line.id === id && line.method === undefined)?.text,
    stderr: () => stderr,
    stop: () => {
      stopped ??= (async () => {
        proxy.stdin.end();
        const pid = proxy.pid as number;
        await waitFor('the proxy to exit', () => !isAlive(pid), { timeoutMs: 15_000 }).catch(() => {
          if (isAlive(pid)) process.kill(pid, 'SIGKILL');
        });
      })();
      return stopped;
    },
  };
}
