import { randomBytes } from 'node:crypto';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  type CallToolRequest,
  CallToolRequestSchema,
  type CallToolResult,
  ElicitResultSchema,
  ErrorCode,
  InitializedNotificationSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  type ServerNotification,
  type ServerRequest,
  SubscribeRequestSchema,
  type Tool,
  UnsubscribeRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import type { jsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/types.js';
import { randomHex } from '@nteract-mcp/foundation';
import type { Container } from 'inversify';
import { NotebookTargetResolver } from '../contributions/notebook-target-resolver.js';
import { type ClientIdentity, ProtocolAdmission, type ServerDescription } from '../contributions/protocol-admission.js';
import { ProtocolEraGate } from '../contributions/protocol-era-gate.js';
import { ContributionProvider } from '../di/contribution-provider.js';
import { formatPeerLabel } from '../handoff/format-peer-label.js';
import {
  formatServerTitle,
  honorsIdempotency,
  idempotencyMetaKey,
  restoredSubscriptionMetaKey,
} from '../handoff/handoff-contract.js';
import { defaultToolResultBudgetBytes } from '../handoff/mcp-message-limits.js';
import { withSessionReport } from '../handoff/session-report.js';
import { requestIdKey } from '../json-rpc/request-id-key.js';
import { describeNotebookTarget } from '../notebook-target/notebook-target.js';
import { Clock } from '../ports/clock.js';
import { Logger } from '../ports/logger.js';
import type { NotebookSession } from '../session/notebook-session.js';
import { SessionActivation } from '../session/session-activation.js';
import { SessionRecoveryState } from '../session/session-recovery-state.js';
import { SessionSlot } from '../session/session-slot.js';
import { childServerCapabilities } from './child-server-capabilities.js';
import type { ChildServerDependencies } from './child-server-dependencies.js';
import { ChildToolContribution } from './child-tool-contribution.js';
import { ChildToolRegistry, errorResult, type ToolCallContext } from './child-tool-registry.js';
import { ClientCancellations } from './client-cancellations.js';
import { coalesceProgress } from './coalesce-progress.js';
import { createChangeTools } from './create-change-tools.js';
import { createEditTools } from './create-edit-tools.js';
import { createKernelTools } from './create-kernel-tools.js';
import { createNotebookTools } from './create-notebook-tools.js';
import { createRestoreTools } from './create-restore-tools.js';
import { createSessionTools } from './create-session-tools.js';
import { EraGatedTransport } from './era-gated-transport.js';
import { ExecutionStore } from './execution-store.js';
import { ExecutionTasks, relatedTaskMetaKey, taskTools } from './execution-tasks.js';
import { InputRounds } from './input-rounds.js';
import { KernelHistory } from './kernel-history.js';
import { inputElicitation, KernelInputs, lineOf } from './kernel-inputs.js';
import { NotebookResources, parseNotebookResourceUri } from './notebook-resources.js';
import { PeerAwareness } from './peer-awareness.js';
import { PersonConfirmations, withNote } from './person-confirmations.js';
import { registerTaskHandlers } from './register-task-handlers.js';
import { ResourceSubscriptions } from './resource-subscriptions.js';
import { SessionNews, withSessionNews } from './session-news.js';
import { UnsettledCalls } from './unsettled-calls.js';

/** How the child server presents itself and where it resolves paths. */
export interface ChildServerOptions {
  /** `serverInfo.version`. */
  readonly version: string;
  /** When set, `serverInfo.title` is `nteract (daemon <daemonVersion>)` (the proxy reads it). */
  readonly daemonVersion?: string;
  /** Relative paths and the default `working_dir` resolve against it (absolute). */
  readonly cwd: string;
  /** The `<session>` of the peer label's `agent:<slug>:<session>` suffix; random 8 hex digits when absent. */
  readonly agentSession?: string;
  /** Where the previous child's change notes stood: `<notebook id> <cursor>` (the handoff's). */
  readonly changeCursor?: string;
  /** The serialized size no tool result exceeds (default 8 MiB, under the client's 10 MiB buffer). */
  readonly resultBudgetBytes?: number;
  /**
   * How long a tool that works on the active session waits, when called while a lost session is
   * being brought back (a daemon start or a rejoin running), before it answers as things are.
   * Default 15 000 ms.
   */
  readonly recoveryWaitMs?: number;
}

const defaultRecoveryWaitMs = 15_000;

/**
 * A call whose answer was lost with the daemon connection waits for the session to come back until
 * this long after it began (well under an MCP client's usual 60 s request timeout), and at least
 * {@link minLostAnswerWaitMs}; then it is answered with what is known.
 */
const lostAnswerDeadlineMs = 45_000;
const minLostAnswerWaitMs = 5_000;

/** `MissingRequiredClientCapabilityError` (2026-07-28): the request needs a capability the client did not declare. */
const missingClientCapabilityCode = -32021;

/** The MCP server of the child process `runt-mcp`, not yet connected to a transport. */
export interface ChildMcpServer {
  /**
   * The SDK server. Do not replace its request handlers. Connecting it directly skips the
   * protocol eras (the SDK then does a legacy handshake itself): the bin uses {@link connect}.
   */
  readonly server: Server;
  /**
   * Connects the server to `transport` behind the contributed protocol eras
   * ({@link ProtocolAdmission}): they admit the first request, answer the handshake and probes,
   * refuse what they do not serve, and shape every result. Without the legacy era a plain
   * `initialize` is refused.
   */
  connect(transport: Transport): Promise<void>;
  /** The client as it named itself (`initialize`'s `clientInfo` or the native envelope), once known. */
  client(): ClientIdentity | undefined;
  /**
   * `<clientInfo.title ?? clientInfo.name ?? 'Inkwell'> agent:<slug>:<session>`, as of now: the
   * client's names are known once its first request opened the connection.
   */
  peerLabel(): string;
  /** Stops listening to the slot and closes the server's transport. Sessions stay in the slot. */
  close(): Promise<void>;
}

/** The instructions string of the original server. */
export const childServerInstructions =
  'nteract MCP server for Jupyter notebooks. Each connection has one active notebook session. Use list_active_notebooks to discover open notebooks, then connect_notebook or create_notebook to set your active session. Calling these again switches your active session.';

/**
 * Builds the child's MCP server on the low-level SDK `Server`: the session and notebook tools over
 * the container's session engine and ports, and the resources (`notebook-resources.ts`: one per
 * connected or parked notebook, the active notebook's cells, a template for any cell), with
 * subscriptions in both eras (`resource-subscriptions.ts`).
 * An unknown tool (and a malformed `tools/call`) is a JSON-RPC invalid-params error; bad
 * arguments (the input schema refuses them, or they name a cell or notebook that does not exist)
 * and failures inside a tool are tool results with `isError: true` (SEP-1303). Every tool result carries the session report
 * (`_meta['nteract/session']`, see `handoff/session-report.ts`) from {@link SessionRecoveryState}. Sends `notifications/resources/list_changed` when the slot
 * changes or the active notebook's cells come or go, and `notifications/resources/updated` for the
 * subscribed resources that change, once the client has sent `notifications/initialized`.
 *
 * Takes `SessionSlot`, `SessionRecoveryState`, `SessionActivation`, `NotebookTargetResolver`, `Clock` and `Logger`
 * from the container; the session tools reach notebooks, and `session_status` the services behind them,
 * through the contributed notebook backends.
 */
export function createChildMcpServer(container: Container, options: ChildServerOptions): ChildMcpServer {
  const logger = container.get(Logger).child('core:ChildMcpServer');
  const slot = container.get(SessionSlot);
  const recovery = container.get(SessionRecoveryState);
  const agentSession = options.agentSession ?? randomBytes(4).toString('hex');

  const description: ServerDescription = {
    name: 'nteract',
    version: options.version,
    ...(options.daemonVersion !== undefined ? { title: formatServerTitle(options.daemonVersion) } : {}),
    capabilities: { ...childServerCapabilities },
    instructions: childServerInstructions,
  };
  const server = new Server(
    {
      name: description.name,
      version: description.version,
      ...(description.title !== undefined ? { title: description.title } : {}),
    },
    {
      capabilities: description.capabilities,
      instructions: childServerInstructions,
      jsonSchemaValidator: lazyJsonSchemaValidator(),
    },
  );
  const eras = container.get<ContributionProvider<ProtocolAdmission>>(ContributionProvider, {
    name: ProtocolAdmission,
  });
  const gate = new ProtocolEraGate(eras.getContributions(), description, {
    onFault: (era, error) => logger.error('a protocol era failed on a request', { era, error }),
  });

  const client = (): ClientIdentity | undefined => gate.connection?.client ?? server.getClientVersion();
  const peerLabel = (): string => formatPeerLabel(client(), agentSession);
  const deps: ChildServerDependencies = {
    slot,
    recovery,
    activation: container.get(SessionActivation),
    resolver: container.get(NotebookTargetResolver),
    clock: container.get(Clock),
    logger,
    executions: new ExecutionStore(),
    kernelHistory: new KernelHistory(),
    cwd: options.cwd,
    resultBudgetBytes: options.resultBudgetBytes ?? defaultToolResultBudgetBytes,
    peerLabel,
    awareness: new PeerAwareness(options.changeCursor),
  };
  const notebookTools = [
    ...createNotebookTools(deps),
    ...createEditTools(deps),
    ...createChangeTools(deps),
    ...createRestoreTools(deps),
  ];
  const contributed = container
    .get<ContributionProvider<ChildToolContribution>>(ContributionProvider, { name: ChildToolContribution })
    .getContributions()
    .flatMap((contribution) => contribution.tools());
  const registry = new ChildToolRegistry(
    [...createSessionTools(deps), ...createKernelTools(deps), ...notebookTools, ...contributed],
    {
      resultBudgetBytes: deps.resultBudgetBytes,
    },
  );
  // Tools on the active session wait for a recovery in progress instead of failing just before it lands.
  const waitsForRecovery = new Set([...notebookTools.map((tool) => tool.definition.name), 'save_notebook']);
  const recoveryWaitMs = options.recoveryWaitMs ?? defaultRecoveryWaitMs;
  const resources = new NotebookResources(slot, () => gate.connection?.era);
  // Clients drop notifications sent before they finished initializing: announce changes only after.
  let initialized = false;
  const subscriptions = new ResourceSubscriptions({
    slot,
    resources,
    clock: deps.clock,
    logger,
    sink: {
      updated: (uri) => {
        if (!initialized) return;
        server
          .sendResourceUpdated({ uri })
          .catch((error: unknown) => logger.debug('resources/updated was not sent', { error }));
      },
      listChanged: () => {
        if (!initialized) return;
        server
          .sendResourceListChanged()
          .catch((error: unknown) => logger.debug('resources/list_changed was not sent', { error }));
      },
    },
  });

  const cancellations = new ClientCancellations();
  /** The transport the server is connected to, once connected. */
  let gated: EraGatedTransport | undefined;
  const news = new SessionNews();
  const unsettled = new UnsettledCalls({ now: () => deps.clock.now() });
  /** `session` was removed under a call so that it be brought back (not by the agent's own disconnect or switch). */
  const lostUnderCall = (session: NotebookSession): boolean =>
    session.handle.isClosed &&
    recovery.watched &&
    (session.handle.closedReason === 'disconnected' || (slot.active !== session && recovery.recovering !== undefined));
  // Executions run as tasks (both eras) for clients that ask; the kernel's input() asks the person.
  const tasks = new ExecutionTasks({
    deps,
    readResult: (executionId) => registry.call('get_results', { execution_id: executionId }, idleContext()),
    // The era delivers it: legacy as it is; native only on the streams that name the task.
    notify: (method, params) => {
      if (!initialized) return;
      server
        .notification({ method, params } as never)
        .catch((error: unknown) => logger.debug('a task status was not sent', { error }));
    },
    era: () => gate.connection?.era,
    recoveryWaitMs,
  });
  const clientCapabilities = () => gate.clientCapabilities({ method: 'tools/call', params: {} });
  const inputs = new KernelInputs({
    slot,
    logger,
    era: () => gate.connection?.era,
    ask: (request) => {
      if (clientCapabilities()?.elicitation === undefined) return undefined;
      const taskId = tasks.taskOf(request.executionId);
      const params = {
        ...inputElicitation(request),
        ...(taskId ? { _meta: { [relatedTaskMetaKey]: { taskId } } } : {}),
      };
      return server.request({ method: 'elicitation/create', params } as never, ElicitResultSchema).then(lineOf);
    },
  });
  inputs.watchSessions();
  const inputRounds = new InputRounds({
    inputs,
    tasks,
    readResult: (executionId) => registry.call('get_results', { execution_id: executionId }, idleContext()),
    era: () => gate.connection?.era,
  });
  // Calls that destroy what the person may want kept ask them first (when the client can ask).
  const confirmations = new PersonConfirmations({
    slot,
    era: () => gate.connection?.era,
    elicit: (params) => server.request({ method: 'elicitation/create', params } as never, ElicitResultSchema),
  });
  registerTaskHandlers(
    server,
    tasks,
    inputs,
    () => gate.connection?.era,
    (id) => {
      const sent = gated?.served(id);
      return sent ? gate.clientCapabilities(sent) : undefined;
    },
  );
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: registry
      .list()
      .map((tool) => (taskTools.has(tool.name) ? { ...tool, execution: { taskSupport: 'optional' as const } } : tool)),
  }));
  // The one place every tool result (success or tool error) gets the session report, as of the
  // moment the result was produced.
  const callTool = async (
    request: CallToolRequest,
    extra: RequestHandlerExtra<ServerRequest, ServerNotification>,
  ): Promise<CallToolResult> => {
    const meta = request.params._meta;
    // A tool that needs a client capability the client did not declare (for this request, in the
    // native era) is refused before it runs.
    const declared =
      gate.clientCapabilities({ method: 'tools/call', params: request.params }) ?? server.getClientCapabilities();
    const missing = registry.missingCapabilities(request.params.name, declared);
    if (missing !== undefined) {
      throw new McpError(
        missingClientCapabilityCode,
        `Missing required client capability: ${request.params.name} needs ${Object.keys(missing).join(', ')}; declare it in the request's client capabilities.`,
        { requiredCapabilities: missing },
      );
    }
    // Client cancellations are seen on the server's transport, before the SDK aborts `extra.signal`.
    if (server.transport) cancellations.watch(server.transport);
    const name = request.params.name;
    const args = request.params.arguments;
    const definition = registry.definition(name);
    const honoursKeys = honorsIdempotency(definition?._meta);
    const given = meta?.[idempotencyMetaKey];
    // A tool that passes keys to the daemon always has one (the proxy's, or one of our own), so a
    // run of it once more after a lost answer is applied once; the agent's retry of a call whose
    // outcome it was told is unknown is sent with that call's key.
    const key = honoursKeys
      ? (unsettled.keyOf(name, args) ?? (typeof given === 'string' && given.length > 0 ? given : randomHex(16)))
      : undefined;
    const progressToken = meta?.progressToken;
    // The executions this call starts (their input() is answered through the call: see InputRounds).
    const startedRuns = new Set<string>();
    const rounds = inputRounds.applies(request.params.name, declared);
    const context: ToolCallContext = {
      idempotencyKey: key,
      signal: extra.signal,
      // Coalesced: a cell printing thousands of lines sends a few notifications a second, not one per output.
      reportProgress: coalesceProgress(
        (progress, message) => {
          if (progressToken === undefined) return;
          extra
            .sendNotification({ method: 'notifications/progress', params: { progressToken, progress, message } })
            .catch((error: unknown) => logger.debug('a progress notification was not sent', { error }));
        },
        () => deps.clock.now(),
      ),
      cancelled: cancellations.signalFor(extra.requestId),
      // The person answers the code's input() during the call (native: through its input_required answer).
      allowInput: declared?.elicitation !== undefined && (gate.connection?.era !== 'native' || rounds),
      onExecution: (executionId) => startedRuns.add(executionId),
    };
    const onSession = waitsForRecovery.has(name);
    const started = deps.clock.now();
    if (onSession) await recovery.whenRecovered(recoveryWaitMs, extra.signal);
    const taskMode = tasks.modeOf(name, request.params, declared, gate.connection?.era);
    if (taskMode !== undefined) {
      cancellations.release(extra.requestId);
      const allowInput = declared?.elicitation !== undefined;
      return (await tasks.start(name, args, { ...context, allowInput }, taskMode)) as CallToolResult;
    }
    // As sent: the SDK's schema strips what it does not know (a retry's `inputResponses`).
    const sent = (gated?.served(extra.requestId)?.params as Record<string, unknown> | undefined) ?? request.params;
    const confirmation = await confirmations.check(name, sent, declared);
    if (confirmation.kind === 'answer') {
      cancellations.release(extra.requestId);
      return confirmation.result as CallToolResult;
    }
    const resumed = rounds ? await inputRounds.resume(sent, extra.signal) : undefined;
    if (resumed !== undefined) {
      cancellations.release(extra.requestId);
      return resumed as CallToolResult;
    }
    // A call whose session was lost under it (the daemon died or stopped answering; the watch
    // loop removed the session to bring it back) failed on the closed handle, but the daemon may
    // have done it: the call waits for the rejoin and runs once more on the new session, with the
    // same idempotency key, so a mutation that did land is answered from the daemon's ledger and
    // not applied twice. When the session is not back in time, the answer says the outcome is
    // unknown, never that the call failed.
    const before = onSession ? slot.active : undefined;
    const answered = rounds
      ? await inputRounds.run(registry.call(name, args, context), startedRuns, extra.signal)
      : await registry.call(name, args, context);
    if (answered.resultType === 'input_required') {
      cancellations.release(extra.requestId);
      return answered as CallToolResult;
    }
    let result = answered as CallToolResult;
    if (result.isError === true && before !== undefined && lostUnderCall(before)) {
      const waitMs = Math.max(minLostAnswerWaitMs, lostAnswerDeadlineMs - (deps.clock.now() - started));
      logger.info('the session was lost under a call; running it again once the session is back', {
        tool: name,
        waitMs,
      });
      // From now until a call with this key is done, the same call (an agent retrying, its client
      // having given up on this one) goes with this call's key.
      if (key !== undefined && definition?.annotations?.readOnlyHint !== true) unsettled.remember(name, args, key);
      const back = await recovery.whenReplaced(before, waitMs, extra.signal);
      const again = back ? slot.active : undefined;
      if (again) result = await registry.call(name, args, context);
      if (!again || (result.isError === true && lostUnderCall(again))) {
        const waited = Math.round((deps.clock.now() - started) / 1000);
        result = lostAnswerResult(name, definition, key, waited);
      }
    }
    if (key !== undefined && result.isError !== true) unsettled.settle(name, args, key);
    // Refused for want of a session while a lost one is being brought back: it did nothing, and
    // the agent need not reconnect by hand.
    if (result.isError === true && onSession && before === undefined && !slot.active && recovery.watched) {
      const recovering = recovery.recovering;
      if (recovering) result = withSessionNews(result, [recoveringNote(name, describeNotebookTarget(recovering))]);
    }
    cancellations.release(extra.requestId);
    // What the other peers did since the previous call goes with every answer, after the tool ran.
    const changes = await deps.awareness.changeNote(slot.active?.handle, peerLabel());
    const lines = [...news.take(slot.active?.handle), ...changes];
    const cursor = slot.active ? deps.awareness.cursorOf(slot.active.handle.notebookId) : undefined;
    const report = cursor === undefined ? recovery.report() : { ...recovery.report(), changeCursor: cursor };
    return withSessionReport(withSessionNews(withNote(result, confirmation.note), lines), report);
  };
  // One debug line per call: tool, request id, duration, outcome; never its arguments or result.
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const started = deps.clock.now();
    const call = { tool: request.params.name, id: extra.requestId };
    try {
      const result = await callTool(request, extra);
      const outcome = result.isError === true ? 'isError' : 'ok';
      logger.debug('tools/call', { ...call, ms: deps.clock.now() - started, outcome });
      return result;
    } catch (error) {
      const code = error instanceof McpError ? error.code : ErrorCode.InternalError;
      logger.debug('tools/call', { ...call, ms: deps.clock.now() - started, outcome: 'error', code });
      throw error;
    }
  });
  server.setRequestHandler(ListResourcesRequestSchema, async () => ({ resources: await resources.list() }));
  server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({ resourceTemplates: resources.templates() }));
  // A resource of the notebook being brought back (a restarted child rejoining it) is asked for
  // once it is back, as the tools on the session wait, rather than refused as unknown meanwhile.
  const whenResourceOpen = async (uri: string, signal: AbortSignal): Promise<void> => {
    const address = parseNotebookResourceUri(uri);
    if (address && !slot.find(address.notebookId)) await recovery.whenRecovered(recoveryWaitMs, signal);
  };
  server.setRequestHandler(ReadResourceRequestSchema, async (request, extra) => {
    await whenResourceOpen(request.params.uri, extra.signal);
    return resources.read(request.params.uri);
  });
  // Legacy era only (the native era refuses these methods before the server sees them; its
  // subscriptions come with `subscriptions/listen` streams, below).
  server.setRequestHandler(SubscribeRequestSchema, async (request, extra) => {
    const restored = request.params._meta?.[restoredSubscriptionMetaKey] === true;
    if (!restored) await whenResourceOpen(request.params.uri, extra.signal);
    await subscriptions.subscribe(request.params.uri, restored);
    return {};
  });
  server.setRequestHandler(UnsubscribeRequestSchema, (request) => {
    subscriptions.unsubscribe(request.params.uri);
    return {};
  });
  server.setNotificationHandler(InitializedNotificationSchema, () => {
    initialized = true;
    server.oninitialized?.();
  });
  const slotSubscription = slot.onDidChange((change) => {
    inputs.watchSessions();
    if (!initialized || change === 'intent') return;
    server
      .sendResourceListChanged()
      .catch((error: unknown) => logger.debug('resources/list_changed was not sent', { error }));
  });

  return {
    server,
    connect: (transport) => {
      gated = new EraGatedTransport(
        transport,
        gate,
        (connection) => {
          logger.info('protocol era opened', { era: connection.era, protocolVersion: connection.protocolVersion });
          // An era that serves from its first request has no `notifications/initialized` to wait for.
          if (connection.readyOn === undefined) {
            initialized = true;
            server.oninitialized?.();
          }
        },
        {
          // The resources a stream names (native `resourceSubscriptions`) are watched while it is open.
          opened: (id, request) => {
            const params = request.params as
              | {
                  notifications?: { resourceSubscriptions?: unknown; taskIds?: unknown };
                  _meta?: Record<string, unknown>;
                }
              | undefined;
            const taskIds = params?.notifications?.taskIds;
            if (Array.isArray(taskIds)) {
              tasks.watch(
                requestIdKey(id),
                taskIds.filter((taskId): taskId is string => typeof taskId === 'string'),
              );
            }
            const uris = params?.notifications?.resourceSubscriptions;
            if (!Array.isArray(uris)) return;
            subscriptions.openStream(
              requestIdKey(id),
              uris.filter((uri): uri is string => typeof uri === 'string'),
              params?._meta?.[restoredSubscriptionMetaKey] === true,
            );
          },
          closed: (id) => {
            subscriptions.closeStream(requestIdKey(id));
            tasks.unwatch(requestIdKey(id));
          },
        },
      );
      return server.connect(gated);
    },
    client,
    peerLabel,
    close: async () => {
      slotSubscription.dispose();
      subscriptions.dispose();
      await server.close();
    },
  };
}

