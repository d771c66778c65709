// A client that ends its session the normal way (it closes the proxy's stdin), as a user's MCP
// client does on quit: the proxy stops its child cleanly (not a crash), the child leaves its
// notebooks, and the daemon keeps the kernel for its 30 s keep-alive, not a vanished peer's 180 s.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { isAlive, startUserSession, type UserSession, waitFor } from './support/index.js';

let session: UserSession | undefined;

afterEach(async () => {
  await session?.stop();
  session = undefined;
});

describe('a client that closes its session', () => {
  it('is a clean stop: the child exits 0 after leaving its notebook, and the kernel gets the 30 s keep-alive', async () => {
    session = await startUserSession();
    const s = session;
    expect((await s.call('create_notebook', { ephemeral: false })).isError).toBe(false);
    expect((await s.call('run_code', { code: 'print(1 + 1)' })).text).toContain('2');
    const daemonLog = join(dirname(s.socketPath), 'runtimed.log');
    const proxyPid = s.pids.proxy;
    // The client's stdin end of the proxy closes, as when the user quits the client.
    await s.client.close();
    await waitFor('the proxy to exit', () => !isAlive(proxyPid), { timeoutMs: 30_000 });
    const stderr = s.stderr();
    expect(stderr).not.toContain('"exitClass":"crash"');
    expect(stderr).toMatch(/child exited as asked \{[^}]*"exit":"exit code 0","exitClass":"clean-stop"/);
    const left = await waitFor('the daemon to see the peer leave', () => {
      const lines = readFileSync(daemonLog, 'utf8').split('\n');
      return lines.find((line) => line.includes('peer left') || line.includes('peer vanished'));
    });
    expect(left).toContain('peer left');
    expect(left).toContain('"kernelKeptMs":30000');
  }, 90_000);
});
