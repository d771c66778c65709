import { execFile, execFileSync } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, describe, expect, it } from 'vitest';
import {
  createUserEnvironment,
  descendantsOf,
  processInfo,
  readmeCommands,
  type UserEnvironment,
} from './support/index.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const work = realpathSync(mkdtempSync(join(tmpdir(), 'nmcp-pack-')));
const cleanups: (() => Promise<unknown> | unknown)[] = [() => rmSync(work, { recursive: true, force: true })];
// Removing a fresh clone with its node_modules takes more than the default 10 s on a loaded machine.
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
}, 120_000);

/**
 * The environment of a user's shell: without what `npm test` adds (npm_* variables, this checkout's
 * node_modules/.bin on PATH), so nothing of the monorepo can leak into the install or the session;
 * `bin` first on PATH, as a global install leaves it.
 */
function shellEnvironment(base: Readonly<Record<string, string | undefined>>, bin: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(base)) {
    if (value === undefined || /^npm_/i.test(key)) continue;
    env[key] = value;
  }
  env.PATH = [
    bin,
    ...(base.PATH ?? '')
      .split(delimiter)
      .filter((dir) => dir !== '' && !resolve(dir).startsWith(root + sep) && resolve(dir) !== root),
  ].join(delimiter);
  return env;
}

function run(command: string, args: readonly string[], options: { cwd: string; env: Record<string, string> }) {
  return new Promise<{ code: number; stdout: string; stderr: string }>((done) => {
    execFile(command, args, { ...options, timeout: 600_000, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
      done({ code, stdout, stderr });
    });
  });
}

/**
 * A fresh clone of this checkout as it is now: every file git tracks or would track (modified ones
 * as they are on disk), and nothing it ignores (no node_modules, dist, release, .turbo).
 */
function copyOfTheClone(into: string): void {
  const files = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
    cwd: root,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  })
    .split('\0')
    .filter(Boolean);
  for (const file of files) {
    if (!existsSync(join(root, file))) continue; // deleted in the working tree
    mkdirSync(dirname(join(into, file)), { recursive: true });
    copyFileSync(join(root, file), join(into, file));
  }
}

interface Answer {
  readonly text: string;
  readonly isError: boolean;
}

