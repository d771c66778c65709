import { link, mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { RecordingLogger } from '@nteract-mcp/foundation/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  defaultToolCachePath,
  reconnectTool,
  reconnectToolName,
  ToolListCache,
  toolListChangedIncompatiblyMessage,
} from './tool-list-cache.js';

const tool = (name: string, description = `${name} tool`): Tool => ({
  name,
  description,
  inputSchema: { type: 'object', properties: {} },
});
const names = (tools: readonly Tool[]) => tools.map((entry) => entry.name);
const builtInTools = [tool('connect_notebook'), tool('create_notebook')];

let directory: string;
let filePath: string;

beforeEach(async () => {
  directory = await mkdtemp(join(tmpdir(), 'tool-list-cache-'));
  filePath = join(directory, 'cache', 'tool-cache.json');
});

afterEach(async () => {
  await rm(directory, { recursive: true, force: true });
});

/** The cache file as stored: `{ tools?, server? }`. */
async function storedFile(path: string): Promise<{ tools: Tool[]; servers?: unknown }> {
  return JSON.parse(await readFile(path, 'utf8')) as { tools: Tool[]; servers?: unknown };
}

async function writeCacheFile(text: string): Promise<void> {
  await mkdir(join(directory, 'cache'), { recursive: true });
  await writeFile(filePath, text);
}

