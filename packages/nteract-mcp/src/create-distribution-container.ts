import { createMcpContainer, type McpPlugin } from '@nteract-mcp/core';
import { createHostedPlugin } from '@nteract-mcp/plugin-hosted';
import { createLocalDaemonPlugin, type LocalDaemonOptions } from '@nteract-mcp/plugin-local-daemon';
import { createLegacyTransportPlugin } from '@nteract-mcp/plugin-transport-legacy';
import { createNativeTransportPlugin } from '@nteract-mcp/plugin-transport-native';
import type { Container } from 'inversify';

export interface DistributionOptions {
  readonly localDaemon?: LocalDaemonOptions;
  /** Environment for plugin defaults (`JUPYTER_TOKEN`, socket discovery); defaults to `process.env`. */
  readonly env?: Readonly<Record<string, string | undefined>>;
}

/** The plugins of the nteract-mcp distribution, in order. This list is the whole composition. */
export function distributionPlugins(options: DistributionOptions = {}): readonly McpPlugin[] {
  const env = options.env ?? process.env;
  return [
    createLegacyTransportPlugin(),
    createNativeTransportPlugin(),
    createLocalDaemonPlugin({ env, ...options.localDaemon }),
    createHostedPlugin({ env }),
  ];
}

/** The root container of the distribution: core plus {@link distributionPlugins}. */
export function createDistributionContainer(options: DistributionOptions = {}): Container {
  return createMcpContainer({ plugins: distributionPlugins(options) });
}
