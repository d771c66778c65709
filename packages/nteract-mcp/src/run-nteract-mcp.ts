import { createPluginContainer, ProtocolAdmission } from '@nteract-mcp/core';
import type { RestartPolicySettings } from '@nteract-mcp/proxy';
import { proxyPlugins } from './distribution-plugins.js';
import { runNteractProxy } from './run-nteract-proxy.js';

/** What the command line of `nteract-mcp` accepts. */
export const nteractMcpUsage = `nteract-mcp: keeps an AI agent's Jupyter notebook, kernel and tools alive across MCP server
crashes, upgrades and daemon restarts.

Usage:
  nteract-mcp [options]

An MCP client starts this command and speaks MCP (newline-delimited JSON-RPC) on its
stdin/stdout. It supervises the MCP server child (runt-mcp), restarts it when it crashes or
the daemon is upgraded, and hands it the notebook to rejoin. Logs go to stderr.

Options:
  --child CMD            The child MCP server command (default: this distribution's runt-mcp).
  --child-arg ARG        An argument for --child (repeatable).
  --crash-budget N       Crash restarts allowed per window (default 5).
  --crash-window-secs N  The sliding crash window (default 30).
  --cool-down-secs N     How long the breaker stays open before one more attempt (default 60).
  --max-line-bytes N     Largest JSON-RPC line accepted from the client (default 16777216).
  --tool-cache PATH      Where the last good tool list is kept (default
                         $XDG_CACHE_HOME/nteract-mcp/tool-cache.json, else ~/.cache/nteract-mcp/tool-cache.json).
  --tool-list-wait-secs N  With no tool list known yet (first start, no cache), how long the first
                         tools/list waits for the MCP server's list (default 10).
  --notebook TARGET      Open this notebook when the MCP server starts, as connect_notebook would:
                         a path (relative to the working directory), a notebook id or a URL.
                         For clients that make one call per process; later restarts keep the
                         session the agent has then.
  --check                Build the proxy's composition and print what it loaded, as JSON.
  -h, --help             Show this help on stdout and exit.
  -V, --version          Print the version and exit.

Environment:
  RUNTIMED_SOCKET_PATH   Socket of the local daemon (default: $XDG_RUNTIME_DIR/runt/runtimed.sock,
                         else ~/.cache/runt/runtimed.sock).
  JUPYTER_TOKEN          Token for hosted notebook URLs without ?token=. Never logged. A token given
                         in a URL reaches a restarted MCP server too (in memory, on a private pipe).
  JUPYTERHUB_API_TOKEN   JupyterHub API token for Hub URLs without ?token=. Never logged.
  NTERACT_MCP_HOSTED_RETRY  How a lost hosted notebook is tried again after the first attempt:
                         initial_ms,max_ms,attempts (default 1000,30000,10: 1 s doubling to 30 s).
  NTERACT_MCP_HUB_START_TIMEOUT_SECS  How long a stopped JupyterHub user server the backend asked
                         the Hub to start is waited for (default 120).
  NTERACT_MCP_HUB_SERVER_OPTIONS  A JSON object of spawner options sent with that start
                         (e.g. {"profile": "gpu"}).
  NTERACT_MCP_KERNEL_ENV_DROP  Variables of this environment withheld from kernels, comma-separated
                         (NAME, or PREFIX_*); kernels get the rest, never NTERACT_MCP_* or tokens.
  NTERACT_MCP_KERNEL_ENV_KEEP  Hosted-server tokens (JUPYTER_TOKEN, ...) to pass to kernels anyway.
  XDG_CACHE_HOME         Base of the default tool cache path.
  NTERACT_MCP_LOG_LEVEL  debug | info | warn | error (logs go to stderr).
`;

export interface CommandIo {
  readonly stdout: { write(text: string): unknown };
  readonly stderr: { write(text: string): unknown };
}

