import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  type ChildMcpServer,
  CoreError,
  childExitCodes,
  createChildMcpServer,
  createMcpContainer,
  DaemonPort,
  GuardedStdioTransport,
  handoffEnvironmentHelp,
  handoffFromEnvironment,
  Logger,
  NotebookTargetResolver,
  ProtocolAdmission,
  RejoinStrategy,
  SessionSlot,
} from '@nteract-mcp/core';
import { DaemonWatchLoop, type WatchLoopHandoff } from '@nteract-mcp/plugin-local-daemon';
import { childPlugins } from './distribution-plugins.js';

export const runtMcpUsage = `runt-mcp: the nteract MCP server (one child of the nteract-mcp proxy).

Usage:
  runt-mcp            Serve MCP on stdin/stdout (newline-delimited JSON-RPC).
  runt-mcp --help     Show this help.
  runt-mcp --version  Print the version.
  runt-mcp --check    Build this process's composition and print what it loaded, as JSON.

Environment:
  RUNTIMED_SOCKET_PATH          The local daemon's socket (discovered like runtimed does when unset).
${handoffEnvironmentHelp.map(([name, meaning]) => `  ${name.padEnd(30)}${meaning}`).join('\n')}
  NTERACT_MCP_NO_AUTOSTART=1    Do not start runtimed when none answers (nor after a daemon crash).
  NTERACT_MCP_LOG_LEVEL         debug | info | warn | error (logs go to stderr).
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
  if (argv[0] === '--check' && argv.length === 1) {
    process.stdout.write(`${JSON.stringify(checkReport(version, env))}\n`);
    return 0;
  }
  if (argv.length > 0) {
    process.stderr.write(`runt-mcp: unknown option '${argv[0]}'. Run 'runt-mcp --help'.\n`);
    return 2;
  }
  const container = createMcpContainer({ plugins: runtPlugins(env) });
  const given = handoffFromEnvironment(env);
  const logger = container.get(Logger).child('runt-mcp');
  const daemonVersion = await startupDaemonVersion(container.get(DaemonPort));
  const child: ChildMcpServer = createChildMcpServer(container, {
    version,
    daemonVersion,
    cwd: process.cwd(),
    agentSession: given.agentSession,
  });
  const handoff = parseHandoff(container.get(NotebookTargetResolver), given.rejoinNotebook, logger);
  const transport = new GuardedStdioTransport({ logger: logger.child('transport') });
  const loop = container.get(DaemonWatchLoop);

  return new Promise<number>((resolve) => {
    let finished = false;
    const finish = async (code: number, why: string): Promise<void> => {
      if (finished) return;
      finished = true;
      logger.info('runt-mcp stopping', { code, why });
      loop.stop();
      await child.close().catch(() => undefined);
      const slot = container.get(SessionSlot);
      await Promise.all([slot.active, ...slot.parked].map((session) => session?.handle.close().catch(() => undefined)));
      resolve(code);
    };
    const startWatching = (): void =>
      loop.start({
        // Before the (replayed) initialize arrives, the proxy's label keeps the client's name.
        peerLabel: () => (child.client() ? child.peerLabel() : (given.peerLabel ?? child.peerLabel())),
        handoff,
        onVersionChange: (from, to) => {
          logger.info('daemon upgraded; exiting for a restart', { from, to });
          void finish(childExitCodes.upgradeHandoff, `daemon version changed from ${from} to ${to}`);
        },
      });
    let watching = false;
    child.server.oninitialized = () => {
      if (!watching) startWatching();
      watching = true;
    };
    child.server.onclose = () => void finish(0, 'the MCP transport closed');
    process.stdin.once('end', () => void finish(0, 'stdin closed'));
    // With a handoff target (a restart by the proxy), rejoin before serving, so the first call
    // after the restart finds the notebook installed (bounded: the call still comes if it fails).
    const ready = handoff
      ? (() => {
          watching = true;
          startWatching();
          return Promise.race([loop.idle(), new Promise((resolve) => setTimeout(resolve, 15_000).unref())]);
        })()
      : Promise.resolve();
    void ready
      .then(() => child.connect(transport))
      .catch((error: unknown) => {
        logger.error('could not start the MCP transport', { error });
        void finish(1, 'transport failed');
      });
  });
}

/** The daemon's version if it answers within 500 ms (for `serverInfo.title`). */
async function startupDaemonVersion(daemon: DaemonPort): Promise<string | undefined> {
  const timeout = new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 500).unref());
  const observation = await Promise.race([daemon.queryInfo().catch(() => undefined), timeout]);
  return observation?.kind === 'live' ? observation.info.version : undefined;
}

function parseHandoff(
  resolver: NotebookTargetResolver,
  raw: string | undefined,
  logger: Logger,
): WatchLoopHandoff | undefined {
  if (!raw?.trim()) return undefined;
  try {
    return { requested: raw, target: resolver.resolve(raw, { cwd: process.cwd() }) };
  } catch (error) {
    const problem = CoreError.is(error) ? error.message : String(error);
    logger.warn('ignoring an unusable rejoin target from the proxy', { error: problem });
    return { requested: raw, problem };
  }
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

/** What this process loads: its plugins, target kinds, rejoin strategies and protocol eras. */
function checkReport(version: string, env: NodeJS.ProcessEnv): Record<string, unknown> {
  const plugins = runtPlugins(env);
  const container = createMcpContainer({ plugins });
  return {
    version,
    plugins: plugins.map((plugin) => plugin.id),
    targetKinds: container.get(NotebookTargetResolver).supportedKinds(),
    rejoinStrategies: container.getAll(RejoinStrategy).map((strategy) => strategy.id),
    protocolEras: container.getAll(ProtocolAdmission).map((admission) => admission.era),
  };
}
