import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, describe, expect, it } from 'vitest';
import { createUserEnvironment, descendantsOf, type UserEnvironment } from './support/index.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const work = realpathSync(mkdtempSync(join(tmpdir(), 'nmcp-pack-')));
const cleanups: (() => Promise<unknown> | unknown)[] = [() => rmSync(work, { recursive: true, force: true })];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

/**
 * The environment of a user's shell: without what `npm test` adds (npm_* variables, this checkout's
 * node_modules/.bin on PATH), so nothing of the monorepo can leak into the install or the session.
 */
function shellEnvironment(base: Readonly<Record<string, string | undefined>>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(base)) {
    if (value === undefined || /^npm_/i.test(key)) continue;
    env[key] = value;
  }
  env.PATH = (base.PATH ?? '')
    .split(delimiter)
    .filter((dir) => dir !== '' && !resolve(dir).startsWith(root + sep) && resolve(dir) !== root)
    .join(delimiter);
  return env;
}

function run(command: string, args: readonly string[], options: { cwd: string; env: Record<string, string> }) {
  return new Promise<{ code: number; stdout: string; stderr: string }>((done) => {
    execFile(command, args, { ...options, timeout: 300_000, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
      done({ code, stdout, stderr });
    });
  });
}

interface Answer {
  readonly text: string;
  readonly isError: boolean;
}

describe('the packed packages install like any npm package', () => {
  it('packs every package, installs the tarballs into an empty directory with no workspace around it, and `npx nteract-mcp` runs a full session (auto-started daemon, real kernel)', {
    timeout: 600_000,
  }, async () => {
    const shell = shellEnvironment(process.env);
    const tarballsDir = join(work, 'tarballs');
    const packed = await run(
      process.execPath,
      [join(root, 'scripts', 'pack-release.mjs'), '--no-build', '--out', tarballsDir],
      {
        cwd: root,
        env: shell,
      },
    );
    expect(packed.code, packed.stderr).toBe(0);
    const tarballs = packed.stdout.split('\n').filter(Boolean);
    expect(tarballs.map((path) => path.slice(tarballsDir.length + 1)).sort()).toEqual(
      [
        'nteract-mcp-0.1.0.tgz',
        'nteract-mcp-core-0.1.0.tgz',
        'nteract-mcp-daemon-0.1.0.tgz',
        'nteract-mcp-foundation-0.1.0.tgz',
        'nteract-mcp-output-shaping-0.1.0.tgz',
        'nteract-mcp-plugin-hosted-0.1.0.tgz',
        'nteract-mcp-plugin-local-daemon-0.1.0.tgz',
        'nteract-mcp-plugin-transport-legacy-0.1.0.tgz',
        'nteract-mcp-plugin-transport-native-0.1.0.tgz',
        'nteract-mcp-proxy-0.1.0.tgz',
        'nteract-mcp-runtimed-protocol-0.1.0.tgz',
      ].sort(),
    );

    // An empty project of a user's (no package.json, no workspace above it: the temp dir).
    const project = join(work, 'project');
    mkdirSync(project);
    const installed = await run(
      'npm',
      ['install', '--prefer-offline', '--no-audit', '--no-fund', '--no-package-lock', ...tarballs],
      { cwd: project, env: shell },
    );
    expect(installed.code, `${installed.stdout}\n${installed.stderr}`).toBe(0);
    const manifest = JSON.parse(readFileSync(join(project, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
    };
    expect(Object.keys(manifest.dependencies)).toContain('nteract-mcp');
    // What the README says of npm 11's install-scripts warning: only zeromq's script is in the
    // user's tree (it checks its prebuilt addon; the session below runs without it having run on
    // npm 11); esbuild, a build tool of the repository, never reaches an installing user.
    expect(existsSync(join(project, 'node_modules', 'esbuild'))).toBe(false);
    const printed = `${installed.stdout}\n${installed.stderr}`;
    expect(printed).not.toContain('esbuild');
    if (printed.includes('install-scripts')) expect(printed).toMatch(/install-scripts\s+zeromq@/);
    expect(existsSync(join(project, 'node_modules', 'zeromq', 'package.json'))).toBe(true);
    const bins = join(project, 'node_modules', 'nteract-mcp', 'dist');

    // The session: `npx nteract-mcp` from that directory, a fresh HOME, nothing pre-started.
    const environment: UserEnvironment = createUserEnvironment(join(bins, 'runtimed.js'));
    cleanups.push(() => environment.cleanup());
    const env = shellEnvironment(environment.env);
    writeFileSync(join(environment.dirs.home, '.npmrc'), 'update-notifier=false\n');
    const transport = new StdioClientTransport({
      command: 'npx',
      args: ['nteract-mcp'],
      env,
      cwd: project,
      stderr: 'pipe',
    });
    let stderr = '';
    transport.stderr?.on('data', (chunk: Buffer | string) => {
      stderr += chunk.toString();
    });
    const client = new Client({ name: 'pack-and-install', version: '1.0.0' });
    await client.connect(transport);
    cleanups.push(() => client.close());
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

    // Every process of the session runs the installed copy: the proxy, the child and the daemon.
    const daemon = environment.daemonPid();
    expect(daemon, 'the auto-started daemon').toBeTypeOf('number');
    const ours = [...descendantsOf(transport.pid as number), ...(daemon ? descendantsOf(daemon) : [])];
    const cmdlines = ours.map((info) => info.cmdline);
    expect(cmdlines.some((line) => line.includes(join(project, 'node_modules', '.bin', 'nteract-mcp')))).toBe(true);
    expect(cmdlines.some((line) => line.includes(join(bins, 'runt-mcp.js')))).toBe(true);
    const daemonCommand = readFileSync(`/proc/${daemon}/cmdline`, 'utf8').split('\0');
    expect(
      daemonCommand.some((arg) => arg.startsWith(join(project, 'node_modules')) && arg.endsWith('runtimed.js')),
    ).toBe(true);
    expect(cmdlines.some((line) => line.includes('ipykernel'))).toBe(true);
    expect(cmdlines.filter((line) => line.includes(root))).toEqual([]);

    await client.close();
    await environment.cleanup();
    expect(environment.daemonPid()).toBeUndefined();
  });
});
