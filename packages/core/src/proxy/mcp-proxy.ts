import { randomUUID } from 'node:crypto';
import type { Readable, Writable } from 'node:stream';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { idempotencyMetaKey } from '../child-server/child-tool-registry.js';
import { defaultMaxUpstreamMessageBytes } from '../contract/mcp-message-limits.js';
import { CoreError } from '../errors/core-error.js';
import type { ChildProcessHandle, ChildSpawnSpec } from '../ports/child-process-port.js';
import type { Clock } from '../ports/clock.js';
import type { Logger } from '../ports/logger.js';
import { answerTooLargeMessage } from './answer-too-large-message.js';
import type { ChildSupervisor } from './child-supervisor.js';
import {
  type JsonRpcId,
  JsonRpcLineFramer,
  type JsonRpcMessage,
  type JsonRpcRequest,
  serializeJsonRpcLine,
} from './json-rpc-line-framer.js';
import type { RejoinTargetTracker } from './rejoin-target-tracker.js';
import { reconnectToolName, type ToolListCache, toolListChangedIncompatiblyMessage } from './tool-list-cache.js';
import { BannerQueue, daemonVersionFromTitle, restartBanner } from './version-banner.js';

/** JSON-RPC code of the proxy's own errors (restart budget exhausted, outcome unknown, …). */
export const proxyErrorCode = -32000;

/** Methods safe to send again after the child died with them unanswered: they change nothing. */
const readMethods: ReadonlySet<string> = new Set([
  'tools/list',
  'resources/list',
  'resources/read',
  'resources/templates/list',
  'prompts/list',
  'prompts/get',
  'completion/complete',
]);

/** Legacy protocol versions the proxy accepts in `initialize`, newest first. */
const legacyVersions = ['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05'];

export interface McpProxyOptions {
  readonly input: Readable;
  readonly output: Writable;
  readonly supervisor: ChildSupervisor;
  readonly tracker: RejoinTargetTracker;
  readonly tools: ToolListCache;
  readonly clock: Clock;
  readonly logger: Logger;
  /** The child command, resolved again for every spawn. */
  readonly resolveChild: () => Omit<ChildSpawnSpec, 'env'> & {
    readonly env: Readonly<Record<string, string | undefined>>;
  };
  readonly version: string;
  /** Largest upstream line accepted (default 16 MiB); a longer one gets an error and is skipped. */
  readonly maxLineBytes?: number;
  /**
   * Largest line written to the client (default 10 MiB minus 256 KiB, under the MCP SDK's 10 MiB
   * read buffer); a longer answer is replaced by an error answer to the same id.
   */
  readonly maxUpstreamMessageBytes?: number;
  /** How long a request waits for a child that is (re)starting. Default 60 s. */
  readonly childWaitMs?: number;
  /** Called when the proxy is done (upstream closed, or an incompatible tool list after an upgrade). */
  readonly onExit: (code: number) => void;
}

interface Pending {
  readonly upstreamId: JsonRpcId;
  readonly request: JsonRpcRequest;
  readonly toolName: string | undefined;
  /** The child connection it was written to, and its id there. */
  sentTo: ChildLink | undefined;
  childId: number | undefined;
  resent: boolean;
  timer: { cancel(): void } | undefined;
}

interface ChildLink {
  readonly handle: ChildProcessHandle;
  ready: boolean;
  daemonVersion: string | undefined;
  readonly internal: Map<number, (message: JsonRpcMessage) => void>;
  /** Requests the child sent us (server→client), by the id we gave them upstream. */
  readonly fromChild: Map<string, JsonRpcId>;
}

/**
 * The stdio MCP proxy: speaks MCP upstream with its own line framing and handshake, supervises the
 * child MCP server, and forwards everything both ways with ids kept unique across child restarts.
 *
 * Guarantees: stdout carries protocol lines only; the upstream sees exactly one handshake (the
 * captured `initialize` is replayed to every new child first); every upstream request gets exactly
 * one answer — after a child death an unsent request is sent to the next child, a sent one is sent
 * again once only when it is a read, a read-only/idempotent tool, or a tool that honours the
 * idempotency key the proxy stamps; otherwise it is answered "outcome unknown", naming the tool.
 * Does not guarantee exactly-once for tools that neither honour keys nor declare idempotency.
 */
