import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createUserEnvironment, shippedBins, type UserEnvironment } from './support/index.js';

/**
 * The client configurations the README quotes (docs/clients/*), each started as its client starts
 * it: the command and arguments it names, in a fresh HOME. The server must answer an MCP
 * `tools/list`. `npx -y nteract-mcp` runs in a project directory where nteract-mcp is installed
 * (its `node_modules` links this checkout's built package, as a local install would have it), so
 * npx runs that one offline (a user's npx fetches the published one); `/path/to/nteract-mcp` of the
 * from-source form is this checkout.
 */
const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const clientsDir = join(root, 'docs', 'clients');
const placeholder = '/path/to/nteract-mcp';

/** A project with nteract-mcp installed in it: `node_modules/nteract-mcp` and its bins. */
const project = mkdtempSync(join(tmpdir(), 'nmcp-client-project-'));
mkdirSync(join(project, 'node_modules', '.bin'), { recursive: true });
symlinkSync(join(root, 'packages', 'nteract-mcp'), join(project, 'node_modules', 'nteract-mcp'));
for (const bin of ['nteract-mcp', 'runt-mcp', 'runtimed'])
  symlinkSync(join('..', 'nteract-mcp', 'dist', `${bin}.js`), join(project, 'node_modules', '.bin', bin));
afterAll(() => rmSync(project, { recursive: true, force: true }));

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

/** A user's shell environment: without what `npm test` adds (npm_* variables, this checkout's bins on PATH). */
function withoutNpmRun(env: Readonly<Record<string, string>>): Record<string, string> {
  const clean: Record<string, string> = {};
  for (const [key, value] of Object.entries(env)) if (!/^npm_/i.test(key)) clean[key] = value;
  clean.PATH = (env.PATH ?? '')
    .split(delimiter)
    .filter((dir) => dir !== '' && !resolve(dir).startsWith(root + sep))
    .join(delimiter);
  return clean;
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
    const readme = readFileSync(join(root, 'README.md'), 'utf8');
    for (const file of [...files, 'sdk-client.mjs'])
      expect(readme, `README.md quotes docs/clients/${file}`).toContain(file);
  });

  for (const file of Object.keys(expectedShape)) {
    it(`${file}: the server it names starts in a fresh HOME and answers tools/list`, { timeout: 120_000 }, async () => {
      const entry = readEntry(file);
      const args = (entry.args ?? []).map((arg) => arg.replace(placeholder, root));
      if (file === 'from-source.json') expect(args).toEqual([shippedBins.proxy]);
      else expect([entry.command, ...args]).toEqual(['npx', '-y', 'nteract-mcp']);
      const environment = createUserEnvironment(shippedBins.runtimed);
      environments.push(environment);
      const transport = new StdioClientTransport({
        command: entry.command,
        args,
        env: { ...withoutNpmRun(environment.env), ...entry.env },
        cwd: file === 'from-source.json' ? root : project,
        stderr: 'pipe',
      });
      let stderr = '';
      transport.stderr?.on('data', (chunk: Buffer | string) => {
        stderr += chunk.toString();
      });
      const client = new Client({ name: file, version: '1.0.0' });
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
    });
  }

  it('sdk-client.mjs (the SDK snippet) runs a cell through `npx -y nteract-mcp` and prints its result', {
    timeout: 180_000,
  }, async () => {
    const environment = createUserEnvironment(shippedBins.runtimed);
    environments.push(environment);
    // The snippet passes no env: the SDK's transport then hands the server only HOME, PATH and a
    // few more, so the daemon lives under the fresh HOME (~/.cache/runt), without the XDG dirs.
    const env = withoutNpmRun(environment.env);
    for (const key of Object.keys(env)) if (key.startsWith('XDG_')) delete env[key];
    const run = (args: string[]) =>
      new Promise<{ code: number; stdout: string; stderr: string }>((done) => {
        execFile(process.execPath, args, { cwd: project, env, timeout: 150_000 }, (error, stdout, stderr) => {
          done({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr });
        });
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