const numericOptions: Readonly<Record<string, { key: keyof RestartPolicySettings; scale: number }>> = {
  '--crash-budget': { key: 'crashBudget', scale: 1 },
  '--crash-window-secs': { key: 'crashWindowMs', scale: 1000 },
  '--cool-down-secs': { key: 'coolDownMs', scale: 1000 },
};

/**
 * Runs the command line and resolves with the exit code. Without `--help`, `--version` or
 * `--check` it runs the proxy; stdout then carries protocol bytes only.
 */
export async function runNteractMcp(argv: readonly string[], io: CommandIo, version: string): Promise<number> {
  let child: string | undefined;
  const childArgs: string[] = [];
  const policy: Record<string, number> = {};
  let toolCachePath: string | undefined;
  let maxLineBytes: number | undefined;
  let toolListWaitMs: number | undefined;
  let startNotebook: string | undefined;
  for (let index = 0; index < argv.length; index++) {
    const arg = argv[index] as string;
    const value = (): string | undefined => argv[++index];
    if (arg === '-h' || arg === '--help') {
      io.stdout.write(nteractMcpUsage);
      return 0;
    }
    if (arg === '-V' || arg === '--version') {
      io.stdout.write(`nteract-mcp ${version}\n`);
      return 0;
    }
    if (arg === '--check') return check(io, version);
    if (arg === '--child') child = value();
    else if (arg === '--child-arg') childArgs.push(value() ?? '');
    else if (arg === '--tool-cache') toolCachePath = value();
    else if (arg === '--notebook') {
      startNotebook = value()?.trim();
      if (!startNotebook) {
        io.stderr.write('nteract-mcp: --notebook needs a notebook path, id or URL.\n');
        return 2;
      }
    } else if (arg === '--tool-list-wait-secs') {
      const text = value() ?? '';
      if (!/^\d+$/.test(text) || Number(text) < 1 || Number(text) > 600) {
        io.stderr.write(`nteract-mcp: --tool-list-wait-secs needs a whole number from 1 to 600, got '${text}'.\n`);
        return 2;
      }
      toolListWaitMs = Number(text) * 1000;
    } else if (arg === '--max-line-bytes') {
      const text = value() ?? '';
      if (!/^\d+$/.test(text) || Number(text) < 1024) {
        io.stderr.write(`nteract-mcp: --max-line-bytes needs a whole number of at least 1024, got '${text}'.\n`);
        return 2;
      }
      maxLineBytes = Number(text);
    } else if (arg in numericOptions) {
      const spec = numericOptions[arg] as (typeof numericOptions)[string];
      const text = value() ?? '';
      if (!/^\d+$/.test(text) || Number(text) < 1) {
        io.stderr.write(`nteract-mcp: ${arg} needs a whole number of at least 1, got '${text}'.\n`);
        return 2;
      }
      policy[spec.key] = Number(text) * spec.scale;
    } else {
      io.stderr.write(`nteract-mcp: unknown option '${arg}'. Run 'nteract-mcp --help' for usage.\n`);
      return 2;
    }
  }
  if (child === '' || (child === undefined && childArgs.length > 0)) {
    io.stderr.write('nteract-mcp: --child needs a command (and --child-arg needs --child).\n');
    return 2;
  }
  return runNteractProxy({
    version,
    childCommand: child === undefined ? undefined : [child, ...childArgs],
    restartPolicy: Object.keys(policy).length > 0 ? (policy as Partial<RestartPolicySettings>) : undefined,
    toolCachePath,
    maxLineBytes,
    toolListWaitMs,
    startNotebook,
  });
}

/** What this process loaded: its plugins and the protocol eras it speaks upstream. */
function check(io: CommandIo, version: string): number {
  const plugins = proxyPlugins();
  const container = createPluginContainer({ plugins });
  const report = {
    version,
    plugins: plugins.map((plugin) => plugin.id),
    protocolEras: container.getAll(ProtocolAdmission).map((admission) => admission.era),
  };
  io.stdout.write(`${JSON.stringify(report)}\n`);
  return 0;
}
