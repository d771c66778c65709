import { CoreError, definePlugin, type McpPlugin, ProtocolAdmission } from '@nteract-mcp/core';
import { ContainerModule } from 'inversify';
import { defaultNativeProtocolVersions, NativeTransportOptions } from './native-transport-options.js';
import { PerRequestAdmission } from './per-request-admission.js';

/** MCP 2026-07-28 per-request negotiation. */
export function createNativeTransportPlugin(options: Partial<NativeTransportOptions> = {}): McpPlugin {
  const protocolVersions = Object.freeze([...(options.protocolVersions ?? defaultNativeProtocolVersions)]);
  if (protocolVersions.length === 0)
    throw new CoreError('invalidPluginOptions', 'createNativeTransportPlugin: protocolVersions must not be empty');
  return definePlugin({
    id: 'transport-native',
    module: new ContainerModule(({ bind }) => {
      bind(NativeTransportOptions).toConstantValue({ protocolVersions });
      bind(ProtocolAdmission).to(PerRequestAdmission).inSingletonScope();
    }),
  });
}
