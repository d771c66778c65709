import { fileURLToPath } from 'node:url';
import {
  ChildRuntime,
  createChildMcpServer,
  createMcpContainer,
  GuardedStdioTransport,
  handoffFromEnvironment,
  Logger,
  type McpPlugin,
} from '@nteract-mcp/core';
import { createLocalDaemonPlugin } from '@nteract-mcp/plugin-local-daemon';
import { createLegacyTransportPlugin } from '@nteract-mcp/plugin-transport-legacy';
import { createOutlinePlugin } from './create-outline-plugin.js';

/**
 * Our plugin set: the `initialize`-based protocol era (no native era), local notebooks in the
 * `runtimed` daemon (started from `@nteract-mcp/daemon` when none answers), and our own tool.
 */
export function outlineServerPlugins(env: NodeJS.ProcessEnv): readonly McpPlugin[] {
  const runtimed = fileURLToPath(import.meta.resolve('@nteract-mcp/daemon/runtimed'));
  return [
    createLegacyTransportPlugin(),
    createLocalDaemonPlugin({ env, autoStart: { command: process.execPath, args: [runtimed, 'start'] } }),
    createOutlinePlugin(),
  ];
}

/** Serves MCP on stdin/stdout until stdin closes; resolves with the exit code. Logs go to stderr. */
export async function runOutlineServer(env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const container = createMcpContainer({ plugins: outlineServerPlugins(env) });
  const child = createChildMcpServer(container, { version: '0.1.0', cwd: process.cwd() });
  const runtime = container.get(ChildRuntime);
  process.stdin.once('end', () => void runtime.stop(0, 'stdin closed'));
  return runtime.run({
    child,
    transport: new GuardedStdioTransport({ logger: container.get(Logger).child('outline-mcp') }),
    handoff: handoffFromEnvironment(env),
    cwd: process.cwd(),
  });
}
