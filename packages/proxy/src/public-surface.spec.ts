import { describe, expect, it } from 'vitest';

/**
 * The public surface of @nteract-mcp/proxy, pinned: adding or removing an export is a deliberate change
 * to this list (and to its users), never a side effect of a refactoring.
 */
describe('the public surface of @nteract-mcp/proxy', () => {
  it('exports exactly the documented names from the main entry', async () => {
    const surface = Object.keys(await import('./index.js')).sort();
    expect(surface).toEqual([
      'ChildExitClassifier',
      'ChildSupervisor',
      'ClientAttribution',
      'McpProxy',
      'RejoinTargetTracker',
      'RestartPolicy',
      'RestartPolicySettings',
      'ToolListCache',
      'bannerPrefix',
      'createProxyPlugin',
      'defaultChildKillGraceMs',
      'defaultRestartPolicySettings',
      'defaultToolCachePath',
      'defaultToolListWaitMs',
      'describeChildExit',
      'proxyErrorCode',
      'reconnectTool',
      'reconnectToolName',
      'rejoinBannerState',
      'restartBanner',
      'restartHeadline',
      'toProxyWireError',
      'toolListChangedIncompatiblyMessage',
    ]);
  });
});
