import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  type ChildMcpServer,
  CoreError,
  createChildMcpServer,
  createMcpContainer,
  DaemonPort,
  GuardedStdioTransport,
  Logger,
  NotebookTargetResolver,
  SessionSlot,
} from '@nteract-mcp/core';
import { createLocalDaemonPlugin, DaemonWatchLoop, type WatchLoopHandoff } from '@nteract-mcp/plugin-local-daemon';

/** Exit code of an intentional handoff after a daemon upgrade (the proxy restarts at once). */
export const daemonUpgradeExitCode = 75;

export const runtMcpUsage = `runt-mcp: the nteract MCP server (one child of the nteract-mcp proxy).

Usage:
  runt-mcp            Serve MCP on stdin/stdout (newline-delimited JSON-RPC).
  runt-mcp --help     Show this help.
  runt-mcp --version  Print the version.

Environment:
  RUNTIMED_SOCKET_PATH          The local daemon's socket (discovered like runtimed does when unset).
  NTERACT_MCP_REJOIN_NOTEBOOK   A notebook to rejoin at start (path, UUID); set by the proxy on restarts.
  NTERACT_MCP_AGENT_SESSION     The <session> part of the peer label suffix agent:<slug>:<session>.
  NTERACT_MCP_PEER_LABEL        The peer label to use until the client's initialize arrives (set by the proxy).
  NTERACT_MCP_NO_AUTOSTART=1    Do not start runtimed when none answers (nor after a daemon crash).
  NTERACT_MCP_LOG_LEVEL         debug | info | warn | error (logs go to stderr).
A lost daemon is started again (back-off 100 ms doubling to 5 s) and the session rejoined by itself.
Exits 75 when the daemon's version changed under it, so the proxy starts the new version.
`;

/** Where the distribution's `runtimed` bin is, for auto-starting the daemon. */
export function runtimedEntry(): string {
  return join(dirname(fileURLToPath(import.meta.url)), 'runtimed.js');
}

/**
 * Runs the child MCP server on stdio until stdin closes (exit 0) or the daemon's version changes
 * (exit 75). Resolves with the exit code; nothing but protocol goes to stdout.
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
  if (argv.length > 0) {
    process.stderr.write(`runt-mcp: unknown option '${argv[0]}'. Run 'runt-mcp --help'.\n`);
    return 2;
  }
  const container = createMcpContainer({
    plugins: [
      createLocalDaemonPlugin({
        env,
        autoStart:
          env.NTERACT_MCP_NO_AUTOSTART === '1'
            ? false
            : { command: process.execPath, args: [runtimedEntry(), 'start'] },
      }),
    ],
  });
  const logger = container.get(Logger).child('runt-mcp');
  const daemonVersion = await startupDaemonVersion(container.get(DaemonPort));
  const child: ChildMcpServer = createChildMcpServer(container, {
    version,
    daemonVersion,
    cwd: process.cwd(),
    agentSession: env.NTERACT_MCP_AGENT_SESSION?.trim() || undefined,
  });
  const handoff = parseHandoff(container.get(NotebookTargetResolver), env.NTERACT_MCP_REJOIN_NOTEBOOK, logger);
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
        peerLabel: () =>
          child.server.getClientVersion() ? child.peerLabel() : env.NTERACT_MCP_PEER_LABEL?.trim() || child.peerLabel(),
        handoff,
        onVersionChange: (from, to) => {
          logger.info('daemon upgraded; exiting 75 for a restart', { from, to });
          void finish(daemonUpgradeExitCode, `daemon version changed from ${from} to ${to}`);
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
      .then(() => child.server.connect(transport))
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
    logger.warn('ignoring an unusable NTERACT_MCP_REJOIN_NOTEBOOK', { error: problem });
    return { requested: raw, problem };
  }
}
