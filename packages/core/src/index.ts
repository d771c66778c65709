export { idempotencyMetaKey } from './child-server/child-tool-registry.js';
export type { ChildMcpServer, ChildServerOptions } from './child-server/create-child-mcp-server.js';
export { createChildMcpServer } from './child-server/create-child-mcp-server.js';
export type { PeerLabelClient } from './child-server/format-peer-label.js';
export { formatPeerLabel } from './child-server/format-peer-label.js';
export type { GuardedStdioTransportOptions, OutgoingMessageFilter } from './child-server/guarded-stdio-transport.js';
export { GuardedStdioTransport, messageTooLargeErrorCode } from './child-server/guarded-stdio-transport.js';
export { notebookResourceMimeType, notebookResourceUriPrefix } from './child-server/notebook-resources.js';
export type { Contribution, ContributionPointDescriptor } from './container/contribution-point.js';
export { defineContributionPoint, listContributionPoints } from './container/contribution-point.js';
export { ContributionProvider } from './container/contribution-provider.js';
export type { McpContainerOptions } from './container/create-mcp-container.js';
export { createMcpContainer } from './container/create-mcp-container.js';
export type { Token } from './container/define-token.js';
export { defineToken } from './container/define-token.js';
export type { McpPlugin } from './container/mcp-plugin.js';
export { definePlugin } from './container/mcp-plugin.js';
export {
  defaultChildInputBufferBytes,
  defaultMaxChildMessageBytes,
  defaultMaxUpstreamMessageBytes,
  defaultToolResultBudgetBytes,
  describeMiB,
  mcpClientBufferBytes,
} from './contract/mcp-message-limits.js';
export type { RejoinReport, RejoinReportOutcome, SessionReport } from './contract/session-report.js';
export { readSessionReport, sessionReportMetaKey, withSessionReport } from './contract/session-report.js';
export type { ChildExitClass } from './contributions/exit-classifier.js';
export { ExitClassifier } from './contributions/exit-classifier.js';
export type {
  AdmissionDecision,
  AdmissionRequest,
  ClientIdentity,
  ProtocolEra,
} from './contributions/protocol-admission.js';
export { ProtocolAdmission, readClientIdentity } from './contributions/protocol-admission.js';
export type { RejoinContext, RejoinOutcome } from './contributions/rejoin-strategy.js';
export { RejoinStrategy } from './contributions/rejoin-strategy.js';
export { TargetKind } from './contributions/target-kind.js';
export type { RuntimedSocketEnvironment } from './daemon/resolve-runtimed-socket-path.js';
export { resolveRuntimedSocketPath } from './daemon/resolve-runtimed-socket-path.js';
export type { CoreErrorKind, CoreErrorOptions } from './errors/core-error.js';
export { CoreError } from './errors/core-error.js';
export type { ChildExit, ChildProcessHandle, ChildSpawnSpec } from './ports/child-process-port.js';
export { ChildProcessPort } from './ports/child-process-port.js';
export type { Timer } from './ports/clock.js';
export { Clock } from './ports/clock.js';
export type {
  CreateNotebookOptions,
  DaemonEvent,
  DaemonInfo,
  DaemonObservation,
  PeerOptions,
  RoomInfo,
} from './ports/daemon-port.js';
export { DaemonPort } from './ports/daemon-port.js';
export type { LogFields, LogLevel } from './ports/logger.js';
export { Logger } from './ports/logger.js';
export { NodeChildProcessPort } from './ports/node-child-process-port.js';
export { NodeSourceFileProbe } from './ports/node-source-file-probe.js';
export type {
  CellOutput,
  CellType,
  ExecuteOptions,
  ExecutionResult,
  ExecutionState,
  InsertCellRequest,
  MutationOptions,
  NotebookCell,
  NotebookHandle,
  NotebookHandleCloseReason,
  NotebookReadiness,
  SavedNotebook,
  Subscription,
} from './ports/notebook-handle.js';
export type { SourceFileState } from './ports/source-file-probe.js';
export { SourceFileProbe } from './ports/source-file-probe.js';
export type { LineSink } from './ports/stderr-logger.js';
export { parseLogLevel, StderrLogger } from './ports/stderr-logger.js';
export { SystemClock } from './ports/system-clock.js';
export { ChildExitClassification } from './proxy/child-exit-classification.js';
export type {
  ChildExitEvent,
  ChildRefusal,
  ChildSpawnInfo,
  ChildSupervisorOptions,
  ChildSupervisorStatus,
} from './proxy/child-supervisor.js';
export { ChildSupervisor, defaultChildKillGraceMs } from './proxy/child-supervisor.js';
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
  JsonRpcValidation,
} from './proxy/json-rpc-line-framer.js';
export {
  defaultMaxJsonRpcLineBytes,
  JsonRpcLineFramer,
  jsonRpcInvalidRequestCode,
  jsonRpcParseErrorCode,
  serializeJsonRpcLine,
  validateJsonRpcMessage,
} from './proxy/json-rpc-line-framer.js';
export type { McpProxyOptions } from './proxy/mcp-proxy.js';
export { defaultToolListWaitMs, McpProxy, proxyErrorCode } from './proxy/mcp-proxy.js';
export type { RejoinTargetSource, RejoinTargetTrackerOptions } from './proxy/rejoin-target-tracker.js';
export {
  agentSessionEnvironmentVariable,
  RejoinTargetTracker,
  rejoinNotebookEnvironmentVariable,
} from './proxy/rejoin-target-tracker.js';
export type { BreakerState, RestartDecision, RestartPolicySnapshot } from './proxy/restart-policy.js';
export {
  defaultRestartPolicySettings,
  describeChildExit,
  RestartPolicy,
  RestartPolicySettings,
} from './proxy/restart-policy.js';
export type {
  ToolCacheEnvironment,
  ToolListCacheOptions,
  ToolListSource,
  ToolListUpdate,
} from './proxy/tool-list-cache.js';
export {
  defaultToolCachePath,
  reconnectTool,
  reconnectToolName,
  ToolListCache,
  toolListChangedIncompatiblyMessage,
} from './proxy/tool-list-cache.js';
export type { BannerCarrier, RejoinBannerState, RestartNotice } from './proxy/version-banner.js';
export {
  BannerQueue,
  bannerPrefix,
  daemonVersionFromTitle,
  rejoinBannerState,
  rejoinSettledBanner,
  restartBanner,
  restartHeadline,
} from './proxy/version-banner.js';
export type { NotebookSession, SessionOrigin } from './session/notebook-session.js';
export { isLocalSession, isSessionFor, sessionRecoveryTarget } from './session/notebook-session.js';
export type { RejoinRequest, RejoinResult } from './session/rejoin-coordinator.js';
export { RejoinCoordinator } from './session/rejoin-coordinator.js';
export type { ActivationRequest } from './session/session-activation.js';
export { SessionActivation } from './session/session-activation.js';
export type { SessionDropInfo, SessionDropReason } from './session/session-drop-info.js';
export { noSessionMessage, notRejoinedMessage } from './session/session-drop-info.js';
export { SessionRecoveryState } from './session/session-recovery-state.js';
export type { SessionAccess, SessionEviction, SessionRequirement, SlotChange } from './session/session-slot.js';
export { maxParkedSessions, SessionSlot } from './session/session-slot.js';
export { DaemonIncarnation } from './target/daemon-incarnation.js';
export type {
  HostedUrlTarget,
  LocalPathTarget,
  NotebookIdTarget,
  NotebookTarget,
} from './target/notebook-target.js';
export { describeNotebookTarget, isSameNotebookTarget } from './target/notebook-target.js';
export { NotebookTargetResolver } from './target/notebook-target-resolver.js';
export type { PathInspection, TargetParseContext } from './target/parse-notebook-target.js';
export {
  detectNotebookTargetKind,
  inspectPathOnDisk,
  parseHostedUrlTarget,
  parseLocalPathTarget,
  parseNotebookIdTarget,
  parseNotebookTarget,
} from './target/parse-notebook-target.js';
export { SecretToken } from './target/secret-token.js';
