import { shippedBins } from './shipped-bins.js';

/** What a stdio client transport of either SDK takes to start the server: the shape both share. */
export interface ProxyCommand {
  readonly command: string;
  readonly args: string[];
  readonly env: Record<string, string>;
  readonly cwd: string;
  readonly stderr: 'pipe';
}

/** A stdio client transport of any SDK generation, as far as starting the proxy needs. */
export interface StderrPipingTransport {
  readonly stderr: { on(event: 'data', listener: (chunk: Buffer | string) => void): unknown } | null;
}

/** Where the proxy runs: a user environment's variables and project directory. */
export interface ProxyPlace {
  readonly env: Readonly<Record<string, string>>;
  readonly cwd: string;
}

/**
 * The shipped `nteract-mcp` bin as a client starts it, behind the client's own stdio transport
 * (`Transport`: the v1 SDK's, the v2 client's, or a subclass), with `place`'s environment and
 * working directory and `args` after the bin; what it writes to stderr is kept for the test's
 * failure messages. The transport is not started: the client's `connect` does that.
 */
export function spawnShippedProxy<T extends StderrPipingTransport>(
  Transport: new (command: ProxyCommand) => T,
  place: ProxyPlace,
  args: readonly string[] = [],
): { transport: T; stderr(): string } {
  const transport = new Transport({
    command: process.execPath,
    args: [shippedBins.proxy, ...args],
    env: { ...place.env },
    cwd: place.cwd,
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer | string) => {
    stderr += chunk.toString();
  });
  return { transport, stderr: () => stderr };
}
