import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import {
  type ClaudeMcpAdd,
  createUserEnvironment,
  readmeCommands,
  shippedBins,
  type UserEnvironment,
} from './support/index.js';

/**
 * The client configurations the README quotes (docs/clients/*) and its `claude mcp add` lines, each
 * started as its client starts it: the command, arguments and environment it names, in a fresh
 * HOME. The server must answer an MCP `tools/list`. `nteract-mcp` is found on PATH as the README's
 * install leaves it: a global prefix whose `bin/` links the bins of this checkout's built package
 * (test/pack-and-install.test.ts runs the install itself); `/path/to/nteract-mcp` of the
 * from-source form is this checkout.
 */
const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const clientsDir = join(root, 'docs', 'clients');
const placeholder = '/path/to/nteract-mcp';
const readme = readFileSync(join(root, 'README.md'), 'utf8');

/** `npm install -g` of the release tarballs, as far as PATH sees it: `<prefix>/bin/{nteract-mcp,runt-mcp,runtimed}`. */
const prefix = mkdtempSync(join(tmpdir(), 'nmcp-client-prefix-'));
mkdirSync(join(prefix, 'bin'));
for (const bin of ['nteract-mcp', 'runt-mcp', 'runtimed'])
  symlinkSync(join(root, 'packages', 'nteract-mcp', 'dist', `${bin}.js`), join(prefix, 'bin', bin));
afterAll(() => rmSync(prefix, { recursive: true, force: true }));

const environments: UserEnvironment[] = [];
afterEach(async () => {
  for (const environment of environments.splice(0)) await environment.cleanup();
});

interface ServerEntry {
  readonly type?: string;
  readonly command: string;
  readonly args?: readonly string[];
  readonly env?: Readonly<Record<string, string>>;
}

/** The shape each client reads: VS Code's `servers` with a `type`; everyone else's `mcpServers`. */
const expectedShape: Record<string, { key: 'servers' | 'mcpServers'; type?: 'stdio' }> = {
  'claude-code.mcp.json': { key: 'mcpServers', type: 'stdio' },
  'vscode.mcp.json': { key: 'servers', type: 'stdio' },
  'claude-desktop.json': { key: 'mcpServers' },
  'cursor.mcp.json': { key: 'mcpServers' },
  'from-source.json': { key: 'mcpServers' },
};

/**
 * A user's shell environment after the install: without what `npm test` adds (npm_* variables,
 * this checkout's bins on PATH), with the global prefix's `bin/` first on PATH.
 */
function installedShell(env: Readonly<Record<string, string>>): Record<string, string> {
  const clean: Record<string, string> = {};
  for (const [key, value] of Object.entries(env)) if (!/^npm_/i.test(key)) clean[key] = value;
  clean.PATH = [
    join(prefix, 'bin'),
    ...(env.PATH ?? '').split(delimiter).filter((dir) => dir !== '' && !resolve(dir).startsWith(root + sep)),
  ].join(delimiter);
  return clean;
}

/** Starts `command args` as a client does, in a fresh HOME, and expects its tools on `tools/list`; returns its stderr. */
async function startsAndListsTools(
  name: string,
  command: string,
  args: readonly string[],
  env: Readonly<Record<string, string>>,
  cwd?: string,
): Promise<string> {
  const environment = createUserEnvironment(shippedBins.runtimed);
  environments.push(environment);
  const transport = new StdioClientTransport({
    command,
    args: [...args],
    env: { ...installedShell(environment.env), ...env },
    cwd: cwd ?? environment.dirs.project,
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer | string) => {
    stderr += chunk.toString();
  });
  const client = new Client({ name, version: '1.0.0' });
  try {
    await client.connect(transport);
    const tools = await client.listTools();
    expect(
      tools.tools.map((tool) => tool.name),
      stderr,
    ).toEqual(expect.arrayContaining(['create_notebook', 'execute_cell', 'session_status', 'reconnect']));
  } finally {
    await client.close();
  }
  return stderr;
}

