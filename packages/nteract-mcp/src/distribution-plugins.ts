import type { McpPlugin } from '@nteract-mcp/core';
import { createHostedPlugin } from '@nteract-mcp/plugin-hosted';
import { createLocalDaemonPlugin, type LocalDaemonOptions } from '@nteract-mcp/plugin-local-daemon';
import { createLegacyTransportPlugin } from '@nteract-mcp/plugin-transport-legacy';
import { createNativeTransportPlugin } from '@nteract-mcp/plugin-transport-native';
import { createProxyPlugin } from '@nteract-mcp/proxy';

export interface ChildPluginOptions {
  readonly localDaemon?: LocalDaemonOptions;
  /** Environment for plugin defaults (`JUPYTER_TOKEN`, socket discovery); defaults to `process.env`. */
  readonly env?: Readonly<Record<string, string | undefined>>;
}

/** What `nteract-mcp` (the proxy) loads, in order: its supervisor and the protocol eras it speaks upstream. */
export function proxyPlugins(): readonly McpPlugin[] {
  return [createProxyPlugin(), createLegacyTransportPlugin(), createNativeTransportPlugin()];
}

/**
 * What `runt-mcp` (the child) loads, in order: the protocol eras its server speaks, then the
 * notebook backends (local daemon, hosted Jupyter Server), each also the way back to its
 * notebooks after a loss.
 */
export function childPlugins(options: ChildPluginOptions = {}): readonly McpPlugin[] {
  const env = options.env ?? process.env;
  return [
    createLegacyTransportPlugin(),
    createNativeTransportPlugin(),
    createLocalDaemonPlugin({ env, ...options.localDaemon }),
    createHostedPlugin({ env }),
  ];
}
