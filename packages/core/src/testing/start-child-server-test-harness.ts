import { mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import {
  type CallToolResult,
  CallToolResultSchema,
  type ClientCapabilities,
  ErrorCode,
  McpError,
  type Progress,
  ResourceListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { notebookIdPattern } from '@nteract-mcp/foundation';
import { RecordingLogger } from '@nteract-mcp/foundation/testing';
import { type Container, ContainerModule } from 'inversify';
import {
  type ChildMcpServer,
  type ChildServerOptions,
  createChildMcpServer,
} from '../child-server/create-child-mcp-server.js';
import { NotebookBackend } from '../contributions/notebook-backend.js';
import { definePlugin, type McpPlugin } from '../di/mcp-plugin.js';
import { CoreError } from '../errors/core-error.js';
import { idempotencyMetaKey } from '../handoff/handoff-contract.js';
import {
  firstPartyIdentities,
  type LocalPathTarget,
  type NotebookIdTarget,
} from '../notebook-target/notebook-target.js';
import { Clock } from '../ports/clock.js';
import { DaemonPort, readDaemonStatus } from '../ports/daemon-port.js';
import { Logger } from '../ports/logger.js';
import type { CellOutput, NotebookCell } from '../ports/notebook-handle.js';
import { SessionSlot } from '../session/session-slot.js';
import { createTestContainer } from './create-test-container.js';
import { FakeDaemonPort, type FakeDaemonPortOptions } from './fake-daemon-port.js';
import { FakeNotebookBackend } from './fake-notebook-backend.js';
import type { FakeExecutor, FakeNotebookHandle } from './fake-notebook-handle.js';

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
  // A silent cell that runs until the test completes it or the call cancels it.
  if (cell.source.startsWith('hold')) return { status: 'held', outputs: [] };
  const printed: CellOutput = { output_type: 'stream', name: 'stdout', text: `out: ${cell.source}\n` };
  return { status: cell.source.startsWith('sleep') ? 'running' : 'ok', outputs: [printed] };
};

/**
 * Stand-ins for the local daemon plugin's two backends over `daemon` (core cannot import plugins):
 * `path` resolves against the cwd and must name a `.ipynb` file; `notebook_id` must be a UUID and
 * creates and lists notebooks. Their refusals are the harness's own texts, not the plugin's.
 */
export function fakeLocalBackendsPlugin(daemon: FakeDaemonPort): McpPlugin {
  const path = new FakeNotebookBackend({
    id: 'test.local-path',
    kind: 'local-path',
    argument: 'path',
    identity: firstPartyIdentities['local-path'],
    recognizes: (raw) => !notebookIdPattern.test(raw) && !/^[a-z][a-z0-9+.-]+:/i.test(raw),
    parse: (raw, context) => {
      const absolute = resolve(context.cwd, raw.trim());
      if (!absolute.endsWith('.ipynb'))
        throw new CoreError('invalidTarget', `'${absolute}' is not a notebook file: give the path of a .ipynb file.`);
      return { kind: 'local-path', path: absolute, existed: true };
    },
    connect: (target, { peerLabel }) => daemon.openNotebook((target as LocalPathTarget).path, { peerLabel }),
  });
  const id = new FakeNotebookBackend({
    id: 'test.notebook-id',
    kind: 'notebook-id',
    argument: 'notebook_id',
    identity: firstPartyIdentities['notebook-id'],
    recognizes: (raw) => notebookIdPattern.test(raw),
    parse: (raw) => {
      if (!notebookIdPattern.test(raw.trim())) throw new CoreError('invalidTarget', `'${raw}' is not a UUID`);
      return { kind: 'notebook-id', notebookId: raw.trim().toLowerCase() };
    },
    connect: (target, { peerLabel }) => daemon.attachNotebook((target as NotebookIdTarget).notebookId, { peerLabel }),
    create: async (request, { peerLabel }) => {
      const handle = await daemon.createNotebook({ ...request, peerLabel });
      return { handle, target: { kind: 'notebook-id', notebookId: handle.notebookId } };
    },
    list: () => daemon.listRooms(),
    listKernels: () => daemon.listKernels(),
    status: { section: 'daemon', read: () => readDaemonStatus(daemon) },
  });
  return definePlugin({
    id: 'test.local-backends',
    module: new ContainerModule(({ bind }) => {
      bind(NotebookBackend).toConstantValue(path);
      bind(NotebookBackend).toConstantValue(id);
    }),
  });
}

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
    options?: {
      readonly idempotencyKey?: string;
      readonly onProgress?: (progress: Progress) => void;
      /** Aborting it cancels the call (`notifications/cancelled`). */
      readonly signal?: AbortSignal;
    },
  ): Promise<CallToolResult>;
  /** Calls a tool that must succeed and parses its JSON text. */
  callJson(name: string, args?: Record<string, unknown>, idempotencyKey?: string): Promise<Record<string, unknown>>;
  /** `create_notebook` (it becomes the active one); resolves with the fake daemon's handle of it. */
  createNotebook(): Promise<FakeNotebookHandle>;
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

