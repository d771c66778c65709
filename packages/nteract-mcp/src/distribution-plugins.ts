import type { McpPlugin } from '@nteract-mcp/core';
import { createAppViewPlugin } from '@nteract-mcp/plugin-app-view';
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

/**
 * `NTERACT_MCP_APP_VIEW=off` leaves the MCP Apps view out of both bins, as if it were not shipped
 * (a client that does not declare the extension gets the same answers either way; the tests
 * compare them).
 */
function appView(env: Readonly<Record<string, string | undefined>>): readonly McpPlugin[] {
  return env.NTERACT_MCP_APP_VIEW === 'off' ? [] : [createAppViewPlugin()];
}

/**
 * What `nteract-mcp` (the proxy) loads, in order: its supervisor, the protocol eras it speaks
 * upstream, and the MCP Apps view (announced in its own handshake to a client that declares it).
 */
export function proxyPlugins(env: Readonly<Record<string, string | undefined>> = process.env): readonly McpPlugin[] {
  return [createProxyPlugin(), createLegacyTransportPlugin(), createNativeTransportPlugin(), ...appView(env)];
}

/**
 * What `runt-mcp` (the child) loads, in order: the protocol eras its server speaks, then the
 * notebook backends (local daemon, hosted Jupyter Server), each also the way back to its
 * notebooks after a loss, then the MCP Apps view (for clients that declare the extension).
 */
export function childPlugins(options: ChildPluginOptions = {}): readonly McpPlugin[] {
  const env = options.env ?? process.env;
  return [
    createLegacyTransportPlugin(),
    createNativeTransportPlugin(),
    createLocalDaemonPlugin({ env, ...options.localDaemon }),
    createHostedPlugin({ env }),
    ...appView(env),
  ];
}
