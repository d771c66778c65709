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
  ListToolsRequestSchema,
  McpError,
  type ServerNotification,
  type ServerRequest,
} from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import type { jsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/types.js';
import type { Container } from 'inversify';
import { ClientExtension, declaredExtensions } from '../contributions/client-extension.js';
import { NotebookTargetResolver } from '../contributions/notebook-target-resolver.js';
import {
  type ClientIdentity,
  type EraDialect,
  ProtocolAdmission,
  type ServerDescription,
} from '../contributions/protocol-admission.js';
import { ProtocolEraGate } from '../contributions/protocol-era-gate.js';
import { sdkDialect } from '../contributions/sdk-dialect.js';
import { ContributionProvider } from '../di/contribution-provider.js';
import { formatPeerLabel } from '../handoff/format-peer-label.js';
import { formatServerTitle } from '../handoff/handoff-contract.js';
import { defaultToolResultBudgetBytes } from '../handoff/mcp-message-limits.js';
import { Clock } from '../ports/clock.js';
import { Logger } from '../ports/logger.js';
import { SessionActivation } from '../session/session-activation.js';
import { SessionRecoveryState } from '../session/session-recovery-state.js';
import { SessionSlot } from '../session/session-slot.js';
import { PeerAwareness } from './awareness/peer-awareness.js';
import { SessionNews } from './awareness/session-news.js';
import { answerInputRounds } from './call-pipeline/answer-input-rounds.js';
import { askConfirmation } from './call-pipeline/ask-confirmation.js';
import { awaitRecovery } from './call-pipeline/await-recovery.js';
import { checkCapabilities } from './call-pipeline/check-capabilities.js';
import { composeCallSteps } from './call-pipeline/compose-call-steps.js';
import { createToolCall } from './call-pipeline/create-tool-call.js';
import { reportSession } from './call-pipeline/report-session.js';
import { retryLostSession } from './call-pipeline/retry-lost-session.js';
import { runAsTask } from './call-pipeline/run-as-task.js';
import { runTool } from './call-pipeline/run-tool.js';
import { childServerCapabilities } from './child-server-capabilities.js';
import type { ChildServerDependencies } from './child-server-dependencies.js';
import { ClientExtensionAnswers } from './client-extension-answers.js';
import { ExecutionStore } from './executions/execution-store.js';
import { ExecutionTasks, relatedTaskMetaKey } from './executions/execution-tasks.js';
import { InputRounds } from './executions/input-rounds.js';
import { KernelHistory } from './executions/kernel-history.js';
import { inputElicitation, KernelInputs, lineOf } from './executions/kernel-inputs.js';
import { PersonConfirmations } from './executions/person-confirmations.js';
import { registerTaskHandlers } from './executions/register-task-handlers.js';
import { UnsettledCalls } from './executions/unsettled-calls.js';
import { NotebookResources } from './resources/notebook-resources.js';
import { registerResourceHandlers } from './resources/register-resource-handlers.js';
import { ResourceSubscriptions } from './resources/resource-subscriptions.js';
import { ChildToolContribution } from './tools/child-tool-contribution.js';
import { ChildToolRegistry, type ToolCallContext } from './tools/child-tool-registry.js';
import { ClientCancellations } from './transport/client-cancellations.js';
import { clientUrlElicitation, declaresUrlElicitation } from './transport/client-url-elicitation.js';
import { EraGatedTransport } from './transport/era-gated-transport.js';
import { watchedStreams } from './transport/watched-streams.js';

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
  /** The tasks the client created with earlier children, oldest first (the handoff's): `tasks/list` lists them. */
  readonly knownTasks?: readonly string[];
  /** The serialized size no tool result exceeds (default 8 MiB, under the client's 10 MiB buffer). */
  readonly resultBudgetBytes?: number;
  /**
   * How long a tool that works on the active session waits, when called while a lost session is
   * being brought back (a daemon start or a rejoin running), before it answers as things are.
   * Default 15 000 ms.
   */
  readonly recoveryWaitMs?: number;
  /**
   * The person allowed `install_packages` to install without asking them each time (they set
   * NTERACT_MCP_ALLOW_INSTALLS=1 in the MCP client's config for nteract-mcp; never a tool argument).
   */
  readonly allowInstalls?: boolean;
}

