import { randomBytes } from 'node:crypto';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  type CallToolRequest,
  CallToolRequestSchema,
  type CallToolResult,
  ErrorCode,
  InitializedNotificationSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  type ServerNotification,
  type ServerRequest,
} from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import type { jsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/types.js';
import type { Container } from 'inversify';
import { NotebookTargetResolver } from '../contributions/notebook-target-resolver.js';
import { type ClientIdentity, ProtocolAdmission, type ServerDescription } from '../contributions/protocol-admission.js';
import { ProtocolEraGate } from '../contributions/protocol-era-gate.js';
import { ContributionProvider } from '../di/contribution-provider.js';
import { formatPeerLabel } from '../handoff/format-peer-label.js';
import { formatServerTitle, idempotencyMetaKey } from '../handoff/handoff-contract.js';
import { defaultToolResultBudgetBytes } from '../handoff/mcp-message-limits.js';
import { withSessionReport } from '../handoff/session-report.js';
import { Clock } from '../ports/clock.js';
import { DaemonPort } from '../ports/daemon-port.js';
import { Logger } from '../ports/logger.js';
import { SessionActivation } from '../session/session-activation.js';
import { SessionRecoveryState } from '../session/session-recovery-state.js';
import { SessionSlot } from '../session/session-slot.js';
import type { ChildServerDependencies } from './child-server-dependencies.js';
import { ChildToolContribution } from './child-tool-contribution.js';
import { ChildToolRegistry, type ToolCallContext } from './child-tool-registry.js';
import { ClientCancellations } from './client-cancellations.js';
import { coalesceProgress } from './coalesce-progress.js';
import { createEditTools } from './create-edit-tools.js';
import { createKernelTools } from './create-kernel-tools.js';
import { createNotebookTools } from './create-notebook-tools.js';
import { createSessionTools } from './create-session-tools.js';
import { EraGatedTransport } from './era-gated-transport.js';
import { ExecutionStore } from './execution-store.js';
import { NotebookResources } from './notebook-resources.js';
import { SessionNews, withSessionNews } from './session-news.js';

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
 * the container's session engine and ports, and one resource per connected or parked notebook.
 * An unknown tool (and a malformed `tools/call`) is a JSON-RPC invalid-params error; bad
 * arguments (the input schema refuses them, or they name a cell or notebook that does not exist)
 * and failures inside a tool are tool results with `isError: true` (SEP-1303). Every tool result carries the session report
 * (`_meta['nteract/session']`, see `handoff/session-report.ts`) from {@link SessionRecoveryState}. Sends `notifications/resources/list_changed` when the slot
 * changes, once the client has sent `notifications/initialized`.
 *
 * Takes `SessionSlot`, `SessionRecoveryState`, `SessionActivation`, `NotebookTargetResolver`, `Clock`, `Logger` and, when
 * bound, `DaemonPort` from the container (for `session_status`); the session tools reach notebooks through the
 * contributed notebook backends.
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
    capabilities: { tools: { listChanged: true }, resources: { listChanged: true } },
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
    daemon: container.isBound(DaemonPort) ? container.get(DaemonPort) : undefined,
    clock: container.get(Clock),
    logger,
    executions: new ExecutionStore(),
    cwd: options.cwd,
    resultBudgetBytes: options.resultBudgetBytes ?? defaultToolResultBudgetBytes,
    peerLabel,
  };
  const notebookTools = [...createNotebookTools(deps), ...createEditTools(deps)];
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
  const resources = new NotebookResources(slot);

  const cancellations = new ClientCancellations();
  const news = new SessionNews();
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: registry.list() }));
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
    const key = meta?.[idempotencyMetaKey];
    const progressToken = meta?.progressToken;
    const context: ToolCallContext = {
      idempotencyKey: typeof key === 'string' && key.length > 0 ? key : undefined,
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
    };
    const onSession = waitsForRecovery.has(request.params.name);
    if (onSession) await recovery.whenRecovered(recoveryWaitMs, extra.signal);
    // A call that meets a daemon loss before the watch loop noticed it fails on the closed handle:
    // it waits for the rejoin and runs once more on the new session (same idempotency key, so a
    // mutation that did land is not applied twice).
    const before = onSession ? slot.active : undefined;
    let result = await registry.call(request.params.name, request.params.arguments, context);
    if (
      result.isError === true &&
      before !== undefined &&
      before.handle.closedReason === 'disconnected' &&
      recovery.watched
    ) {
      logger.info('the daemon connection was lost under a call; running it again once the session is back', {
        tool: request.params.name,
      });
      if (await recovery.whenReplaced(before, recoveryWaitMs, extra.signal)) {
        result = await registry.call(request.params.name, request.params.arguments, context);
      }
    }
    cancellations.release(extra.requestId);
    return withSessionReport(withSessionNews(result, news.take(slot.active?.handle)), recovery.report());
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
  server.setRequestHandler(ListResourcesRequestSchema, () => ({ resources: resources.list() }));
  server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({ resourceTemplates: [] }));
  server.setRequestHandler(ReadResourceRequestSchema, (request) => resources.read(request.params.uri));

  // Clients drop notifications sent before they finished initializing: announce changes only after.
  let initialized = false;
  server.setNotificationHandler(InitializedNotificationSchema, () => {
    initialized = true;
    server.oninitialized?.();
  });
  const slotSubscription = slot.onDidChange((change) => {
    if (!initialized || change === 'intent') return;
    server
      .sendResourceListChanged()
      .catch((error: unknown) => logger.debug('resources/list_changed was not sent', { error }));
  });

  return {
    server,
    connect: (transport) =>
      server.connect(
        new EraGatedTransport(transport, gate, (connection) => {
          logger.info('protocol era opened', { era: connection.era, protocolVersion: connection.protocolVersion });
          // An era that serves from its first request has no `notifications/initialized` to wait for.
          if (connection.readyOn === undefined) {
            initialized = true;
            server.oninitialized?.();
          }
        }),
      ),
    client,
    peerLabel,
    close: async () => {
      slotSubscription.dispose();
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
