import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterEach, describe, expect, it, vi } from 'vitest';

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
    // The child's own description is kept with its tools: the next start presents it at once.
    await vi.waitFor(
      () => expect(JSON.parse(readFileSync(cacheFile, 'utf8')).server?.name).toBe('mcp-servers/everything'),
      { timeout: 20_000, interval: 50 },
    );
    await cold.close();

    const warm = await connect(env);
    cleanups.push(() => warm.close());
    expect((await warm.listTools()).tools.map((tool) => tool.name)).toEqual(names);
    expect(warm.getServerVersion()?.name).toBe('mcp-servers/everything');
    expect(warm.getServerCapabilities()).toMatchObject({ prompts: {}, logging: {}, tools: { listChanged: true } });
  });
});
