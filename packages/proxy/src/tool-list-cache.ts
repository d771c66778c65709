import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import type { Logger, ServerDescription } from '@nteract-mcp/core';
import { randomHex, type UserCacheEnvironment, userCacheDir } from '@nteract-mcp/foundation';
import { isMcpTool } from './is-mcp-tool.js';

/** The name of the tool the proxy serves itself. */
export const reconnectToolName = 'reconnect';

/**
 * The proxy's own `reconnect` tool. Its input schema is exactly `{"type":"object"}` (some clients
 * reject a tool list whose schemas lack a root object type).
 */
export const reconnectTool: Tool = Object.freeze({
  name: reconnectToolName,
  description:
    'Restart the nteract MCP child server (the process behind these tools) and hand it the current notebook to rejoin. Use it when tools hang, keep returning stale errors, or after a daemon upgrade. It restarts only the MCP child server, not the daemon: notebooks and kernels keep running.',
  inputSchema: Object.freeze({ type: 'object' as const }),
});

/**
 * What the proxy answers once a restarted child no longer serves a tool the client knows (removed
 * or renamed), before it exits so the client reconnects with the new list. Text of the original.
 */
export const toolListChangedIncompatiblyMessage =
  'Tool list changed incompatibly after daemon upgrade. The MCP server will exit so your client can reconnect with the updated tools. You may need to reinstall the nteract extension.';

/** The environment variables {@link defaultToolCachePath} reads. */
export type ToolCacheEnvironment = UserCacheEnvironment;

/** `nteract-mcp/tool-cache.json` under the user cache dir ({@link userCacheDir}). Pure. */
export function defaultToolCachePath(
  env: ToolCacheEnvironment = process.env,
  platform: NodeJS.Platform = process.platform,
): string {
  return join(userCacheDir(env, platform), 'nteract-mcp', 'tool-cache.json');
}

/** Where the list served right now came from. */
export type ToolListSource = 'built-in' | 'disk' | 'live';

export interface ToolListCacheOptions {
  /** The cache file; default {@link defaultToolCachePath}. */
  readonly filePath?: string;
  /** Served when there is no usable cache file (and before {@link ToolListCache.load}). May be empty. */
  readonly builtInTools: readonly Tool[];
  /** Where unusable cache files and failed writes are reported. */
  readonly logger?: Logger;
}

/** How a live list compares with the one served before it (by tool name; order is irrelevant). */
export interface ToolListUpdate {
  /** Any tool added, removed or redefined. Send `notifications/tools/list_changed` only when true. */
  readonly changed: boolean;
  /** Names served before and missing now (a rename shows as one removed plus one added name). */
  readonly removed: readonly string[];
  /** Names new in the live list. */
  readonly added: readonly string[];
  /** Names in both lists whose definition (description, schemas, annotations, …) differs. */
  readonly modified: readonly string[];
  /** Where the list compared against came from: a removal from a `built-in` list is weaker evidence. */
  readonly comparedWith: ToolListSource;
  /** Whether the live list reached the disk (false for an empty list, or when writing failed). */
  readonly persisted: boolean;
}

/**
 * The last good `tools/list` of the child, kept in memory and in a JSON file so the proxy can
 * answer `tools/list` at once while no child is up, and notice when a new child's tools differ.
 * The same file keeps how the child described itself in its handshake ({@link server}), once per
 * protocol era, so the proxy can present the child's capabilities and serverInfo before any child
 * is up: a child describes itself differently to each era (its `initialize` answer, its
 * `server/discover` answer), so what it told one era is never shown to a client of another. The
 * era is named as its plugin names it (`ProtocolAdmission.era`); the cache knows no era.
 *
 * File format: `{"tools": [...], "servers": {"<era>": {name, version, title?, capabilities,
 * instructions?}, ...}}` (either member may be missing). A file holding only a JSON array of tools
 * (the format before the server description was kept) still loads, as the tool list; so does one
 * with the single `server` member of the format before descriptions were kept per era, its
 * description left out (which era it came from is unknown).
 *
 * Guarantees: {@link current} never blocks and never returns an empty list while the built-in one
 * is not empty; an empty live list is neither served nor persisted (it would outrank the built-in
 * forever); the file is replaced atomically (temporary file in the same directory, then rename),
 * writes are serialised, and a failed write leaves no temporary file behind and never throws.
 * An unusable cache file (unreadable, not JSON, not a non-empty array of tools) is ignored and
 * reported through the logger; the built-in list is served instead.
 * Does not guarantee that the disk holds the latest list when two proxies share the file (last
 * writer wins). The only I/O is the cache file.
 */