export class McpProxy {
  readonly #options: McpProxyOptions;
  readonly #framer: JsonRpcLineFramer;
  readonly #pending = new Map<string, Pending>();
  readonly #banner = new BannerQueue();
  #initialize: JsonRpcRequest | undefined;
  #initialized = false;
  #child: ChildLink | undefined;
  #nextChildId = 1;
  #previousDaemonVersion: string | undefined;
  #incompatible = false;
  #closed = false;

  public constructor(options: McpProxyOptions) {
    this.#options = options;
    this.#framer = new JsonRpcLineFramer(
      options.maxLineBytes === undefined ? {} : { maxLineBytes: options.maxLineBytes },
    );
  }

  /** Starts reading upstream; the child is spawned once the upstream sent `notifications/initialized`. */
  public async start(): Promise<void> {
    const { input, supervisor } = this.#options;
    await this.#options.tools.load();
    supervisor.onDidSpawn((handle, info) => this.attachChild(handle, info.restartCount));
    supervisor.onDidExit((event) => this.childExited(event.decision.kind, event.exitClass));
    supervisor.onDidRefuse((refusal) => this.failAll(refusal.reason));
    input.on('data', (chunk: Buffer) => {
      for (const frame of this.#framer.push(chunk)) {
        if (frame.kind === 'error') this.upstream(frame.response);
        else this.fromUpstream(frame.message);
      }
    });
    input.on('end', () => void this.close(0));
  }

  /** Stops the child and answers what is still pending. Idempotent. */
  public async close(code: number): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    for (const pending of this.#pending.values()) {
      pending.timer?.cancel();
      this.reply(pending, undefined, { code: proxyErrorCode, message: 'The nteract MCP proxy is shutting down.' });
    }
    this.#pending.clear();
    await this.#options.supervisor.stop().catch(() => undefined);
    this.#options.onExit(code);
  }

  private fromUpstream(message: JsonRpcMessage): void {
    if ('method' in message && 'id' in message) {
      this.upstreamRequest(message as JsonRpcRequest);
      return;
    }
    if ('method' in message) {
      this.upstreamNotification(message);
      return;
    }
    // A response: the upstream answering a request the child made.
    const link = this.#child;
    const key = String((message as { id: JsonRpcId }).id);
    const childId = link?.fromChild.get(key);
    if (link && childId !== undefined) {
      link.fromChild.delete(key);
      this.toChild(link, { ...message, id: childId } as JsonRpcMessage);
    }
  }

  private upstreamNotification(message: JsonRpcMessage & { method: string }): void {
    if (message.method === 'notifications/initialized') {
      if (!this.#initialized && this.#initialize) {
        this.#initialized = true;
        void this.#options.supervisor
          .start(() => this.spawnSpec())
          .catch((error: unknown) => this.#options.logger.error('the child did not start', { error }));
      }
      return;
    }
    if (message.method === 'notifications/cancelled') {
      const requestId = (message as { params?: { requestId?: JsonRpcId } }).params?.requestId;
      const pending = requestId === undefined ? undefined : this.#pending.get(String(requestId));
      if (pending) {
        this.#pending.delete(String(requestId));
        pending.timer?.cancel();
        if (pending.sentTo && pending.childId !== undefined) {
          this.toChild(pending.sentTo, {
            ...message,
            params: { ...(message as { params?: object }).params, requestId: pending.childId },
          } as JsonRpcMessage);
        }
      }
      return;
    }
    if (this.#child?.ready) this.toChild(this.#child, message);
  }

  private upstreamRequest(request: JsonRpcRequest): void {
    if (request.method === 'initialize') {
      this.answerInitialize(request);
      return;
    }
    if (request.method === 'ping') {
      this.upstream({ jsonrpc: '2.0', id: request.id, result: {} });
      return;
    }
    if (!this.#initialize) {
      this.upstream({
        jsonrpc: '2.0',
        id: request.id,
        error: { code: -32600, message: 'Send initialize first.' },
      });
      return;
    }
    if (request.method === 'tools/list' && !this.#child?.ready) {
      this.upstream({
        jsonrpc: '2.0',
        id: request.id,
        result: { tools: this.#options.tools.withReconnect(this.#options.tools.current()) },
      });
      return;
    }
    const params = (request.params ?? {}) as { name?: unknown; _meta?: Record<string, unknown> };
    const toolName = request.method === 'tools/call' && typeof params.name === 'string' ? params.name : undefined;
    if (toolName === reconnectToolName) {
      void this.reconnect(request);
      return;
    }
    if (toolName !== undefined && this.#incompatible) {
      this.upstream({
        jsonrpc: '2.0',
        id: request.id,
        error: { code: proxyErrorCode, message: toolListChangedIncompatiblyMessage },
      });
      return;
    }
    const stamped: JsonRpcRequest =
      toolName === undefined || typeof params._meta?.[idempotencyMetaKey] === 'string'
        ? request
        : { ...request, params: { ...params, _meta: { ...params._meta, [idempotencyMetaKey]: randomUUID() } } };
    const pending: Pending = {
      upstreamId: request.id,
      request: stamped,
      toolName,
      sentTo: undefined,
      childId: undefined,
      resent: false,
      timer: undefined,
    };
    this.#pending.set(String(request.id), pending);
    if (this.#child?.ready) this.send(pending, this.#child);
    else this.waitForChild(pending);
  }

  private answerInitialize(request: JsonRpcRequest): void {
    const params = (request.params ?? {}) as { protocolVersion?: unknown; clientInfo?: unknown };
    if (this.#initialize) {
      this.upstream({
        jsonrpc: '2.0',
        id: request.id,
        error: { code: -32600, message: 'Already initialized.' },
      });
      return;
    }
    this.#initialize = request;
    this.#options.tracker.observeClientInfo(params.clientInfo);
    const requested = typeof params.protocolVersion === 'string' ? params.protocolVersion : '';
    this.upstream({
      jsonrpc: '2.0',
      id: request.id,
      result: {
        protocolVersion: legacyVersions.includes(requested) ? requested : legacyVersions[0],
        capabilities: { tools: { listChanged: true }, resources: { listChanged: true } },
        serverInfo: { name: 'nteract', version: this.#options.version },
        instructions:
          'nteract MCP server for Jupyter notebooks. Use list_active_notebooks, connect_notebook or create_notebook to choose the active notebook; the server keeps it across restarts. If tools misbehave, call reconnect.',
      },
    });
  }

  private spawnSpec(): ChildSpawnSpec {
    const base = this.#options.resolveChild();
    const restart =
      this.#options.supervisor.status().restartCount > 0 ||
      this.#child !== undefined ||
      this.#previousDaemonVersion !== undefined;
    return {
      ...base,
      env: {
        ...base.env,
        ...this.#options.tracker.childEnvironment({ restart }),
        NTERACT_MCP_PEER_LABEL: this.#options.tracker.peerLabel(),
      },
    };
  }

  private attachChild(handle: ChildProcessHandle, restartCount: number): void {
    const link: ChildLink = {
      handle,
      ready: false,
      daemonVersion: undefined,
      internal: new Map(),
      fromChild: new Map(),
    };
    this.#child = link;
    const framer = new JsonRpcLineFramer();
    handle.stdout.on('data', (chunk: Buffer) => {
      for (const frame of framer.push(chunk)) {
        if (frame.kind === 'message') this.fromChild(link, frame.message);
        else if (frame.reason === 'line-too-long' && frame.response.id !== null) {
          // An answer too large to carry: its request gets an error answer instead of silence.
          this.#options.logger.warn('the child wrote an answer over the line limit', { id: frame.response.id });
          this.fromChild(link, {
            jsonrpc: '2.0',
            id: frame.response.id,
            error: {
              code: proxyErrorCode,
              message: answerTooLargeMessage({ limit: framer.maxLineBytes, stage: 'child' }),
            },
          });
        } else this.#options.logger.warn('the child wrote a line that is not JSON-RPC', { reason: frame.reason });
      }
    });
    handle.stdin.on('error', () => undefined);
    void this.handshake(link, restartCount);
  }

  private async handshake(link: ChildLink, restartCount: number): Promise<void> {
    const init = this.#initialize as JsonRpcRequest;
    const answer = await this.internalRequest(link, 'initialize', init.params);
    const title = (answer as { result?: { serverInfo?: { title?: string } } }).result?.serverInfo?.title;
    link.daemonVersion = daemonVersionFromTitle(title);
    this.toChild(link, { jsonrpc: '2.0', method: 'notifications/initialized' });
    link.ready = true;
    if (restartCount > 0) {
      this.#banner.queue(
        restartBanner({
          previousVersion: this.#previousDaemonVersion,
          newVersion: link.daemonVersion,
          handedOff: this.#options.tracker.current() !== undefined,
        }),
      );
    }
    this.#previousDaemonVersion = link.daemonVersion ?? this.#previousDaemonVersion;
    // The tool list first: after an upgrade that removed tools, pending calls get that answer.
    const tools = await this.fetchTools(link);
    if (this.#child !== link) return;
    if (tools && this.removedTools(tools).length > 0) {
      this.incompatibleToolList(this.removedTools(tools));
      return;
    }
    for (const pending of [...this.#pending.values()]) this.redeliver(pending, link);
    if (tools) await this.publishTools(tools);
  }

  private async fetchTools(link: ChildLink): Promise<Tool[] | undefined> {
    const answer = await this.internalRequest(link, 'tools/list', {});
    const tools = (answer as { result?: { tools?: Tool[] } }).result?.tools;
    return tools && tools.length > 0 ? tools : undefined;
  }

  /** Names served before (from a live or cached list, not the built-in one) that `tools` lacks. */
  private removedTools(tools: readonly Tool[]): string[] {
    if (this.#options.tools.source() === 'built-in') return [];
    const live = new Set(tools.map((tool) => tool.name));
    return this.#options.tools
      .current()
      .map((tool) => tool.name)
      .filter((name) => !live.has(name));
  }

  private incompatibleToolList(removed: readonly string[]): void {
    this.#options.logger.error('tools were removed or renamed by an upgrade; exiting so the client reconnects', {
      removed,
    });
    this.#incompatible = true;
    for (const pending of [...this.#pending.values()]) {
      if (pending.toolName !== undefined)
        this.reply(pending, undefined, { code: proxyErrorCode, message: toolListChangedIncompatiblyMessage });
    }
    this.#options.clock.setTimer(200, () => void this.close(0));
  }

  private async publishTools(tools: readonly Tool[]): Promise<void> {
    const update = await this.#options.tools.update(tools);
    if (update.changed) this.upstream({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' });
  }

  private async refreshTools(link: ChildLink): Promise<void> {
    const tools = await this.fetchTools(link);
    if (!tools || this.#child !== link) return;
    const removed = this.removedTools(tools);
    if (removed.length > 0) this.incompatibleToolList(removed);
    else await this.publishTools(tools);
  }

  private internalRequest(link: ChildLink, method: string, params: unknown): Promise<JsonRpcMessage> {
    const id = this.#nextChildId++;
    return new Promise((resolve) => {
      link.internal.set(id, resolve);
      this.toChild(link, { jsonrpc: '2.0', id, method, ...(params === undefined ? {} : { params }) } as JsonRpcMessage);
    });
  }

  private fromChild(link: ChildLink, message: JsonRpcMessage): void {
    if ('method' in message) {
      if ('id' in message) {
        // A request of the child to the client: give it an upstream id of ours.
        const upstreamId = `child-${randomUUID()}`;
        link.fromChild.set(upstreamId, (message as JsonRpcRequest).id);
        this.upstream({ ...message, id: upstreamId } as JsonRpcMessage);
      } else if (message.method !== 'notifications/tools/list_changed') {
        this.upstream(message);
      } else {
        void this.refreshTools(link);
      }
      return;
    }
    const id = (message as { id: JsonRpcId }).id;
    const internal = typeof id === 'number' ? link.internal.get(id) : undefined;
    if (internal) {
      link.internal.delete(id as number);
      internal(message);
      return;
    }
    const pending = [...this.#pending.values()].find(
      (candidate) => candidate.sentTo === link && candidate.childId === id,
    );
    if (!pending) return;
    if ('error' in message) {
      this.reply(pending, undefined, message.error);
      return;
    }
    let result = (message as { result: Record<string, unknown> }).result;
    if (pending.toolName !== undefined) {
      this.#options.tracker.observeToolResult(
        pending.toolName,
        (pending.request.params as { arguments?: unknown })?.arguments,
        result,
      );
      if (pending.toolName === 'session_status') result = this.withProxyStatus(result);
      result = this.#banner.prependTo(result);
    }
    if (pending.request.method === 'tools/list') {
      result = { ...result, tools: this.#options.tools.withReconnect((result.tools as Tool[]) ?? []) };
    }
    this.reply(pending, result, undefined);
  }

  private withProxyStatus(result: Record<string, unknown>): Record<string, unknown> {
    const content = result.content as { type: string; text: string }[] | undefined;
    const first = content?.[0];
    if (first?.type !== 'text') return result;
    try {
      const status = JSON.parse(first.text) as Record<string, unknown>;
      const supervision = this.#options.supervisor.status();
      status.proxy = {
        restart_count: supervision.restartCount,
        budget_left: supervision.budgetLeft,
        last_exit_class: supervision.lastExitClass ?? null,
        breaker: supervision.breaker,
        child_pid: supervision.pid ?? null,
        handoff_target: this.#options.tracker.current() ?? null,
      };
      return {
        ...result,
        content: [{ type: 'text', text: JSON.stringify(status, null, 2) }, ...(content?.slice(1) ?? [])],
      };
    } catch {
      return result;
    }
  }

  private childExited(decision: string, exitClass: string): void {
    const link = this.#child;
    this.#child = undefined;
    if (link)
      for (const resolve of link.internal.values())
        resolve({ jsonrpc: '2.0', id: 0, error: { code: proxyErrorCode, message: 'child exited' } });
    this.#options.logger.info('the child exited', { exitClass, decision });
    if (decision === 'stop') this.failAll('The nteract MCP server stopped.');
    for (const pending of [...this.#pending.values()]) if (!pending.timer) this.waitForChild(pending);
  }

  /** After a child death: send again, or answer "outcome unknown". */
  private redeliver(pending: Pending, link: ChildLink): void {
    pending.timer?.cancel();
    pending.timer = undefined;
    if (pending.sentTo === link) return;
    if (pending.sentTo !== undefined) {
      if (pending.resent || !this.safeToResend(pending)) {
        const what = pending.toolName !== undefined ? `the tool '${pending.toolName}'` : `'${pending.request.method}'`;
        this.reply(pending, undefined, {
          code: proxyErrorCode,
          message: `The MCP server restarted while ${what} was running; it may or may not have taken effect. Check the notebook before retrying.`,
          data: { kind: 'outcome_unknown', tool: pending.toolName ?? null },
        });
        return;
      }
      pending.resent = true;
    }
    this.send(pending, link);
  }

  private safeToResend(pending: Pending): boolean {
    if (pending.toolName === undefined) return readMethods.has(pending.request.method);
    const tool = this.#options.tools.current().find((candidate) => candidate.name === pending.toolName);
    if (!tool) return false;
    if (tool.annotations?.readOnlyHint === true || tool.annotations?.idempotentHint === true) return true;
    return (tool._meta as Record<string, unknown> | undefined)?.[idempotencyMetaKey] === 'honored';
  }

  private waitForChild(pending: Pending): void {
    pending.timer?.cancel();
    pending.timer = this.#options.clock.setTimer(this.#options.childWaitMs ?? 60_000, () => {
      pending.timer = undefined;
      this.reply(pending, undefined, {
        code: proxyErrorCode,
        message: 'The nteract MCP server is not running (it did not come back in time). Call reconnect to try again.',
      });
    });
    const decision = this.#options.supervisor.status();
    if (decision.breaker === 'open') {
      void this.#options.supervisor.waitForChild(0).catch((error: unknown) => {
        this.reply(pending, undefined, {
          code: proxyErrorCode,
          message: CoreError.is(error) ? error.message : String(error),
        });
      });
    }
  }

  private failAll(reason: string): void {
    for (const pending of [...this.#pending.values()])
      this.reply(pending, undefined, { code: proxyErrorCode, message: reason });
  }

  private async reconnect(request: JsonRpcRequest): Promise<void> {
    const before = this.#options.supervisor.status().restartCount;
    try {
      await this.#options.supervisor.restart('the reconnect tool');
      const deadline = this.#options.clock.now() + 30_000;
      while (!this.#child?.ready && this.#options.clock.now() < deadline)
        await new Promise((resolve) => setTimeout(resolve, 20));
      const banner = this.#banner.take() ?? 'Child restarted.';
      const after = this.#options.supervisor.status().restartCount;
      this.upstream({
        jsonrpc: '2.0',
        id: request.id,
        result: { content: [{ type: 'text', text: `${banner}\n\nRestart #${after} (was #${before}).` }] },
      });
    } catch (error) {
      this.upstream({
        jsonrpc: '2.0',
        id: request.id,
        error: { code: -32603, message: `Child restart failed: ${(error as Error).message}` },
      });
    }
  }

  private send(pending: Pending, link: ChildLink): void {
    if (!link.handle.stdin.writable) {
      // The child is already gone: the write would not reach it, so the request stays unsent.
      this.waitForChild(pending);
      return;
    }
    pending.sentTo = link;
    pending.childId = this.#nextChildId++;
    this.toChild(link, { ...pending.request, id: pending.childId });
  }

  private reply(
    pending: Pending,
    result: unknown,
    error: { code: number; message: string; data?: unknown } | undefined,
  ): void {
    if (this.#pending.get(String(pending.upstreamId)) !== pending) return;
    this.#pending.delete(String(pending.upstreamId));
    pending.timer?.cancel();
    this.upstream(
      error
        ? { jsonrpc: '2.0', id: pending.upstreamId, error }
        : ({ jsonrpc: '2.0', id: pending.upstreamId, result } as JsonRpcMessage),
    );
  }

  private toChild(link: ChildLink, message: JsonRpcMessage): void {
    if (!link.handle.stdin.writable) return;
    link.handle.stdin.write(serializeJsonRpcLine(message));
  }

  /**
   * Writes one message to the client. A line over the client's limit is never written: a response
   * becomes an error answer to the same id, anything else is dropped and logged.
   */
  private upstream(message: JsonRpcMessage): void {
    if (!this.#options.output.writable) return;
    const line = serializeJsonRpcLine(message);
    const limit = this.#options.maxUpstreamMessageBytes ?? defaultMaxUpstreamMessageBytes;
    const bytes = line.length * 3 <= limit ? line.length : Buffer.byteLength(line);
    if (bytes <= limit) {
      this.#options.output.write(line);
      return;
    }
    if ('method' in message || !('id' in message) || message.id === null) {
      this.#options.logger.warn('dropped a message to the client over the size limit', { bytes, limit });
      return;
    }
    this.#options.logger.warn('replaced an answer over the client size limit by an error', { bytes, limit });
    this.#options.output.write(
      serializeJsonRpcLine({
        jsonrpc: '2.0',
        id: message.id,
        error: { code: proxyErrorCode, message: answerTooLargeMessage({ bytes, limit, stage: 'client' }) },
      }),
    );
  }
}
