// A client that ends its session the normal way (it closes the proxy's stdin), as a user's MCP
// client does on quit: the proxy stops its child cleanly (not a crash), the child leaves its
// notebooks, and the daemon keeps the kernel for its 30 s keep-alive, not a vanished peer's 180 s.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  childrenOf,
  createUserEnvironment,
  isAlive,
  shippedBins,
  startUserSession,
  type UserEnvironment,
  type UserSession,
  waitFor,
} from './support/index.js';

let session: UserSession | undefined;
let environment: UserEnvironment | undefined;

afterEach(async () => {
  await session?.stop();
  session = undefined;
  await environment?.cleanup();
  environment = undefined;
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

// A client that is killed, or kills the proxy (SIGTERM, as clients stop a server), closes nothing
// politely: the proxy dies at once and its child finds its stdin closed and its stdout gone. In the
// 2026-07-28 era the proxy holds a `subscriptions/listen` stream on its child, which the child ends
// with a last write when it stops: that write meets EPIPE, and must not keep the child alive.
describe('a client that kills the proxy', () => {
  const envelope = {
    'io.modelcontextprotocol/protocolVersion': '2026-07-28',
    'io.modelcontextprotocol/clientCapabilities': {},
  };
  const eras = {
    '2026-07-28': [{ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: envelope } }],
    '2025-11-25': [
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
      },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} },
    ],
  } as const;

  for (const [era, messages] of Object.entries(eras)) {
    it(`leaves no child behind (${era} era): the child exits by itself once the proxy is gone`, {
      timeout: 60_000,
    }, async () => {
      environment = createUserEnvironment(shippedBins.runtimed);
      const proxy = spawn(process.execPath, [shippedBins.proxy], {
        env: { ...environment.env },
        cwd: environment.dirs.project,
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      let out = '';
      let stderr = '';
      proxy.stdout.setEncoding('utf8').on('data', (chunk: string) => {
        out += chunk;
      });
      proxy.stderr.setEncoding('utf8').on('data', (chunk: string) => {
        stderr += chunk;
      });
      for (const message of messages) proxy.stdin.write(`${JSON.stringify(message)}\n`);
      const lastId = (messages.at(-1) as { id: number }).id;
      await waitFor('the tool list', () =>
        out.split('\n').some((line) => line.startsWith(`{"jsonrpc":"2.0","id":${lastId},"result"`)),
      );
      const child = await waitFor(
        'the child',
        () => childrenOf(proxy.pid as number).find((info) => info.cmdline.includes('runt-mcp'))?.pid,
      );
      proxy.kill('SIGTERM');
      await waitFor('the proxy to exit', () => !isAlive(proxy.pid as number));
      await waitFor(`the child ${child} to exit\n${stderr}`, () => !isAlive(child), { timeoutMs: 30_000 });
    });
  }
});