export class ToolListCache {
  readonly #filePath: string;
  readonly #builtIn: readonly Tool[];
  readonly #logger: Logger | undefined;
  #tools: readonly Tool[];
  /** {@link current} by name, built when first asked for; dropped by {@link #serve}. */
  #byName: Map<string, Tool> | undefined;
  #source: ToolListSource = 'built-in';
  /** How the child described itself, by the name of the era it described itself to. */
  #servers = new Map<string, ServerDescription>();
  #writes: Promise<unknown> = Promise.resolve();

  public constructor(options: ToolListCacheOptions) {
    this.#filePath = options.filePath ?? defaultToolCachePath();
    this.#builtIn = Object.freeze([...options.builtInTools]);
    this.#logger = options.logger?.child('core:ToolListCache');
    this.#tools = this.#builtIn;
  }

  /** The cache file. */
  public get filePath(): string {
    return this.#filePath;
  }

  /** Reads the cache file and serves it when usable, else the built-in list. Returns what is now served. */
  public async load(): Promise<readonly Tool[]> {
    const { tools: fromDisk, servers } = await this.#readDisk();
    this.#servers = new Map(servers);
    if (fromDisk) this.#serve(fromDisk, 'disk');
    else this.#serve(this.#builtIn, 'built-in');
    return this.#tools;
  }

  /** The list to serve now (without `reconnect`; see {@link withReconnect}). */
  public current(): readonly Tool[] {
    return this.#tools;
  }

  /** The tool named `name` in {@link current} (the first of that name), if any. */
  public find(name: string): Tool | undefined {
    let byName = this.#byName;
    if (byName === undefined) {
      byName = new Map();
      for (const tool of this.#tools) if (!byName.has(tool.name)) byName.set(tool.name, tool);
      this.#byName = byName;
    }
    return byName.get(name);
  }

  /** Serves `tools`, which came from `source`, from now on (the only place the served list changes). */
  #serve(tools: readonly Tool[], source: ToolListSource): void {
    this.#tools = tools;
    this.#source = source;
    this.#byName = undefined;
  }

  /**
   * How the child last described itself to a client of `era` (from the cache file, or learned
   * live); `undefined` before any child did in that era.
   */
  public server(era: string): ServerDescription | undefined {
    return this.#servers.get(era);
  }