describe(ToolListCache, () => {
  it('loads a cache file written before', async () => {
    await writeCacheFile(JSON.stringify([tool('only_tool')]));
    const cache = new ToolListCache({ filePath, builtInTools });
    expect(names(await cache.load())).toEqual(['only_tool']);
    expect(names(cache.current())).toEqual(['only_tool']);
    expect(cache.source()).toBe('disk');
  });

  it('serves the built-in list without a cache file, and before loading', async () => {
    const cache = new ToolListCache({ filePath, builtInTools });
    expect(names(cache.current())).toEqual(['connect_notebook', 'create_notebook']);
    expect(names(await cache.load())).toEqual(['connect_notebook', 'create_notebook']);
    expect(cache.source()).toBe('built-in');
  });

  it.each([
    ['not JSON', 'not json'],
    ['not an array', '{"tools": []}'],
    ['an empty array', '[]'],
    ['entries that are not tools', '[{"description": "no name"}]'],
  ])('ignores a cache file that is %s, logs it, and serves the built-in list', async (_label, text) => {
    await writeCacheFile(text);
    const logger = new RecordingLogger();
    const cache = new ToolListCache({ filePath, builtInTools, logger });
    expect(names(await cache.load())).toEqual(['connect_notebook', 'create_notebook']);
    expect(cache.source()).toBe('built-in');
    expect(logger.find('tool cache', 'warn')).toHaveLength(1);
    expect(logger.records[0]?.scope).toBe('core:ToolListCache');
  });

  describe('the server description', () => {
    const server = {
      name: 'runt',
      version: '2',
      title: 'nteract (daemon 1.0.0)',
      capabilities: { tools: {}, prompts: {} },
      instructions: 'Use the tools.',
    };

    it('loads an old-format file (a bare tool list) with no server description', async () => {
      await writeCacheFile(JSON.stringify([tool('only_tool')]));
      const cache = new ToolListCache({ filePath, builtInTools });
      expect(names(await cache.load())).toEqual(['only_tool']);
      expect(cache.server('legacy')).toBeUndefined();
    });

    it('keeps a learned description with the live tools in the file, and a new cache loads both', async () => {
      const first = new ToolListCache({ filePath, builtInTools });
      await first.load();
      // No child tool list yet: nothing is written (the built-in list is never stored as a child's).
      expect(await first.learnServer('legacy', server)).toBe(false);
      await first.update([tool('a')]);
      expect(await storedFile(filePath)).toEqual({ tools: [tool('a')], servers: { legacy: server } });
      const second = new ToolListCache({ filePath, builtInTools });
      expect(names(await second.load())).toEqual(['a']);
      expect(second.server('legacy')).toEqual(server);
      // A changed description is written at once once a child's list is known; the same one is not.
      expect(await second.learnServer('legacy', { ...server, title: 'nteract (daemon 1.1.0)' })).toBe(true);
      expect(await second.learnServer('legacy', { ...server, title: 'nteract (daemon 1.1.0)' })).toBe(false);
      expect((await storedFile(filePath)).servers).toEqual({ legacy: { ...server, title: 'nteract (daemon 1.1.0)' } });
    });

    it('keeps one description per era: what a child told one era is never what another era is shown', async () => {
      const discovered = { ...server, capabilities: { tools: {}, extensions: { 'example/tasks': {} } } };
      const first = new ToolListCache({ filePath, builtInTools });
      await first.load();
      await first.update([tool('a')]);
      expect(await first.learnServer('era-one', server)).toBe(true);
      expect(first.server('era-two')).toBeUndefined();
      expect(await first.learnServer('era-two', discovered)).toBe(true);
      expect(first.server('era-one')).toEqual(server);
      expect(await storedFile(filePath)).toMatchObject({ servers: { 'era-one': server, 'era-two': discovered } });
      const second = new ToolListCache({ filePath, builtInTools });
      await second.load();
      expect(second.server('era-one')).toEqual(server);
      expect(second.server('era-two')).toEqual(discovered);
      expect(second.server('era-three')).toBeUndefined();
    });

    it("leaves out the single description of the format before eras (its era is unknown), and keeps the file's tools", async () => {
      await writeCacheFile(JSON.stringify({ tools: [tool('a')], server }));
      const cache = new ToolListCache({ filePath, builtInTools });
      expect(names(await cache.load())).toEqual(['a']);
      expect(cache.server('legacy')).toBeUndefined();
      expect(cache.server('native')).toBeUndefined();
      await cache.learnServer('legacy', server);
      expect(await storedFile(filePath)).toEqual({ tools: [tool('a')], servers: { legacy: server } });
    });

    it('ignores an unusable server description and still serves the stored tools and the usable ones', async () => {
      await writeCacheFile(
        JSON.stringify({ tools: [tool('a')], servers: { legacy: { name: 'runt' }, native: server } }),
      );
      const logger = new RecordingLogger();
      const cache = new ToolListCache({ filePath, builtInTools, logger });
      expect(names(await cache.load())).toEqual(['a']);
      expect(cache.server('legacy')).toBeUndefined();
      expect(cache.server('native')).toEqual(server);
      expect(logger.find('server description', 'warn')).toHaveLength(1);
      await writeCacheFile(JSON.stringify({ tools: [tool('a')], servers: [server] }));
      const again = new ToolListCache({ filePath, builtInTools, logger });
      expect(names(await again.load())).toEqual(['a']);
      expect(logger.find('server description', 'warn')).toHaveLength(2);
    });
  });

  it('finds a tool of the list served now by name', async () => {
    const cache = new ToolListCache({ filePath, builtInTools: [tool('a')] });
    expect(cache.find('a')?.name).toBe('a');
    expect(cache.find('b')).toBeUndefined();
    await cache.update([tool('b'), tool('c', 'first'), tool('c', 'second')]);
    expect(cache.find('a')).toBeUndefined();
    expect(cache.find('b')?.name).toBe('b');
    expect(cache.find('c')?.description).toBe('first');
  });

  it('finds by name in the list loaded from disk, not the built-in one asked before', async () => {
    await writeCacheFile(JSON.stringify([tool('stored')]));
    const cache = new ToolListCache({ filePath, builtInTools: [tool('a')] });
    expect(cache.find('a')?.name).toBe('a');
    await cache.load();
    expect(cache.find('a')).toBeUndefined();
    expect(cache.find('stored')?.name).toBe('stored');
  });

  it('keeps fields of cached tools it does not know', async () => {
    const future = { ...tool('future'), annotations: { readOnlyHint: true }, someNewField: { x: 1 } };
    await writeCacheFile(JSON.stringify([future]));
    const cache = new ToolListCache({ filePath, builtInTools });
    expect(await cache.load()).toEqual([future]);
  });

  it('round-trips a live list through the file', async () => {
    const live = [tool('a'), tool('b'), tool('c')];
    const first = new ToolListCache({ filePath, builtInTools });
    expect((await first.update(live)).persisted).toBe(true);
    const second = new ToolListCache({ filePath, builtInTools });
    expect(await second.load()).toEqual(live);
    expect((await storedFile(filePath)).tools).toEqual(live);
  });

  it('overwrites an existing cache file', async () => {
    await writeCacheFile(JSON.stringify([tool('old')]));
    const cache = new ToolListCache({ filePath, builtInTools });
    await cache.load();
    await cache.update([tool('new')]);
    expect(names((await storedFile(filePath)).tools)).toEqual(['new']);
  });

  it('never persists or serves an empty list', async () => {
    const cache = new ToolListCache({ filePath, builtInTools });
    await cache.load();
    expect(await cache.update([])).toEqual({
      changed: false,
      removed: [],
      added: [],
      modified: [],
      comparedWith: 'built-in',
      persisted: false,
    });
    expect(names(cache.current())).toEqual(['connect_notebook', 'create_notebook']);
    await expect(readdir(directory)).resolves.toEqual([]);

    await cache.update([tool('a')]);
    await cache.update([]);
    expect(names(cache.current())).toEqual(['a']);
    expect(names((await storedFile(filePath)).tools)).toEqual(['a']);
  });

  describe('comparing a live list with the previous one', () => {
    async function cacheWith(tools: Tool[]): Promise<ToolListCache> {
      const cache = new ToolListCache({ filePath, builtInTools });
      await cache.update(tools);
      return cache;
    }

    it('reports the same tools in any order as unchanged', async () => {
      const cache = await cacheWith([tool('a'), tool('b')]);
      expect(await cache.update([tool('b'), tool('a')])).toMatchObject({
        changed: false,
        removed: [],
        added: [],
        modified: [],
        comparedWith: 'live',
      });
      expect((await cacheWith([tool('single')]).then((c) => c.update([tool('single')]))).changed).toBe(false);
    });

    it('does not count key order inside a definition as a change', async () => {
      const cache = await cacheWith([
        { name: 'a', inputSchema: { type: 'object', properties: { x: { type: 'string' } } } },
      ]);
      const reordered = { inputSchema: { properties: { x: { type: 'string' } }, type: 'object' as const }, name: 'a' };
      expect((await cache.update([reordered])).changed).toBe(false);
    });

    it('reports additions as a safe change', async () => {
      const cache = await cacheWith([tool('a'), tool('b')]);
      expect(await cache.update([tool('a'), tool('b'), tool('c'), tool('d')])).toMatchObject({
        changed: true,
        removed: [],
        added: ['c', 'd'],
      });
    });

    it('reports removals, and a rename as one removal plus one addition', async () => {
      const cache = await cacheWith([tool('a'), tool('b'), tool('c')]);
      expect(await cache.update([tool('a'), tool('d')])).toMatchObject({
        changed: true,
        removed: ['b', 'c'],
        added: ['d'],
      });
      expect(await cache.update([tool('a')])).toMatchObject({ removed: ['d'], added: [] });
      expect(await cache.update([tool('open_file')])).toMatchObject({ removed: ['a'], added: ['open_file'] });
      expect(await cache.update([tool('x'), tool('y')])).toMatchObject({ removed: ['open_file'], added: ['x', 'y'] });
    });

    it('reports a redefined tool as modified', async () => {
      const cache = await cacheWith([tool('a'), tool('b')]);
      expect(await cache.update([tool('a', 'new text'), tool('b')])).toMatchObject({
        changed: true,
        removed: [],
        added: [],
        modified: ['a'],
      });
    });

    it('says what the live list was compared with', async () => {
      await writeCacheFile(JSON.stringify([tool('a')]));
      const fromDisk = new ToolListCache({ filePath, builtInTools });
      await fromDisk.load();
      expect((await fromDisk.update([tool('a')])).comparedWith).toBe('disk');
      const fresh = new ToolListCache({ filePath: join(directory, 'other.json'), builtInTools });
      expect(await fresh.update([tool('connect_notebook')])).toMatchObject({
        comparedWith: 'built-in',
        removed: ['create_notebook'],
      });
    });
  });

  it('writes atomically and leaves no temporary files, even for concurrent updates', async () => {
    const cache = new ToolListCache({ filePath, builtInTools });
    const updates = await Promise.all([
      cache.update([tool('a')]),
      cache.update([tool('b')]),
      cache.update([tool('c')]),
    ]);
    expect(updates.map((update) => update.persisted)).toEqual([true, true, true]);
    expect(await readdir(join(directory, 'cache'))).toEqual(['tool-cache.json']);
    // writes are serialised: the file holds the last list given
    expect(names((await storedFile(filePath)).tools)).toEqual(['c']);
    expect(names(cache.current())).toEqual(['c']);
  });

  it('replaces the file instead of rewriting it in place (a reader of the old file never sees a mix)', async () => {
    await writeCacheFile(JSON.stringify([tool('old')]));
    const oldView = join(directory, 'old-view.json');
    await link(filePath, oldView);
    const before = await stat(filePath);
    const cache = new ToolListCache({ filePath, builtInTools });
    await cache.update([tool('new')]);
    expect((await stat(filePath)).ino).not.toBe(before.ino);
    expect(names(JSON.parse(await readFile(oldView, 'utf8')))).toEqual(['old']);
    expect(names((await storedFile(filePath)).tools)).toEqual(['new']);
  });

  it('removes its temporary file when the final rename fails', async () => {
    await mkdir(join(filePath, 'occupied'), { recursive: true });
    const logger = new RecordingLogger();
    const cache = new ToolListCache({ filePath, builtInTools, logger });
    expect(await cache.update([tool('a')])).toMatchObject({ changed: true, persisted: false });
    expect(await readdir(join(directory, 'cache'))).toEqual(['tool-cache.json']);
    expect(logger.find('could not write the tool cache', 'warn')).toHaveLength(1);
  });

  it('keeps serving the live list when the file cannot be written, and leaves no temporary file', async () => {
    const blocker = join(directory, 'not-a-directory');
    await writeFile(blocker, 'x');
    const logger = new RecordingLogger();
    const cache = new ToolListCache({ filePath: join(blocker, 'tool-cache.json'), builtInTools, logger });
    const update = await cache.update([tool('a')]);
    expect(update).toMatchObject({ changed: true, persisted: false });
    expect(names(cache.current())).toEqual(['a']);
    expect(logger.find('could not write the tool cache', 'warn')).toHaveLength(1);
    expect(await readdir(directory)).toEqual(['not-a-directory']);
  });

  it('appends the reconnect tool once', () => {
    const cache = new ToolListCache({ filePath, builtInTools });
    const served = cache.withReconnect(cache.current());
    expect(names(served)).toEqual(['connect_notebook', 'create_notebook', 'reconnect']);
    expect(names(cache.withReconnect(served))).toEqual(['connect_notebook', 'create_notebook', 'reconnect']);
    expect(names(cache.current())).toEqual(['connect_notebook', 'create_notebook']);
  });

  it('defines reconnect as a child restart with a bare object schema', () => {
    expect(reconnectTool.name).toBe(reconnectToolName);
    expect(reconnectTool.inputSchema).toEqual({ type: 'object' });
    expect(reconnectTool.description).toMatch(/restart/i);
    expect(reconnectTool.description).toMatch(/child/);
    expect(reconnectTool.description).toMatch(/not the daemon/);
  });

  it('lives under $XDG_CACHE_HOME, else ~/.cache (~/Library/Caches on macOS), and exports the original incompatibility text', () => {
    expect(defaultToolCachePath({ XDG_CACHE_HOME: '/xdg/cache', HOME: '/home/me' }, 'linux')).toBe(
      '/xdg/cache/nteract-mcp/tool-cache.json',
    );
    expect(defaultToolCachePath({ HOME: '/home/me' }, 'linux')).toBe('/home/me/.cache/nteract-mcp/tool-cache.json');
    expect(defaultToolCachePath({ XDG_CACHE_HOME: 'relative/dir', HOME: '/home/me' }, 'linux')).toBe(
      '/home/me/.cache/nteract-mcp/tool-cache.json',
    );
    expect(defaultToolCachePath({ XDG_CACHE_HOME: '  ', HOME: '/home/me' }, 'linux')).toBe(
      '/home/me/.cache/nteract-mcp/tool-cache.json',
    );
    expect(defaultToolCachePath({ HOME: '/Users/me' }, 'darwin')).toBe(
      '/Users/me/Library/Caches/nteract-mcp/tool-cache.json',
    );
    expect(new ToolListCache({ builtInTools }).filePath).toBe(defaultToolCachePath());
    expect(toolListChangedIncompatiblyMessage).toBe(
      'Tool list changed incompatibly after daemon upgrade. The MCP server will exit so your client can reconnect with the updated tools. You may need to reinstall the nteract extension.',
    );
  });
});