const defaultRecoveryWaitMs = 15_000;

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
  const extensions = new ClientExtensionAnswers(
    container
      .get<ContributionProvider<ClientExtension>>(ContributionProvider, { name: ClientExtension })
      .getContributions(),
  );
  // The handshake announces the extensions the opening request declared; to others, the description as it is.
  const gate = new ProtocolEraGate(
    eras.getContributions(),
    (_era, declared) => extensions.describe(description, declared),
    {
      onFault: (era, error) => logger.error('a protocol era failed on a request', { era, error }),
    },
  );

  const client = (): ClientIdentity | undefined => gate.connection?.client ?? server.getClientVersion();
  // What differs between eras is what the open connection's era says; before one opens, the SDK server's own.
  const dialect = (): EraDialect => gate.connection?.dialect ?? sdkDialect;
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
    allowInstalls: options.allowInstalls === true,
  };
  // Core's own tools come through the contribution point, like a plugin's: first, as it is bound first.
  const contributed = container
    .get<ContributionProvider<ChildToolContribution>>(ContributionProvider, { name: ChildToolContribution })
    .getContributions()
    .flatMap((contribution) => contribution.tools(deps));
  const registry = new ChildToolRegistry(contributed, { resultBudgetBytes: deps.resultBudgetBytes });
  const recoveryWaitMs = options.recoveryWaitMs ?? defaultRecoveryWaitMs;
  const resources = new NotebookResources(slot, dialect);
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
  const unsettled = new UnsettledCalls({ now: () => deps.clock.now() });
  // Executions run as tasks (both eras) for clients that ask; the kernel's input() asks the person.
  const tasks = new ExecutionTasks({
    deps,
    readResult: (executionId) => registry.call('get_results', { execution_id: executionId }, idleContext()),
    // The era delivers it (native: only on the streams that name the task).
    notify: (method, params) => {
      if (!initialized) return;
      server
        .notification({ method, params } as never)
        .catch((error: unknown) => logger.debug('a task status was not sent', { error }));
    },
    dialect,
    recoveryWaitMs,
  });
  tasks.remember(options.knownTasks ?? []);
  const clientCapabilities = () => gate.clientCapabilities({ method: 'tools/call', params: {} });
  const inputs = new KernelInputs({
    slot,
    logger,
    dialect,
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
    dialect,
  });
  // A backend sends the person to a page of its own (e.g. to give a server's token) through this.
  const urlElicitation = clientUrlElicitation(server, logger);
  // Calls that destroy what the person may want kept ask them first (when the client can ask).
  const confirmations = new PersonConfirmations({
    slot,
    dialect,
    elicit: (params) => server.request({ method: 'elicitation/create', params } as never, ElicitResultSchema),
  });
  registerTaskHandlers(server, tasks, inputs, dialect, (id) => {
    const sent = gated?.served(id);
    return sent ? gate.clientCapabilities(sent) : undefined;
  });
  /** The extensions loaded here that the client declared for a request with `params` (method `method`). */
  const declaredFor = (method: string, params: Record<string, unknown> | undefined) =>
    declaredExtensions(
      extensions.all,
      gate.clientCapabilities({ method, params: params ?? {} }) ?? server.getClientCapabilities(),
    );
  server.setRequestHandler(ListToolsRequestSchema, (request) => ({
    tools: extensions.decorateTools(
      registry,
      extensions.asksPlainList(request.params) ? [] : declaredFor('tools/list', request.params),
    ),
  }));
  // Each step does what the called tool declared (`ChildTool`'s policies), outermost first:
  // refuse a missing capability, wait for a recovery in progress, (report, on the way back: every
  // tool result gets the session report), start a task, ask the person, (run once more on the
  // session brought back when it was lost under the call), answer the code's input() through the
  // call, run the tool. The retry wraps input and run, so a run made again goes through both.
  const pipeline = composeCallSteps([
    checkCapabilities(registry),
    awaitRecovery(recovery, recoveryWaitMs),
    reportSession({ slot, recovery, awareness: deps.awareness, news: new SessionNews(), peerLabel }),
    runAsTask(tasks),
    askConfirmation(confirmations),
    retryLostSession({ slot, recovery, clock: deps.clock, logger, unsettled }),
    answerInputRounds(inputRounds),
    runTool(registry),
  ]);
  const callTool = async (
    request: CallToolRequest,
    extra: RequestHandlerExtra<ServerRequest, ServerNotification>,
  ): Promise<CallToolResult> => {
    // Client cancellations are seen on the server's transport, before the SDK aborts `extra.signal`.
    if (server.transport) cancellations.watch(server.transport);
    const call = createToolCall(
      {
        registry,
        unsettled,
        cancellations,
        inputRounds,
        clock: deps.clock,
        logger,
        declaredFor: (params) =>
          gate.clientCapabilities({ method: 'tools/call', params }) ?? server.getClientCapabilities(),
        sentParams: (sentBy) => gated?.served(sentBy.requestId)?.params,
        // Only where the server may send the client requests (the connection's dialect says so).
        urlElicitation: (declared) =>
          dialect().sendsRequests && declaresUrlElicitation(declared) ? urlElicitation : undefined,
      },
      request,
      extra,
    );
    const outcome = await pipeline(call);
    if (outcome.kind !== 'result') return outcome.answer as CallToolResult;
    // For a client that declared an extension rendering what the tool shows: its structured content.
    return extensions.decorateResult(outcome.result as CallToolResult, {
      shows: registry.policies(request.params.name)?.shows,
      declared: declaredFor('tools/call', request.params),
      arguments: request.params.arguments ?? {},
      slot,
      resolver: deps.resolver,
    });
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
  registerResourceHandlers(server, {
    slot,
    recovery,
    resources,
    subscriptions,
    recoveryWaitMs,
    extensionResources: (method, params) => declaredFor(method, params).flatMap((extension) => extension.resources),
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
        // What an open notification stream names (tasks, resources) is watched while it is open.
        watchedStreams(tasks, subscriptions),
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

/** The context of a tool call the server makes itself (a task's result): nothing cancels it, nothing is reported. */
function idleContext(): ToolCallContext {
  const signal = new AbortController().signal;
  return { idempotencyKey: undefined, signal, cancelled: signal, reportProgress: () => undefined };
}