/**
 * The SDK's JSON Schema validator (it checks a client's answers to elicitation, which this server
 * does not ask for), made when first needed: building it compiles Ajv's meta-schemas, about a
 * tenth of a child's start-up, on the path of the agent's next call after a restart.
 */
function lazyJsonSchemaValidator(): jsonSchemaValidator {
  let validator: AjvJsonSchemaValidator | undefined;
  return {
    getValidator(schema) {
      validator ??= new AjvJsonSchemaValidator();
      return validator.getValidator(schema);
    },
  };
}

/**
 * The answer to a call whose session was lost under it and did not come back in time: what is
 * known. A read changed nothing; a tool that passes idempotency keys may have been applied, and
 * its retry with the same arguments is matched to it; any other may or may not have run.
 */
function lostAnswerResult(
  name: string,
  definition: Tool | undefined,
  key: string | undefined,
  waitedSecs: number,
): CallToolResult {
  const lost = `The connection to the notebook's daemon was lost while ${name} was in flight, and the session was not back after ${waitedSecs} s (it is being brought back).`;
  if (definition?.annotations?.readOnlyHint) return errorResult(`${lost} Nothing was changed; call ${name} again.`);
  if (key !== undefined) {
    return errorResult(
      `Outcome unknown: ${lost} The daemon may or may not have applied it. Calling ${name} again with the same arguments is safe: it is matched to this call and applied at most once (or answered with what this call did).`,
    );
  }
  return errorResult(
    `Outcome unknown: ${lost} It may or may not have taken effect: check the notebook (session_status, get_all_cells) before calling ${name} again.`,
  );
}

/** Said with a call refused for want of a session while the lost one is being brought back. */
function recoveringNote(name: string, target: string): string {
  return `This ${name} did nothing: the session on ${target} was lost (its daemon stopped answering or went away) and is being brought back by itself. Call ${name} again once session_status shows it active; no connect_notebook is needed.`;
}

/** The context of a tool call the server makes itself (a task's result): nothing cancels it, nothing is reported. */
function idleContext(): ToolCallContext {
  const signal = new AbortController().signal;
  return { idempotencyKey: undefined, signal, cancelled: signal, reportProgress: () => undefined };
}
