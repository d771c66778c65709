/** Client text (a method, a version) bounded for an error message: plugins word their refusals with it. */
export { boundClientText } from '@nteract-mcp/foundation';
export { accessWhenReady } from './child-server/access-when-ready.js';
export { childServerCapabilities, tasksExtension } from './child-server/child-server-capabilities.js';
export type { ChildServerDependencies } from './child-server/child-server-dependencies.js';
export type { ChildMcpServer, ChildServerOptions } from './child-server/create-child-mcp-server.js';
export { createChildMcpServer } from './child-server/create-child-mcp-server.js';
export type { TaskRuns } from './child-server/executions/task-runs.js';
export { ChildToolContribution } from './child-server/tools/child-tool-contribution.js';
export type {
  ChildTool,
  ConfirmationQuestion,
  RegisteredChildTool,
  ToolCallContext,
  ToolConfirmation,
  ToolPolicies,
  ToolSessionNeed,
  ToolTaskDeclaration,
} from './child-server/tools/child-tool-registry.js';
export { defineChildTool, errorResult, jsonResult, textResult } from './child-server/tools/child-tool-registry.js';
export type {
  GuardedStdioTransportOptions,
  OutgoingMessageFilter,
} from './child-server/transport/guarded-stdio-transport.js';
export { GuardedStdioTransport } from './child-server/transport/guarded-stdio-transport.js';
export { contributionPoints } from './composition/contribution-points.js';
export { createMcpContainer } from './composition/create-mcp-container.js';
export type { McpContainerOptions } from './composition/create-plugin-container.js';
export { createPluginContainer } from './composition/create-plugin-container.js';
export { announceExtensions, ClientExtension, declaredExtensions } from './contributions/client-extension.js';
export type {
  BackendConnectContext,
  CreatedNotebook,
  CreateNotebookRequest,
  TargetParseContext,
} from './contributions/notebook-backend.js';
export { NotebookBackend } from './contributions/notebook-backend.js';
export { NotebookTargetResolver } from './contributions/notebook-target-resolver.js';
export type {
  AdmissionDecision,
  AdmissionOpening,
  AdmissionRejection,
  AdmissionRequest,
  ClientIdentity,
  ConnectionCheck,
  ConnectionRequestId,
  EraConnection,
  EraDialect,
  OutboundNotification,
  ProtocolEra,
  ReplayMessage,
  ServerDescription,
  StreamEnding,
  TaskDialect,
  TaskReport,
} from './contributions/protocol-admission.js';
export { ProtocolAdmission, readClientIdentity } from './contributions/protocol-admission.js';
export type { GateVerdict, ProtocolEraGateOptions } from './contributions/protocol-era-gate.js';
export { ProtocolEraGate } from './contributions/protocol-era-gate.js';
export type { RecoveryControl, RecoveryRound } from './contributions/recovery-contribution.js';
export { RecoveryContribution } from './contributions/recovery-contribution.js';
export { sdkDialect } from './contributions/sdk-dialect.js';
export type { Contribution, ContributionPoint } from './di/contribution-point.js';
export { ContributionProvider } from './di/contribution-provider.js';
export type { Token } from './di/define-token.js';
export { defineToken } from './di/define-token.js';
export type { McpPlugin } from './di/mcp-plugin.js';
export { definePlugin } from './di/mcp-plugin.js';
export type { CoreErrorKind, CoreErrorOptions } from './errors/core-error.js';
export { CoreError } from './errors/core-error.js';
export type {
  ChannelCredential,
  CredentialChannelMessage,
  CredentialChannelStore,
} from './handoff/credential-channel.js';
export {
  credentialChannelFd,
  encodeCredentialMessage,
} from './handoff/credential-channel.js';
export type { PeerLabelClient } from './handoff/format-peer-label.js';
export { formatPeerLabel } from './handoff/format-peer-label.js';
export type { ChildHandoff } from './handoff/handoff-contract.js';
export {
  childExitCodes,
  handoffEnvironment,
  handoffEnvironmentHelp,
  handoffFromEnvironment,
  handoffToEnvironment,
  honorsIdempotency,
  idempotencyMetaKey,
  plainToolListMetaKey,
  rejoinTargetWithoutCredentials,
  restoredSubscriptionMetaKey,
} from './handoff/handoff-contract.js';
export {
  defaultMaxUpstreamMessageBytes,
  describeMiB,
} from './handoff/mcp-message-limits.js';
export type { RejoinReport, RejoinReportOutcome, SessionReport } from './handoff/session-report.js';
export { declaresSupervisionStatus, readSessionReport, sessionReportMetaKey } from './handoff/session-report.js';
export type {
  JsonRpcErrorObject,
  JsonRpcErrorResponse,
  JsonRpcFrame,
  JsonRpcFramingFailure,
  JsonRpcId,
  JsonRpcLineFramerOptions,
  JsonRpcMessage,
  JsonRpcNotification,
  JsonRpcParams,
  JsonRpcRequest,
  JsonRpcResultResponse,
} from './json-rpc/json-rpc-line-framer.js';
export { JsonRpcLineFramer, serializeJsonRpcLine } from './json-rpc/json-rpc-line-framer.js';
export { withPlainErrorMessage } from './json-rpc/plain-error-message.js';
export { requestIdKey } from './json-rpc/request-id-key.js';
export type { ChildRuntimeOptions } from './lifecycle/child-runtime.js';
export { ChildRuntime } from './lifecycle/child-runtime.js';
export { DaemonIncarnation } from './notebook-target/daemon-incarnation.js';
export type {
  ContributedNotebookTarget,
  HostedUrlTarget,
  LocalPathTarget,
  NotebookIdTarget,
  NotebookTarget,
  NotebookTargetIdentity,
  TargetArgument,
  TargetSessionView,
} from './notebook-target/notebook-target.js';
export {
  describeNotebookTarget,
  firstPartyIdentities,
  isSameNotebookTarget,
} from './notebook-target/notebook-target.js';
export { SecretToken } from './notebook-target/secret-token.js';
export { cellChangesBetween } from './ports/cell-changes-between.js';
export type { ChildExit, ChildExitClass, ChildProcessHandle, ChildSpawnSpec } from './ports/child-process-port.js';
export { ChildProcessPort } from './ports/child-process-port.js';
export type { Timer } from './ports/clock.js';
export { Clock } from './ports/clock.js';
export type {
  CreateNotebookOptions,
  DaemonEvent,
  DaemonInfo,
  DaemonObservation,
  LivePage,
  PeerOptions,
} from './ports/daemon-port.js';
export { DaemonPort, readDaemonStatus } from './ports/daemon-port.js';
export { executionResultOf } from './ports/execution-result-of.js';
export { failedChildHandle } from './ports/failed-child-handle.js';
export type { KernelInfo } from './ports/kernel-info.js';
export type { ListedNotebook, ListedPeer } from './ports/listed-notebook.js';
export type { LogFields, LogLevel } from './ports/logger.js';
export { Logger } from './ports/logger.js';
export { CredentialMessageReader } from './ports/node/credential-message-reader.js';
export type { JoinCredentialChannelOptions } from './ports/node/join-credential-channel.js';
export { joinCredentialChannel } from './ports/node/join-credential-channel.js';
export { NodeChildProcessPort } from './ports/node/node-child-process-port.js';
export type {
  CellActivity,
  CellActivityPage,
  CellOutput,
  CellType,
  ExecuteOptions,
  ExecutionPage,
  ExecutionResult,
  ExecutionState,
  InputRequest,
  InsertCellRequest,
  KernelInterruptOutcome,
  MutationOptions,
  NotebookCell,
  NotebookCellChange,
  NotebookCondition,
  NotebookHandle,
  NotebookHandleCloseReason,
  NotebookReadiness,
  OutputsPageRequest,
  ReplacedEdit,
  SavedNotebook,
  ScratchRun,
  Subscription,
  UpdatedCell,
} from './ports/notebook-handle.js';
export { ReadinessWaiters } from './ports/readiness-waiters.js';
export { SessionCredentials } from './ports/session-credentials.js';
export type { SourceFileState } from './ports/source-file-probe.js';
export { SourceFileProbe } from './ports/source-file-probe.js';
export type { BoundedRetryRecoveryOptions } from './recovery/bounded-retry-recovery.js';
export { BoundedRetryRecovery, defaultRecoveryRetrySchedule } from './recovery/bounded-retry-recovery.js';
export type { ChildLifecycleContext, RecoveryHandoff, RecoveryLoopOptions } from './recovery/recovery-loop.js';
export { RecoveryLoop } from './recovery/recovery-loop.js';
export type { RetrySchedule } from './recovery/retry-timer.js';
export { retryDelay } from './recovery/retry-timer.js';
export { KeptCredentials } from './session/kept-credentials.js';
export type { NotebookSession, SessionOrigin } from './session/notebook-session.js';
export { isSessionFor, sessionRecoveryTarget } from './session/notebook-session.js';
export type { RejoinRequest, RejoinResult } from './session/rejoin-coordinator.js';
export { RejoinCoordinator } from './session/rejoin-coordinator.js';
export type { ActivationRequest } from './session/session-activation.js';
export { SessionActivation } from './session/session-activation.js';
export type { SessionDropInfo, SessionDropReason } from './session/session-drop-info.js';
export { SessionRecoveryState } from './session/session-recovery-state.js';
export type {
  ConnectedNotebook,
  SessionAccess,
  SessionEviction,
  SessionRequirement,
  SlotChange,
} from './session/session-slot.js';
export { maxParkedSessions, SessionSlot } from './session/session-slot.js';
