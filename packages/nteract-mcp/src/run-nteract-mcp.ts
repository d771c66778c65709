import { NotebookTargetResolver, ProtocolAdmission } from '@nteract-mcp/core';
import { createDistributionContainer, distributionPlugins } from './create-distribution-container.js';

/** What the command line of `nteract-mcp` accepts today. */
export const nteractMcpUsage = `nteract-mcp: keeps an AI agent's Jupyter notebook, kernel and tools alive across MCP server
crashes, upgrades and daemon restarts.

Usage:
  nteract-mcp [options]

An MCP client starts this command and speaks MCP (JSON-RPC lines) on its stdin/stdout.
The supervising proxy is not part of this release yet: started without options, the
command prints this help on stderr and exits 0, leaving stdout silent.

Options:
  -h, --help       Show this help on stdout and exit.
  -V, --version    Print the version and exit.
  --check          Build the distribution (all plugins) and print what it supports, as JSON.

Environment:
  RUNTIMED_SOCKET_PATH   Socket of the local daemon (default: $XDG_RUNTIME_DIR/runt/runtimed.sock,
                         else ~/.cache/runt/runtimed.sock).
  JUPYTER_TOKEN          Token for hosted notebook URLs without ?token=. Never logged.
  NTERACT_MCP_LOG_LEVEL  debug | info | warn | error (logs go to stderr).
`;

export interface CommandIo {
  readonly stdout: { write(text: string): unknown };
  readonly stderr: { write(text: string): unknown };
}

/**
 * Runs the command line and returns the exit code. Writes to stdout only what was asked for
 * (`--help`, `--version`, `--check`): stdout belongs to the MCP protocol otherwise.
 */
export function runNteractMcp(argv: readonly string[], io: CommandIo, version: string): number {
  const [first, ...rest] = argv;
  if (rest.length > 0) {
    io.stderr.write(`nteract-mcp: unexpected argument '${rest[0]}'. Run 'nteract-mcp --help' for usage.\n`);
    return 2;
  }
  switch (first) {
    case undefined:
      io.stderr.write(nteractMcpUsage);
      return 0;
    case '-h':
    case '--help':
      io.stdout.write(nteractMcpUsage);
      return 0;
    case '-V':
    case '--version':
      io.stdout.write(`nteract-mcp ${version}\n`);
      return 0;
    case '--check': {
      const container = createDistributionContainer();
      const report = {
        version,
        plugins: distributionPlugins().map((plugin) => plugin.id),
        targetKinds: container.get(NotebookTargetResolver).supportedKinds(),
        protocolEras: container.getAll(ProtocolAdmission).map((admission) => admission.era),
      };
      io.stdout.write(`${JSON.stringify(report)}\n`);
      return 0;
    }
    default:
      io.stderr.write(`nteract-mcp: unknown option '${first}'. Run 'nteract-mcp --help' for usage.\n`);
      return 2;
  }
}