/** Options of {@link startChildServerTestHarness}. */
export interface ChildServerTestHarnessOptions {
  /** The fake daemon's options; `false` builds a container without any `DaemonPort` (and no local backends). */
  readonly daemon?: FakeDaemonPortOptions | false;
  /**
   * Whether the stand-in local backends ({@link fakeLocalBackendsPlugin}) are loaded (default: when
   * there is a daemon). Turn them off to test a plugin's real backends over the fake daemon.
   */
  readonly fakeLocalBackends?: boolean;
  /** More plugins, after the stand-ins (a plugin under test, a third-party kind). */
  readonly plugins?: readonly McpPlugin[];
  /** Options of the child server. */
  readonly server?: Partial<ChildServerOptions>;
  /** The container's clock (default: the test container's), e.g. a `ManualClock` to drive timers. */
  readonly clock?: Clock;
  /** The capabilities the client declares in `initialize` (e.g. `{ elicitation: { url: {} } }`); default none. */
  readonly clientCapabilities?: ClientCapabilities;
  /**
   * Protocol eras to connect the server behind (`child.connect`, as the shipped child is), e.g. one
   * whose dialect sends no requests. Default: none, the SDK server connected as it is (it does the
   * `initialize` handshake itself and speaks core's `sdkDialect`).
   */
  readonly eras?: readonly McpPlugin[];
}

/** Starts a harness: a real container (core, the stand-in local backends, `plugins`) over a fake daemon. */
export async function startChildServerTestHarness(
  options: ChildServerTestHarnessOptions = {},
): Promise<ChildServerTestHarness> {
  const cwd = realpathSync(mkdtempSync(join(tmpdir(), 'nteract-child-server-')));
  mkdirSync(join(cwd, 'subdir'));
  const logger = new RecordingLogger();
  const daemon =
    options.daemon === false ? undefined : new FakeDaemonPort({ executor: testExecutor, ...options.daemon });
  const fakes = daemon && (options.fakeLocalBackends ?? true) ? [fakeLocalBackendsPlugin(daemon)] : [];
  const eras = options.eras ?? [];
  const gated = eras.length > 0;
  const builder = createTestContainer({ plugins: [...eras, ...fakes, ...(options.plugins ?? [])] }).override(
    Logger,
    logger,
  );
  if (daemon) builder.override(DaemonPort, daemon);
  if (options.clock) builder.override(Clock, options.clock);
  const container = builder.build();
  const child = createChildMcpServer(container, {
    version: '0.0.0-test',
    cwd,
    agentSession: testAgentSession,
    ...options.server,
  });
  const client = new Client(
    testClientInfo,
    options.clientCapabilities === undefined ? undefined : { capabilities: options.clientCapabilities },
  );
  let listChanges = 0;
  client.setNotificationHandler(ResourceListChangedNotificationSchema, () => {
    listChanges += 1;
  });
  const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
  await (gated ? child.connect(serverTransport) : child.server.connect(serverTransport));
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
      callOptions.onProgress || callOptions.signal
        ? {
            ...(callOptions.onProgress ? { onprogress: callOptions.onProgress } : {}),
            ...(callOptions.signal ? { signal: callOptions.signal } : {}),
          }
        : undefined,
    );
    return result as CallToolResult;
  };
  const callJson: ChildServerTestHarness['callJson'] = async (name, args, idempotencyKey) => {
    const result = await call(name, args, { idempotencyKey });
    const text = resultText(result);
    if (result.isError) throw new Error(`${name} failed: ${text}`);
    return JSON.parse(text) as Record<string, unknown>;
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
    callJson,
    createNotebook: async () => {
      await callJson('create_notebook');
      const handle = daemon?.handles.at(-1);
      if (handle === undefined) throw new Error('create_notebook opened no notebook on the fake daemon');
      return handle;
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
  if (!(error instanceof McpError) || error.code !== ErrorCode.InvalidParams) {
    throw new Error(
      `expected a JSON-RPC invalid-params error, got ${error === undefined ? 'a result' : String(error)}`,
    );
  }
  return error.message.replace(/^MCP error -32602: /, '');
}

/** The text of a tool-level failure (`isError: true`). */
export async function toolError(call: Promise<{ isError?: boolean; content: unknown[] }>): Promise<string> {
  const result = await call;
  const text = resultText(result as Parameters<typeof resultText>[0]);
  if (result.isError !== true) throw new Error(`expected a tool error, got a result: ${text}`);
  return text;
}
