export { ChildExitClassifier } from './child-exit-classifier.js';
export type {
  ChildExitEvent,
  ChildRefusal,
  ChildSpawnInfo,
  ChildSupervisorOptions,
  ChildSupervisorStatus,
} from './child-supervisor.js';
export { ChildSupervisor, defaultChildKillGraceMs } from './child-supervisor.js';
export type { ClientAttributionOptions } from './client-attribution.js';
export { ClientAttribution } from './client-attribution.js';
export { createProxyPlugin } from './create-proxy-plugin.js';
export { McpProxy } from './mcp-proxy.js';
export type { McpProxyOptions } from './mcp-proxy-options.js';
export { defaultToolListWaitMs } from './mcp-proxy-options.js';
export { RejoinTargetTracker } from './rejoin-target-tracker.js';
export type { BreakerState, RestartDecision, RestartPolicySnapshot } from './restart-policy.js';
export {
  defaultRestartPolicySettings,
  describeChildExit,
  RestartPolicy,
  RestartPolicySettings,
} from './restart-policy.js';
export type { ProxyFailure, ProxyWireError } from './to-proxy-wire-error.js';
export { proxyErrorCode, toProxyWireError } from './to-proxy-wire-error.js';
export type { ToolCacheEnvironment, ToolListCacheOptions, ToolListSource, ToolListUpdate } from './tool-list-cache.js';
export {
  defaultToolCachePath,
  reconnectTool,
  reconnectToolName,
  ToolListCache,
  toolListChangedIncompatiblyMessage,
} from './tool-list-cache.js';
export type { BannerCarrier, RejoinBannerState, RestartNotice } from './version-banner.js';
export { bannerPrefix, rejoinBannerState, restartBanner, restartHeadline } from './version-banner.js';
