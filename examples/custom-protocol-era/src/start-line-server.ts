import { tmpdir } from 'node:os';
import { createInterface } from 'node:readline';
import { PassThrough } from 'node:stream';
import { createChildMcpServer, GuardedStdioTransport, Logger, type McpPlugin } from '@nteract-mcp/core';
import { createTestContainer, RecordingLogger } from '@nteract-mcp/core/testing';

/** A JSON-RPC answer line as the server wrote it, parsed. */
export interface LineAnswer {
  readonly id: string | number | null;
  readonly result?: Record<string, unknown>;
  readonly error?: { readonly code: number; readonly message: string; readonly data?: unknown };
}

/** Core's child server with a chosen plugin set, spoken to in raw JSON-RPC lines. */
export interface LineServer {
  /** Writes one request line; resolves with the line that answers its `id`. */
  ask(id: number, method: string, params?: Record<string, unknown>): Promise<LineAnswer>;
  /** Writes one notification line. */
  notify(method: string, params?: Record<string, unknown>): Promise<void>;
  /** The era that opened the connection and its version, as the server logged them; `undefined` before. */
  opened(): { readonly era: unknown; readonly protocolVersion: unknown } | undefined;
  /** Closes the server (the plugins' state goes with it). */
  close(): Promise<void>;
}

/**
 * Composes `plugins` in a real container (core's bindings, the plugins in this order; only the
 * logger replaced, by a recording one) and connects core's child server behind the contributed
 * protocol eras to its stdio transport, as the `runt-mcp` bin does, over in-memory streams
 * instead of the process's stdin and stdout. No notebook backend is needed for what the eras do.
 */
export async function startLineServer(plugins: readonly McpPlugin[]): Promise<LineServer> {
  const logger = new RecordingLogger();
  const container = createTestContainer({ plugins }).override(Logger, logger).build();
  const child = createChildMcpServer(container, { version: '0.1.0', cwd: tmpdir() });
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  const waiting = new Map<string | number, (answer: LineAnswer) => void>();
  createInterface({ input: stdout }).on('line', (line) => {
    const message = JSON.parse(line) as Partial<LineAnswer> & { method?: string };
    if (message.method !== undefined || message.id === undefined || message.id === null) return;
    waiting.get(message.id)?.(message as LineAnswer);
    waiting.delete(message.id);
  });
  await child.connect(new GuardedStdioTransport({ stdin, stdout, logger }));
  const write = (message: Record<string, unknown>): Promise<void> =>
    new Promise((resolve, reject) =>
      stdin.write(`${JSON.stringify({ jsonrpc: '2.0', ...message })}\n`, (error) =>
        error ? reject(error) : resolve(),
      ),
    );
  return {
    ask: async (id, method, params) => {
      const answered = new Promise<LineAnswer>((resolve) => waiting.set(id, resolve));
      await write({ id, method, ...(params === undefined ? {} : { params }) });
      return answered;
    },
    notify: (method, params) => write({ method, ...(params === undefined ? {} : { params }) }),
    opened: () => {
      const fields = logger.find('protocol era opened')[0]?.fields;
      return fields && { era: fields.era, protocolVersion: fields.protocolVersion };
    },
    close: async () => {
      await child.close();
      stdin.end();
      stdout.end();
    },
  };
}
