import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createUserEnvironment, type RawProxy, shippedBins, startRawProxy, waitFor } from './support/index.js';

const proxyBin = fileURLToPath(new URL('../packages/nteract-mcp/dist/nteract-mcp.js', import.meta.url));
const everything = fileURLToPath(
  new URL('../node_modules/@modelcontextprotocol/server-everything/dist/index.js', import.meta.url),
);
const cleanups: (() => Promise<void> | void)[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** The shipped proxy with default options (no --tool-cache) over server-everything, in a fresh HOME. */
async function connect(env: Record<string, string>): Promise<Client> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [proxyBin, '--child', process.execPath, '--child-arg', everything],
    env,
    cwd: env.HOME,
    stderr: 'pipe',
  });
  const client = new Client({ name: 'claude-code', version: '1.0.0' });
  await client.connect(transport);
  return client;
}

describe('nteract-mcp tool cache', () => {
  it('answers the first tools/list of a cold start with the full list, and keeps it under $XDG_CACHE_HOME', {
    timeout: 60_000,
  }, async () => {
    const root = mkdtempSync(join(tmpdir(), 'tool-cache-'));
    cleanups.push(() => rmSync(root, { recursive: true, force: true }));
    const env: Record<string, string> = {
      ...(process.env as Record<string, string>),
      HOME: join(root, 'home'),
      XDG_CACHE_HOME: join(root, 'xdg-cache'),
    };
    mkdirSync(env.HOME as string);
    const cacheFile = join(root, 'xdg-cache', 'nteract-mcp', 'tool-cache.json');

    const cold = await connect(env);
    cleanups.push(() => cold.close());
    const names = (await cold.listTools()).tools.map((tool) => tool.name);
    expect(names).toContain('echo');
    expect(names.at(-1)).toBe('reconnect');
    await vi.waitFor(() => expect(existsSync(cacheFile)).toBe(true), { timeout: 20_000, interval: 50 });
    const cached = (JSON.parse(readFileSync(cacheFile, 'utf8')) as { tools: { name: string }[] }).tools.map(
      (tool) => tool.name,
    );
    expect(cached).toEqual(names.slice(0, -1));
    expect(existsSync(join(root, 'home', '.cache', 'nteract-mcp'))).toBe(false);
    // The child's own description (to this client's era) is kept with its tools: the next start presents it at once.
    await vi.waitFor(
      () => expect(JSON.parse(readFileSync(cacheFile, 'utf8')).servers?.legacy?.name).toBe('mcp-servers/everything'),
      { timeout: 20_000, interval: 50 },
    );
    await cold.close();

    const warm = await connect(env);
    cleanups.push(() => warm.close());
    expect((await warm.listTools()).tools.map((tool) => tool.name)).toEqual(names);
    expect(warm.getServerVersion()?.name).toBe('mcp-servers/everything');
    expect(warm.getServerCapabilities()).toMatchObject({ prompts: {}, logging: {}, tools: { listChanged: true } });
  });

  it('shows a client of each era the description the child gave that era, and one of an era it gave none what it got before a cache existed (issue 46, 6)', {
    timeout: 120_000,
  }, async () => {
    const environment = createUserEnvironment(shippedBins.runtimed);
    cleanups.push(() => environment.cleanup());
    const fresh = createUserEnvironment(shippedBins.runtimed);
    cleanups.push(() => fresh.cleanup());
    const cacheFile = join(environment.dirs.cache, 'nteract-mcp', 'tool-cache.json');
    type Description = { capabilities: Record<string, unknown>; instructions?: string };
    const cached = (era: string): Description | undefined => {
      try {
        return (JSON.parse(readFileSync(cacheFile, 'utf8')) as { servers?: Record<string, Description> }).servers?.[
          era
        ];
      } catch {
        return undefined;
      }
    };
    const envelope = {
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientCapabilities': {},
      'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
    };
    const initialize = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    };
    const discover = { jsonrpc: '2.0', id: 1, method: 'server/discover', params: { _meta: envelope } };
    /** The proxy's answer to `first` in `env`; with `serve`, a child then comes up and describes itself in that era. */
    const firstAnswer = async (env: typeof environment, first: object, serve?: object[]) => {
      const proxy: RawProxy = startRawProxy(env);
      cleanups.push(() => proxy.stop());
      proxy.send(first);
      const { line } = await proxy.answer(1);
      for (const message of serve ?? []) proxy.send(message);
      if (serve) await proxy.answer(2);
      return { result: line.result as Record<string, unknown>, stop: () => proxy.stop() };
    };

    const cacheText = (): string => (existsSync(cacheFile) ? readFileSync(cacheFile, 'utf8') : '');

    // What a native client is answered before any cache exists.
    const uncached = await firstAnswer(fresh, discover);
    await uncached.stop();

    // A legacy client: its child's initialize answer is kept (written with the child's tools).
    const legacy = await firstAnswer(environment, initialize, [
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { jsonrpc: '2.0', id: 2, method: 'tools/list' },
    ]);
    await waitFor('the cache file', () => cacheText().includes('create_notebook'));
    await legacy.stop();
    const afterLegacy = cacheText();

    // A native client is not shown what the child told the legacy era: what it got before a cache existed.
    const native = await firstAnswer(environment, discover, [
      { jsonrpc: '2.0', id: 2, method: 'tools/list', params: { _meta: envelope } },
    ]);
    expect(native.result).toEqual(uncached.result);
    await waitFor('the native description in the cache', () => cacheText() !== afterLegacy && cached('native'));
    await native.stop();
    const legacyDescription = cached('legacy');
    const nativeDescription = cached('native');
    expect(legacyDescription?.capabilities.tasks).toBeDefined();
    expect(nativeDescription?.capabilities.tasks).toBeUndefined();

    // Each era from then on: the description its child gave it, before any child is up.
    const again = await firstAnswer(environment, initialize);
    await again.stop();
    expect(again.result.capabilities).toEqual({ ...legacyDescription?.capabilities, tools: { listChanged: true } });
    expect(again.result.instructions).toBe(legacyDescription?.instructions);
    const nativeAgain = await firstAnswer(environment, discover);
    await nativeAgain.stop();
    expect(nativeAgain.result.capabilities).toEqual({
      ...nativeDescription?.capabilities,
      tools: { listChanged: true },
    });
    expect(nativeAgain.result.instructions).toBe(nativeDescription?.instructions);
  });
});