describe('the README install, as written', () => {
  it("runs the README's Install lines in a fresh copy of the clone (npm ci, npm run pack:release, npm install -g ./release/*.tgz into a temp global prefix), and the installed nteract-mcp, started as the README's `claude mcp add … -e …` line says, runs a full session from a fresh HOME (auto-started daemon, real kernel)", {
    timeout: 900_000,
  }, async () => {
    const readme = readFileSync(join(root, 'README.md'), 'utf8');
    const { install, claudeMcpAdd } = readmeCommands(readme);
    const version = (
      JSON.parse(readFileSync(join(root, 'packages', 'nteract-mcp', 'package.json'), 'utf8')) as {
        version: string;
      }
    ).version;

    // The clone line names the repository by a placeholder; the clone is this checkout's files.
    expect(install[0]).toBe('git clone <repository URL> nteract-mcp && cd nteract-mcp');
    const clone = join(work, 'nteract-mcp');
    copyOfTheClone(clone);
    // release/ of an earlier version, as a user who pulls and packs again has it: `release/*.tgz`
    // must still install one version of each package.
    mkdirSync(join(clone, 'release'));
    writeFileSync(join(clone, 'release', 'nteract-mcp-0.0.1.tgz'), 'an older release');

    // `npm install -g` goes to a temp prefix (npm_config_prefix: the global prefix, the command
    // unchanged); the cache of the machine's npm is used where it has a package.
    const prefix = join(work, 'prefix');
    const shell: Record<string, string> = {
      ...shellEnvironment(process.env, join(prefix, 'bin')),
      npm_config_prefix: prefix,
      npm_config_prefer_offline: 'true',
      npm_config_update_notifier: 'false',
    };
    const printed: Record<string, string> = {};
    for (const line of install.slice(1)) {
      const result = await run('sh', ['-c', line], { cwd: clone, env: shell });
      printed[line] = `${result.stdout}\n${result.stderr}`;
      expect(result.code, `${line}\n${printed[line]}`).toBe(0);
    }
    const globalInstall = install.find((line) => /^npm install -g /.test(line));
    expect(globalInstall, 'the README installs with npm install -g').toBeDefined();

    // `npm ci` on this Node warns of no engine (the README says it prints no warning on Node 20).
    const ci = install.find((line) => /^npm ci\b/.test(line));
    expect(ci, 'the README runs npm ci').toBeDefined();
    expect(printed[ci ?? '']).not.toMatch(/EBADENGINE/);
    // pack:release left one version of each package in release/.
    const tarballs = readdirSync(join(clone, 'release')).sort();
    expect(tarballs).toEqual(
      [
        'nteract-mcp',
        'nteract-mcp-core',
        'nteract-mcp-daemon',
        'nteract-mcp-foundation',
        'nteract-mcp-output-shaping',
        'nteract-mcp-plugin-hosted',
        'nteract-mcp-plugin-app-view',
        'nteract-mcp-plugin-local-daemon',
        'nteract-mcp-plugin-transport-legacy',
        'nteract-mcp-plugin-transport-native',
        'nteract-mcp-proxy',
        'nteract-mcp-runtimed-protocol',
      ]
        .map((name) => `${name}-${version}.tgz`)
        .sort(),
    );
    // What the README says of npm 11's install-scripts warning: only zeromq's script is in the
    // installed tree (it checks its prebuilt addon; the session below runs without it having run);
    // esbuild, a build tool of the repository, never reaches an installing user.
    const installed = join(prefix, 'lib', 'node_modules');
    const installPrinted = printed[globalInstall ?? ''] ?? '';
    expect(installPrinted).not.toContain('esbuild');
    if (installPrinted.includes('install-scripts')) expect(installPrinted).toMatch(/install-scripts\s+zeromq@/);
    expect(existsSync(join(installed, 'esbuild'))).toBe(false);
    // On PATH: the three bins the README names; `nteract-mcp --version` printed the version.
    expect(readdirSync(join(prefix, 'bin')).sort()).toEqual(['nteract-mcp', 'runt-mcp', 'runtimed']);
    const versionLine = install.find((line) => line === 'nteract-mcp --version');
    expect(versionLine, 'the README checks the install with nteract-mcp --version').toBeDefined();
    expect(printed[versionLine ?? '']).toContain(`nteract-mcp ${version}`);

    // The session: the README's Claude Code line with a variable, as Claude Code starts it (the
    // command after --, the -e variables in its environment), a fresh HOME, nothing pre-started.
    const add = claudeMcpAdd.find((entry) => Object.keys(entry.env).length > 0);
    expect(add, 'a `claude mcp add nteract -e …` line in the README').toBeDefined();
    if (!add) return;
    const bins = join(installed, 'nteract-mcp', 'dist');
    const environment: UserEnvironment = createUserEnvironment(join(bins, 'runtimed.js'));
    cleanups.push(() => environment.cleanup());
    const env = { ...shellEnvironment(environment.env, join(prefix, 'bin')), ...add.env };
    const transport = new StdioClientTransport({
      command: add.command,
      args: [...add.args],
      env,
      cwd: environment.dirs.project,
      stderr: 'pipe',
    });
    let stderr = '';
    transport.stderr?.on('data', (chunk: Buffer | string) => {
      stderr += chunk.toString();
    });
    const client = new Client({ name: 'pack-and-install', version: '1.0.0' });
    await client.connect(transport);
    cleanups.push(() => client.close());
    expect(client.getServerVersion()?.name, stderr).toBeDefined();
    const call = async (name: string, args: Record<string, unknown> = {}): Promise<Answer> => {
      const result = (await client.callTool({ name, arguments: args }, undefined, { timeout: 180_000 })) as {
        content: { type: string; text?: string }[];
        isError?: boolean;
      };
      return { text: result.content.map((item) => item.text ?? '').join('\n'), isError: result.isError === true };
    };

    const tools = await client.listTools();
    expect(tools.tools.map((tool) => tool.name)).toEqual(
      expect.arrayContaining(['create_notebook', 'create_cell', 'execute_cell', 'session_status', 'reconnect']),
    );
    const created = await call('create_notebook');
    expect(created.isError, `${created.text}\n${stderr}`).toBe(false);
    const first = await call('create_cell', { source: 'x = 41', and_run: true });
    expect(first.isError, `${first.text}\n${stderr}`).toBe(false);
    const second = await call('create_cell', { source: 'x + 1', and_run: true });
    expect(second.isError, `${second.text}\n${stderr}`).toBe(false);
    expect(second.text).toMatch(/\b42\b/);
    // The -e variable reached the server.
    if (add.env.NTERACT_MCP_LOG_LEVEL === 'debug') expect(stderr).toMatch(/ DEBUG\b/);

    // Every process of the session runs the installed copy: the proxy, the child and the daemon;
    // none runs this checkout or the clone it was installed from.
    const daemon = environment.daemonPid();
    expect(daemon, 'the auto-started daemon').toBeTypeOf('number');
    const proxy = processInfo(transport.pid as number);
    expect(proxy, 'the proxy the client started').toBeDefined();
    const ours = [
      ...(proxy ? [proxy] : []),
      ...descendantsOf(transport.pid as number),
      ...(daemon ? descendantsOf(daemon) : []),
    ];
    const cmdlines = ours.map((info) => info.cmdline);
    expect(cmdlines.some((line) => line.includes(join(prefix, 'bin', 'nteract-mcp')))).toBe(true);
    expect(cmdlines.some((line) => line.includes(join(bins, 'runt-mcp.js')))).toBe(true);
    const daemonCommand = readFileSync(`/proc/${daemon}/cmdline`, 'utf8').split('\0');
    expect(daemonCommand.some((arg) => arg.startsWith(installed) && arg.endsWith('runtimed.js'))).toBe(true);
    expect(cmdlines.some((line) => line.includes('ipykernel'))).toBe(true);
    expect(cmdlines.filter((line) => line.includes(root) || line.includes(clone))).toEqual([]);

    // The installed daemon serves its live page's client from its own package (dist/page/).
    const shown = await call('show_notebook');
    const pageUrl = new URL(shown.text.split('\n')[0] ?? '');
    expect(pageUrl.hash).toMatch(/^#launch=/);
    const script = await fetch(new URL('/assets/live-page.js', pageUrl));
    expect(script.status, await script.clone().text()).toBe(200);
    expect(script.headers.get('content-type')).toBe('text/javascript; charset=utf-8');

    // `runtimed status` on PATH (the README's troubleshooting) finds the session's daemon.
    const status = await run('runtimed', ['status'], { cwd: environment.dirs.project, env });
    expect(status.code, `${status.stdout}\n${status.stderr}`).toBe(0);

    await client.close();
    await environment.cleanup();
    expect(environment.daemonPid()).toBeUndefined();
  });
});
