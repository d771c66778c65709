import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  ChildRuntime,
  Clock,
  childExitCodes,
  createChildMcpServer,
  createMcpContainer,
  DaemonPort,
  GuardedStdioTransport,
  handoffEnvironmentHelp,
  handoffFromEnvironment,
  joinCredentialChannel,
  KeptCredentials,
  Logger,
  type McpPlugin,
  NotebookTargetResolver,
  ProtocolAdmission,
  RecoveryContribution,
} from '@nteract-mcp/core';
import type { Container } from 'inversify';
import { childPlugins } from './distribution-plugins.js';
import { loadPluginModules } from './load-plugin-modules.js';
import { pluginModuleSpecifiers, pluginModulesEnvironmentVariable } from './plugin-module-specifiers.js';

export const runtMcpUsage = `runt-mcp: the nteract MCP server (one child of the nteract-mcp proxy).

Usage:
  runt-mcp [--plugin MODULE]...          Serve MCP on stdin/stdout (newline-delimited JSON-RPC).
  runt-mcp [--plugin MODULE]... --check  Build this process's composition and print what it loaded, as JSON.
  runt-mcp --help                        Show this help.
  runt-mcp --version                     Print the version.

  --plugin MODULE   Also load a third-party plugin: a module (a path, or a package name) that
                    exports createPlugin({ env, cwd }) returning the plugin. Repeatable.

Environment:
  RUNTIMED_SOCKET_PATH          The local daemon's socket (discovered like runtimed does when unset).
  JUPYTER_TOKEN                 Token for hosted notebook URLs without ?token= (never logged).
  JUPYTERHUB_API_TOKEN          JupyterHub API token for Hub URLs without ?token= (never logged).
  NTERACT_MCP_HOSTED_RETRY      A lost hosted notebook's retries: initial_ms,max_ms,attempts (default 1000,30000,10).
  NTERACT_MCP_HUB_START_TIMEOUT_SECS  How long a stopped JupyterHub server started by the backend is waited for (default 120).
  NTERACT_MCP_HUB_SERVER_OPTIONS  JSON object of spawner options sent with that start (e.g. {"profile": "gpu"}).
${handoffEnvironmentHelp.map(([name, meaning]) => `  ${name.padEnd(30)}${meaning}`).join('\n')}
  ${pluginModulesEnvironmentVariable.padEnd(30)}More plugin modules, separated like PATH (loaded after --plugin ones).
  NTERACT_MCP_KERNEL_ENV_DROP   Variables withheld from kernels, comma-separated (NAME, or PREFIX_*).
  NTERACT_MCP_KERNEL_ENV_KEEP   Hosted-server tokens (JUPYTER_TOKEN, ...) to pass to kernels anyway.
  NTERACT_MCP_NO_AUTOSTART=1    Do not start runtimed when none answers (nor after a daemon crash).
  NTERACT_MCP_LOG_LEVEL         debug | info | warn | error (logs go to stderr).
  XDG_CACHE_HOME                Base of the compile cache that speeds up start-up: nteract-mcp/compile-cache
                                under it (~/.cache when unset). Deleting it is safe.
A lost daemon is started again (back-off 100 ms doubling to 5 s) and the session rejoined by itself.
Exits ${childExitCodes.upgradeHandoff} when the daemon's version changed under it, so the proxy starts the new version.
`;

/** Where the distribution's `runtimed` bin is, for auto-starting the daemon. */
export function runtimedEntry(): string {
  return join(dirname(fileURLToPath(import.meta.url)), 'runtimed.js');
}

/**
 * Runs the child MCP server on stdio until stdin closes (exit 0) or the daemon's version changes
 * (the upgrade-handoff exit code). Resolves with the exit code; nothing but protocol goes to stdout.
 */
