import { mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import {
  type CallToolResult,
  CallToolResultSchema,
  ErrorCode,
  McpError,
  type Progress,
  ResourceListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { RecordingLogger } from '@nteract-mcp/foundation/testing';
import { type Container, ContainerModule } from 'inversify';
import { expect } from 'vitest';
import {
  type ChildMcpServer,
  type ChildServerOptions,
  createChildMcpServer,
} from '../child-server/create-child-mcp-server.js';
import { TargetKind } from '../contributions/target-kind.js';
import { definePlugin } from '../di/mcp-plugin.js';
import { idempotencyMetaKey } from '../handoff/handoff-contract.js';
import {
  parseHostedUrlTarget,
  parseLocalPathTarget,
  parseNotebookIdTarget,
} from '../notebook-target/parse-notebook-target.js';
import { DaemonPort } from '../ports/daemon-port.js';
import { Logger } from '../ports/logger.js';
import type { CellOutput, NotebookCell } from '../ports/notebook-handle.js';
import { SessionSlot } from '../session/session-slot.js';
import { createTestContainer } from '../testing/create-test-container.js';
import { FakeDaemonPort, type FakeDaemonPortOptions } from '../testing/fake-daemon-port.js';
import type { FakeExecutor } from '../testing/fake-notebook-handle.js';

/** The client as the tests name it. */
export const testClientInfo = { name: 'claude-code', title: 'Claude Code', version: '1' } as const;

/** The agent session the harness gives the server, so peer labels are predictable. */
export const testAgentSession = 'feedc0de';

/**
 * The fake kernel of the tests: `raise X` fails with an error output, `sleep …` is still running
 * when the wait ends, anything else prints `out: <source>`.
 */
export const testExecutor: FakeExecutor = (cell: NotebookCell) => {
  if (cell.source.startsWith('raise ')) {
    const error: CellOutput = {
      output_type: 'error',
      ename: 'RuntimeError',
      evalue: cell.source.slice('raise '.length),
      traceback: [`${String.fromCharCode(27)}[31mRuntimeError${String.fromCharCode(27)}[0m: boom`],
    };
    return { status: 'error', outputs: [error] };
  }
  const printed: CellOutput = { output_type: 'stream', name: 'stdout', text: `out: ${cell.source}\n` };
  return { status: cell.source.startsWith('sleep') ? 'running' : 'ok', outputs: [printed] };
};

/** Target kinds as the local daemon and hosted plugins contribute them (core cannot import plugins). */
const testTargetKindsPlugin = definePlugin({
  id: 'test.target-kinds',
  module: new ContainerModule(({ bind }) => {
    bind(TargetKind).toConstantValue({
      id: 'test.local-path',
      specificationVersion: 'v1',
      kind: 'local-path',
      parse: (raw, context) => parseLocalPathTarget(raw, context),
    });
    bind(TargetKind).toConstantValue({
      id: 'test.notebook-id',
      specificationVersion: 'v1',
      kind: 'notebook-id',
      parse: (raw) => parseNotebookIdTarget(raw),
    });
    bind(TargetKind).toConstantValue({
      id: 'test.hosted-url',
      specificationVersion: 'v1',
      kind: 'hosted-url',
      parse: (raw, context) => parseHostedUrlTarget(raw, context),
    });
  }),
});

/** A child server in a real container (fake daemon), connected to an SDK client in memory. */
export interface ChildServerTestHarness {
  readonly child: ChildMcpServer;
  readonly client: Client;
  readonly container: Container;
  readonly daemon: FakeDaemonPort | undefined;
  readonly slot: SessionSlot;
  readonly logger: RecordingLogger;
  /** A fresh temporary directory (canonical): the server's cwd. Holds an empty `subdir/`. */
  readonly cwd: string;
  /** `notifications/resources/list_changed` received so far. */
  readonly resourceListChanges: () => number;
  /** Calls a tool; resolves with the result (also for `isError`), rejects for JSON-RPC errors. */
  call(
    name: string,
    args?: Record<string, unknown>,
    options?: { readonly idempotencyKey?: string; readonly onProgress?: (progress: Progress) => void },
  ): Promise<CallToolResult>;
  /** Calls a tool that must succeed and parses its JSON text. */
  callJson(name: string, args?: Record<string, unknown>, idempotencyKey?: string): Promise<Record<string, unknown>>;
  close(): Promise<void>;
}

/** The one text item of a tool result. */
export function resultText(result: CallToolResult): string {
  const [item] = result.content;
  if (result.content.length !== 1 || item?.type !== 'text') {
    throw new Error(`expected one text item, got ${JSON.stringify(result.content)}`);
  }
  return item.text;
}

/**
 * Starts a harness. `daemon: false` builds a container without any `DaemonPort` (hosted only);
 * `server` overrides options of the child server.
 */
export async function startChildServerTestHarness(
  options: { readonly daemon?: FakeDaemonPortOptions | false; readonly server?: Partial<ChildServerOptions> } = {},
): Promise<ChildServerTestHarness> {
  const cwd = realpathSync(mkdtempSync(join(tmpdir(), 'nteract-child-server-')));
  mkdirSync(join(cwd, 'subdir'));
  const logger = new RecordingLogger();
  const daemon =
    options.daemon === false ? undefined : new FakeDaemonPort({ executor: testExecutor, ...options.daemon });
  const builder = createTestContainer({ plugins: [testTargetKindsPlugin] }).override(Logger, logger);
  if (daemon) builder.override(DaemonPort, daemon);
  const container = builder.build();
  const child = createChildMcpServer(container, {
    version: '0.0.0-test',
    cwd,
    agentSession: testAgentSession,
    ...options.server,
  });
  const client = new Client(testClientInfo);
  let listChanges = 0;
  client.setNotificationHandler(ResourceListChangedNotificationSchema, () => {
    listChanges += 1;
  });
  const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
  await child.server.connect(serverTransport);
  await client.connect(clientTransport);

  const call: ChildServerTestHarness['call'] = async (name, args = {}, callOptions = {}) => {
    const result = await client.callTool(
      {
        name,
        arguments: args,
        ...(callOptions.idempotencyKey !== undefined
          ? { _meta: { [idempotencyMetaKey]: callOptions.idempotencyKey } }
          : {}),
      },
      CallToolResultSchema,
      callOptions.onProgress ? { onprogress: callOptions.onProgress } : undefined,
    );
    return result as CallToolResult;
  };

  return {
    child,
    client,
    container,
    daemon,
    slot: container.get(SessionSlot),
    logger,
    cwd,
    resourceListChanges: () => listChanges,
    call,
    callJson: async (name, args, idempotencyKey) => {
      const result = await call(name, args, { idempotencyKey });
      const text = resultText(result);
      if (result.isError) throw new Error(`${name} failed: ${text}`);
      return JSON.parse(text) as Record<string, unknown>;
    },
    close: async () => {
      await client.close();
      await child.close();
      rmSync(cwd, { recursive: true, force: true });
    },
  };
}

/** The rejection of a call, which must be a JSON-RPC invalid-params error; its text without the client's prefix. */
export async function invalidParams(call: Promise<unknown>): Promise<string> {
  const error = await call.then(
    () => undefined,
    (rejection: unknown) => rejection,
  );
  expect(error).toBeInstanceOf(McpError);
  expect((error as McpError).code).toBe(ErrorCode.InvalidParams);
  return (error as McpError).message.replace(/^MCP error -32602: /, '');
}

/** The text of a tool-level failure (`isError: true`). */
export async function toolError(call: Promise<{ isError?: boolean; content: unknown[] }>): Promise<string> {
  const result = await call;
  expect(result.isError).toBe(true);
  return resultText(result as Parameters<typeof resultText>[0]);
}