  /**
   * Takes how a live child described itself in its handshake answer in `era` and keeps it for that
   * era. Written to the cache file at once when it changed and a child's tool list is already known
   * (else with the next {@link update}, so the file never holds the built-in list as if a child had
   * served it). Returns whether it reached the disk.
   */
  public async learnServer(era: string, server: ServerDescription): Promise<boolean> {
    const known = this.#servers.get(era);
    this.#servers.set(era, server);
    if (known !== undefined && canonicalJson(known) === canonicalJson(server)) return false;
    if (this.#source === 'built-in') return false;
    return this.#write();
  }

  /** Where {@link current} came from. */
  public source(): ToolListSource {
    return this.#source;
  }

  /**
   * Takes a live child's list: compares it with the one served so far, serves it, and writes it to
   * the cache file. An empty list changes nothing (reported as unchanged, not persisted).
   */
  public async update(liveTools: readonly Tool[]): Promise<ToolListUpdate> {
    const comparedWith = this.#source;
    if (liveTools.length === 0) {
      return { changed: false, removed: [], added: [], modified: [], comparedWith, persisted: false };
    }
    const next = Object.freeze([...liveTools]);
    const diff = compareToolLists(this.#tools, next);
    this.#serve(next, 'live');
    const persisted = await this.#write();
    const changed = diff.removed.length + diff.added.length + diff.modified.length > 0;
    return { changed, ...diff, comparedWith, persisted };
  }

  /** `tools` with the proxy's {@link reconnectTool} appended, unless a tool of that name is already there. */
  public withReconnect(tools: readonly Tool[]): Tool[] {
    return tools.some((tool) => tool.name === reconnectToolName) ? [...tools] : [...tools, reconnectTool];
  }

  /** Resolves once every queued write of the cache file has finished (no temporary file left behind). */
  public async settled(): Promise<void> {
    await this.#writes;
  }

  /** Queues a write of what is known now (tools only when a child's; the server when learned). */
  #write(): Promise<boolean> {
    const contents = {
      ...(this.#source === 'built-in' ? {} : { tools: this.#tools }),
      ...(this.#servers.size === 0 ? {} : { servers: Object.fromEntries(this.#servers) }),
    };
    const write = this.#writes.then(() => this.#writeAtomically(contents));
    this.#writes = write;
    return write;
  }

  async #readDisk(): Promise<{
    readonly tools?: readonly Tool[];
    readonly servers?: ReadonlyMap<string, ServerDescription>;
  }> {
    let text: string;
    try {
      text = await readFile(this.#filePath, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') {
        this.#logger?.warn('cannot read the tool cache; serving the built-in tool list', {
          path: this.#filePath,
          error: (error as Error).message,
        });
      }
      return {};
    }
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error) {
      this.#logger?.warn('the tool cache is not JSON; ignoring it and serving the built-in tool list', {
        path: this.#filePath,
        error: (error as Error).message,
      });
      return {};
    }
    // Before the server description was kept, the file was the bare array of tools.
    const stored = Array.isArray(value) ? { tools: value } : isRecord(value) ? value : undefined;
    const servers = this.#readServers(stored?.servers);
    const reason =
      stored === undefined ? 'it is neither a JSON object nor an array' : unusableToolListReason(stored.tools);
    if (reason !== undefined) {
      if (stored?.tools !== undefined || servers.size === 0) {
        this.#logger?.warn('the tool cache is unusable; ignoring it and serving the built-in tool list', {
          path: this.#filePath,
          reason,
        });
      }
      return { servers };
    }
    return { tools: Object.freeze(stored?.tools as Tool[]), servers };
  }

  /** The usable descriptions of a stored `servers` member, by era; an unusable one is reported and left out. */
  #readServers(value: unknown): Map<string, ServerDescription> {
    const servers = new Map<string, ServerDescription>();
    if (value === undefined) return servers;
    if (!isRecord(value)) {
      this.#logger?.warn('the server descriptions in the tool cache are unusable; ignoring them', {
        path: this.#filePath,
      });
      return servers;
    }
    for (const [era, stored] of Object.entries(value)) {
      const server = readServerDescription(stored);
      if (server !== undefined && era.length > 0) servers.set(era, server);
      else {
        this.#logger?.warn('a server description in the tool cache is unusable; ignoring it', {
          path: this.#filePath,
          era,
        });
      }
    }
    return servers;
  }

  async #writeAtomically(contents: Record<string, unknown>): Promise<boolean> {
    const temporary = `${this.#filePath}.${process.pid}.${randomHex(4)}.tmp`;
    try {
      await mkdir(dirname(this.#filePath), { recursive: true });
      await writeFile(temporary, `${JSON.stringify(contents, null, 2)}\n`, 'utf8');
      await rename(temporary, this.#filePath);
      return true;
    } catch (error) {
      await rm(temporary, { force: true }).catch(() => undefined);
      this.#logger?.warn('could not write the tool cache; the new tool list is served from memory only', {
        path: this.#filePath,
        error: (error as Error).message,
      });
      return false;
    }
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A stored server description (`name`, `version`, `capabilities` object, optional string `title`/`instructions`), else `undefined`. */
function readServerDescription(value: unknown): ServerDescription | undefined {
  if (!isRecord(value)) return undefined;
  const { name, version, title, capabilities, instructions } = value;
  if (typeof name !== 'string' || typeof version !== 'string' || !isRecord(capabilities)) return undefined;
  if (
    (title !== undefined && typeof title !== 'string') ||
    (instructions !== undefined && typeof instructions !== 'string')
  ) {
    return undefined;
  }
  return Object.freeze({
    name,
    version,
    ...(title === undefined ? {} : { title }),
    capabilities,
    ...(instructions === undefined ? {} : { instructions }),
  });
}

/** Why a stored tool list cannot be served, or `undefined` when it is a non-empty array of MCP tools. */
function unusableToolListReason(value: unknown): string | undefined {
  if (value === undefined) return 'it holds no tool list';
  if (!Array.isArray(value)) return 'its tool list is not a JSON array';
  if (value.length === 0) return 'it is empty';
  const bad = value.findIndex((tool) => !isMcpTool(tool));
  return bad >= 0 ? `entry ${bad} is not an MCP tool definition` : undefined;
}

/** Names removed, added and redefined between two lists (first definition of a duplicated name wins). */
function compareToolLists(
  previous: readonly Tool[],
  next: readonly Tool[],
): Pick<ToolListUpdate, 'removed' | 'added' | 'modified'> {
  const before = byName(previous);
  const after = byName(next);
  const removed = [...before.keys()].filter((name) => !after.has(name));
  const added = [...after.keys()].filter((name) => !before.has(name));
  const modified = [...after.entries()]
    .filter(([name, tool]) => {
      const old = before.get(name);
      return old !== undefined && canonicalJson(old) !== canonicalJson(tool);
    })
    .map(([name]) => name);
  return { removed, added, modified };
}

function byName(tools: readonly Tool[]): Map<string, Tool> {
  const map = new Map<string, Tool>();
  for (const tool of tools) if (!map.has(tool.name)) map.set(tool.name, tool);
  return map;
}

/** JSON with object keys sorted at every level, so key order never counts as a change. */
function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, member: unknown) =>
    typeof member === 'object' && member !== null && !Array.isArray(member)
      ? Object.fromEntries(Object.entries(member).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : member,
  );
}