function readEntry(file: string): ServerEntry {
  const shape = expectedShape[file];
  if (!shape) throw new Error(`docs/clients/${file} has no expected shape in this test`);
  const config = JSON.parse(readFileSync(join(clientsDir, file), 'utf8')) as Record<string, unknown>;
  expect(Object.keys(config)).toEqual([shape.key]);
  const entry = (config[shape.key] as Record<string, ServerEntry>).nteract;
  expect(entry, `${file}: ${shape.key}.nteract`).toBeDefined();
  expect(entry.type).toBe(shape.type);
  expect(typeof entry.command).toBe('string');
  return entry;
}

describe('the documented client configurations (docs/clients)', () => {
  it('has a file for every client the README names, and nothing untested', () => {
    const files = readdirSync(clientsDir).filter((file) => file.endsWith('.json'));
    expect(files.sort()).toEqual(Object.keys(expectedShape).sort());
    for (const file of [...files, 'sdk-client.mjs'])
      expect(readme, `README.md quotes docs/clients/${file}`).toContain(file);
  });

  it('the README shows the mcpServers shape that the docs/clients files have', () => {
    const block = /\n```json\n([\s\S]*?)\n```/.exec(readme.slice(readme.indexOf('\n## Set up your MCP client\n')));
    expect(block?.[1], 'a ```json block under "Set up your MCP client"').toBeDefined();
    const shown = JSON.parse(block?.[1] ?? '') as unknown;
    for (const file of ['claude-desktop.json', 'cursor.mcp.json'])
      expect(shown, file).toEqual(JSON.parse(readFileSync(join(clientsDir, file), 'utf8')));
  });

  for (const file of Object.keys(expectedShape)) {
    it(`${file}: the server it names starts in a fresh HOME and answers tools/list`, { timeout: 120_000 }, async () => {
      const entry = readEntry(file);
      const args = (entry.args ?? []).map((arg) => arg.replace(placeholder, root));
      if (file === 'from-source.json') expect(args).toEqual([shippedBins.proxy]);
      else expect([entry.command, ...args]).toEqual(['nteract-mcp']);
      await startsAndListsTools(
        file,
        entry.command,
        args,
        entry.env ?? {},
        file === 'from-source.json' ? root : undefined,
      );
    });
  }

  const claudeLines: readonly ClaudeMcpAdd[] = readmeCommands(readme).claudeMcpAdd;
  it('the README has a `claude mcp add` line, and one that sets a variable with -e', () => {
    expect(claudeLines.map((add) => add.line)).toContain('claude mcp add nteract -- nteract-mcp');
    expect(claudeLines.some((add) => Object.keys(add.env).length > 0)).toBe(true);
  });

  for (const add of new Map(claudeLines.map((entry) => [entry.line, entry])).values()) {
    it(`README: \`${add.line}\` starts the server with its variables, which answers tools/list`, {
      timeout: 120_000,
    }, async () => {
      expect(add.name).toBe('nteract');
      const stderr = await startsAndListsTools(add.line, add.command, add.args, add.env);
      // The variables reach the server: NTERACT_MCP_LOG_LEVEL=debug makes the proxy log at debug.
      if (add.env.NTERACT_MCP_LOG_LEVEL === 'debug') expect(stderr).toMatch(/ DEBUG\b/);
      else expect(stderr).not.toMatch(/ DEBUG\b/);
    });
  }

  it('sdk-client.mjs (the SDK snippet) runs a cell through the installed `nteract-mcp` and prints its result', {
    timeout: 180_000,
  }, async () => {
    const environment = createUserEnvironment(shippedBins.runtimed);
    environments.push(environment);
    // The snippet passes no env: the SDK's transport then hands the server only HOME, PATH and a
    // few more, so the daemon lives under the fresh HOME (~/.cache/runt), without the XDG dirs.
    const env = installedShell(environment.env);
    for (const key of Object.keys(env)) if (key.startsWith('XDG_')) delete env[key];
    const run = (args: string[]) =>
      new Promise<{ code: number; stdout: string; stderr: string }>((done) => {
        execFile(
          process.execPath,
          args,
          { cwd: environment.dirs.project, env, timeout: 150_000 },
          (error, stdout, stderr) => {
            done({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr });
          },
        );
      });
    try {
      const result = await run([join(clientsDir, 'sdk-client.mjs')]);
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).toMatch(/\b42\b/);
    } finally {
      const stopped = await run([shippedBins.runtimed, 'stop']);
      expect(stopped.code, stopped.stderr).toBe(0);
    }
  });
});
