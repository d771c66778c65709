import { CoreError, definePlugin, type McpPlugin, ProtocolAdmission } from '@nteract-mcp/core';
import { ContainerModule } from 'inversify';
import { InitializeAdmission } from './initialize-admission.js';
import { defaultLegacyProtocolVersions, LegacyTransportOptions } from './legacy-transport-options.js';

/** The initialize-based MCP lifecycle (2024-11-05 … 2025-11-25). */
export function createLegacyTransportPlugin(options: Partial<LegacyTransportOptions> = {}): McpPlugin {
  const protocolVersions = Object.freeze([...(options.protocolVersions ?? defaultLegacyProtocolVersions)]);
  if (protocolVersions.length === 0)
    throw new CoreError('invalidPluginOptions', 'createLegacyTransportPlugin: protocolVersions must not be empty');
  return definePlugin({
    id: 'transport-legacy',
    module: new ContainerModule(({ bind }) => {
      bind(LegacyTransportOptions).toConstantValue({ protocolVersions });
      bind(ProtocolAdmission).to(InitializeAdmission).inSingletonScope();
    }),
  });
}
