import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { startTestDaemon, type TestDaemon } from '@nteract-mcp/daemon/testing';
import { afterEach, describe, expect, it } from 'vitest';

const runtMcp = fileURLToPath(new URL('../packages/nteract-mcp/dist/runt-mcp.js', import.meta.url));
const daemons: TestDaemon[] = [];

afterEach(async () => {
  delete process.env.RUNTIMED_REPORTED_VERSION;
  // The restarted daemons first: the first one owns the directory they all share and removes it.
  for (const daemon of daemons.splice(0).reverse()) await daemon.dispose();
});

describe('runt-mcp and a daemon upgrade', () => {
  it('closes its transport and exits 75 when the daemon comes back with another version; a same-version restart does not', {
    timeout: 60_000,
  }, async () => {
    process.env.RUNTIMED_REPORTED_VERSION = '1.0.0';
    const first = await startTestDaemon(['--no-kernels']);
    daemons.push(first);
    const child = spawn(process.execPath, [runtMcp], {
      env: { ...process.env, RUNTIMED_SOCKET_PATH: first.socketPath, NTERACT_MCP_NO_AUTOSTART: '1' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
    });
    let stdoutEnded = false;
    child.stdout.on('end', () => {
      stdoutEnded = true;
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    child.stdin.write(
      `${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'probe', version: '1' } } })}\n`,
    );
    child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
    const deadline = Date.now() + 10_000;
    while (!stdout.includes('"id":1') && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(JSON.parse(stdout.split('\n')[0] ?? '{}').result.serverInfo.title).toBe('nteract (daemon 1.0.0)');

    await first.stop();
    const sameVersion = await first.restart();
    daemons.push(sameVersion);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(child.exitCode).toBeNull();

    await sameVersion.stop();
    process.env.RUNTIMED_REPORTED_VERSION = '1.1.0';
    const upgraded = await sameVersion.restart();
    daemons.push(upgraded);
    const code = await Promise.race([
      exited,
      new Promise<string>((resolve) => setTimeout(() => resolve('still running'), 20_000)),
    ]);
    expect(code).toBe(75);
    expect(stdoutEnded).toBe(true);
    for (const line of stdout.split('\n').filter(Boolean)) expect(() => JSON.parse(line)).not.toThrow();
  });
});
