import { createServer, type Server } from 'node:net';
import { DaemonError } from '../daemon-error.js';

/**
 * `count` distinct TCP ports that were free on `host` a moment ago (all are held open together,
 * so they differ from each other). Does not guarantee they are still free when the kernel binds
 * them: another process may take one in between, which then shows up as a kernel start failure.
 * Rejects with `kernelStartFailed` when no port can be had.
 */
export async function findFreePorts(count: number, host = '127.0.0.1'): Promise<number[]> {
  const servers: Server[] = [];
  try {
    for (let index = 0; index < count; index += 1) {
      const server = createServer();
      servers.push(server);
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(0, host, () => {
          server.off('error', reject);
          resolve();
        });
      });
    }
    return servers.map((server) => {
      const address = server.address();
      if (address === null || typeof address === 'string') throw new Error('a TCP server has no port');
      return address.port;
    });
  } catch (error) {
    throw new DaemonError(
      'kernelStartFailed',
      `Cannot find free ports on ${host}: ${error instanceof Error ? error.message : String(error)}`,
      { cause: error },
    );
  } finally {
    await Promise.all(
      servers.map(
        (server) => new Promise<void>((resolve) => (server.listening ? server.close(() => resolve()) : resolve())),
      ),
    );
  }
}
