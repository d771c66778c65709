import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { findFreePorts } from './find-free-ports.js';

describe(findFreePorts, () => {
  it('returns distinct ports that can be bound on 127.0.0.1', async () => {
    const ports = await findFreePorts(5);
    expect(new Set(ports).size).toBe(5);
    for (const port of ports) {
      const server = createServer();
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, '127.0.0.1', resolve);
      });
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