export async function runRuntMcp(argv: readonly string[], env: NodeJS.ProcessEnv): Promise<number> {
  const version = (createRequire(import.meta.url)('../package.json') as { version: string }).version;
  if (argv[0] === '--help' || argv[0] === '-h') {
    process.stdout.write(runtMcpUsage);
    return 0;
  }
  if (argv[0] === '--version' || argv[0] === '-V') {
    process.stdout.write(`runt-mcp ${version}\n`);
    return 0;
  }
  const flags: string[] = [];
  let check = false;
  for (let index = 0; index < argv.length; index++) {
    const arg = argv[index] as string;
    if (arg === '--check') check = true;
    else if (arg === '--plugin' && argv[index + 1]) flags.push(argv[++index] as string);
    else {
      process.stderr.write(
        arg === '--plugin'
          ? "runt-mcp: --plugin needs a module. Run 'runt-mcp --help'.\n"
          : `runt-mcp: unknown option '${arg}'. Run 'runt-mcp --help'.\n`,
      );
      return 2;
    }
  }
  let plugins: readonly McpPlugin[];
  try {
    plugins = [
      ...runtPlugins(env),
      ...(await loadPluginModules(pluginModuleSpecifiers(flags, env), { env, cwd: process.cwd() })),
    ];
    if (check) {
      process.stdout.write(`${JSON.stringify(checkReport(version, plugins))}\n`);
      return 0;
    }
  } catch (error) {
    process.stderr.write(`runt-mcp: ${(error as Error).message}\n`);
    return 2;
  }
  const container = createMcpContainer({ plugins });
  const handoff = handoffFromEnvironment(env);
  const logger = container.get(Logger).child('runt-mcp');
  // The tokens the proxy holds come first: the handoff rejoin below may need one.
  const credentialFd = Number(handoff.credentialFd);
  if (Number.isInteger(credentialFd) && credentialFd > 2) {
    await joinCredentialChannel(credentialFd, container.get(KeptCredentials), { logger: logger.child('credentials') });
  }
  const child = createChildMcpServer(container, {
    version,
    daemonVersion: await startupDaemonVersion(container),
    cwd: process.cwd(),
    agentSession: handoff.agentSession,
    ...(handoff.changeCursor === undefined ? {} : { changeCursor: handoff.changeCursor }),
    ...(handoff.knownTasks === undefined ? {} : { knownTasks: handoff.knownTasks }),
    // The person's, from the MCP client's config (the proxy passes its environment on): never the agent's.
    allowInstalls: env.NTERACT_MCP_ALLOW_INSTALLS === '1',
  });
  // Start-up order, the handoff rejoin before serving, the exit codes and shutdown are the runtime's.
  const runtime = container.get(ChildRuntime);
  process.stdin.once('end', () => void runtime.stop(0, 'stdin closed'));
  // The process lives until the runtime stops. Before it serves, a handed-over rejoin may wait on
  // nothing but unref'd timers and a detached daemon start, and Node would end the process there
  // (exit code 13: a top-level await that never settled), losing the notebook it was handed.
  const alive = setInterval(() => undefined, 2 ** 30);
  try {
    return await runtime.run({
      child,
      transport: new GuardedStdioTransport({ logger: logger.child('transport') }),
      handoff,
      cwd: process.cwd(),
    });
  } finally {
    clearInterval(alive);
  }
}

/** The daemon's version if it answers within 500 ms (for `serverInfo.title`). */
async function startupDaemonVersion(container: Container): Promise<string | undefined> {
  if (!container.isBound(DaemonPort)) return undefined;
  const clock = container.get(Clock);
  let timer: { cancel(): void } | undefined;
  const timeout = new Promise<undefined>((resolve) => {
    timer = clock.setTimer(500, () => resolve(undefined));
  });
  const observation = await Promise.race([
    container
      .get(DaemonPort)
      .queryInfo()
      .catch(() => undefined),
    timeout,
  ]);
  timer?.cancel();
  return observation?.kind === 'live' ? observation.info.version : undefined;
}

/** The child's composition: {@link childPlugins}, with the local daemon auto-started unless turned off. */
function runtPlugins(env: NodeJS.ProcessEnv) {
  return childPlugins({
    env,
    localDaemon: {
      autoStart:
        env.NTERACT_MCP_NO_AUTOSTART === '1' ? false : { command: process.execPath, args: [runtimedEntry(), 'start'] },
    },
  });
}

/** What this process loads: its plugins, target kinds (one notebook backend each), protocol eras and recovery contributions. */
function checkReport(version: string, plugins: readonly McpPlugin[]): Record<string, unknown> {
  const container = createMcpContainer({ plugins });
  return {
    version,
    plugins: plugins.map((plugin) => plugin.id),
    targetKinds: container.get(NotebookTargetResolver).supportedKinds(),
    protocolEras: container.getAll(ProtocolAdmission).map((admission) => admission.era),
    recovery: container.getAll(RecoveryContribution).map((contribution) => contribution.id),
  };
}
