import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  ClientExtension,
  Clock,
  ContributionProvider,
  createPluginContainer,
  Logger,
  ProtocolAdmission,
} from '@nteract-mcp/core';
import { holdYoungGenerationAtStart, mallocArenaEnvironment, youngGenerationFlags } from '@nteract-mcp/foundation';
import {
  ChildSupervisor,
  defaultToolCachePath,
  McpProxy,
  RestartPolicySettings,
  ToolListCache,
} from '@nteract-mcp/proxy';
import { proxyPlugins } from './distribution-plugins.js';

export interface ProxyCommandOptions {
  /** The child command and its arguments; default: this distribution's `runt-mcp`. */
  readonly childCommand?: readonly string[];
  readonly restartPolicy?: Partial<RestartPolicySettings>;
  readonly toolCachePath?: string;
  readonly maxLineBytes?: number;
  /** See `McpProxyOptions.toolListWaitMs`. */
  readonly toolListWaitMs?: number;
  /** See `McpProxyOptions.startNotebook`. */
  readonly startNotebook?: string;
  readonly version: string;
}

/** The distribution's `runt-mcp` entry (next to this file once built). */
export function bundledChildEntry(): string {
  return join(dirname(fileURLToPath(import.meta.url)), 'runt-mcp.js');
}

/**
 * Runs the proxy on this process's stdin/stdout until stdin closes. Resolves with the exit code.
 * A missing child binary is reported with an install hint on stderr and exit 1, before any MCP.
 */
export async function runNteractProxy(options: ProxyCommandOptions): Promise<number> {
  // The proxy lives as long as the client and keeps little alive between calls: its young
  // generation stays at its first size (see foundation's holdYoungGenerationAtStart).
  holdYoungGenerationAtStart(process.env);
  // The distribution's own child lives as long as the client: its young generation is capped, and
  // its malloc arenas limited (see foundation's mallocArenaEnvironment).
  const [command, ...args] = options.childCommand ?? [
    process.execPath,
    ...youngGenerationFlags(process.env),
    bundledChildEntry(),
  ];
  const childPath = options.childCommand ? command : args.at(-1);
  if (!command || (childPath?.includes('/') && !existsSync(childPath))) {
    process.stderr.write(
      `nteract-mcp: the MCP server child '${childPath ?? command ?? ''}' was not found.\n` +
        'Install or build nteract-mcp (npm ci && npx turbo run build), or pass --child <command>.\n',
    );
    return 1;
  }
  const container = createPluginContainer({ plugins: proxyPlugins() });
  if (options.restartPolicy) container.rebind(RestartPolicySettings).toConstantValue(options.restartPolicy);
  const logger = container.get(Logger).child('nteract-mcp');
  const tools = new ToolListCache({
    builtInTools: [],
    logger,
    filePath: options.toolCachePath || defaultToolCachePath(process.env),
  });
  return new Promise<number>((resolve) => {
    const proxy = new McpProxy({
      input: process.stdin,
      output: process.stdout,
      supervisor: container.get(ChildSupervisor),
      // The upstream protocol eras are the composition's: without the legacy plugin, no initialize.
      eras: container.get<ContributionProvider<ProtocolAdmission>>(ContributionProvider, { name: ProtocolAdmission }),
      extensions: container.get<ContributionProvider<ClientExtension>>(ContributionProvider, { name: ClientExtension }),
      tools,
      clock: container.get(Clock),
      logger,
      version: options.version,
      resolveChild: () => ({
        command,
        args,
        env: options.childCommand ? process.env : mallocArenaEnvironment(process.env),
      }),
      maxLineBytes: options.maxLineBytes,
      toolListWaitMs: options.toolListWaitMs,
      startNotebook: options.startNotebook,
      onExit: resolve,
    });
    // The client went away under a write (EPIPE): nobody can be answered; stop the child and exit.
    process.stdout.on('error', (error) => {
      logger.info('stdout closed under a write; stopping', { error: error.message });
      void proxy.close(0);
    });
    void proxy.start();
  });
}
