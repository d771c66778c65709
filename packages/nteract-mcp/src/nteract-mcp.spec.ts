import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createMcpContainer, NotebookTargetResolver, ProtocolAdmission } from '@nteract-mcp/core';
import { describe, expect, it, vi } from 'vitest';
import { childPlugins, proxyPlugins } from './distribution-plugins.js';

const bin = fileURLToPath(new URL('../dist/nteract-mcp.js', import.meta.url));
const childBin = fileURLToPath(new URL('../dist/runt-mcp.js', import.meta.url));
const runtHelp = () => spawnSync(process.execPath, [childBin, '--help'], { encoding: 'utf8' }).stdout;
const run = (...args: string[]) =>
  spawnSync(process.execPath, [bin, ...args], {
    encoding: 'utf8',
    env: { ...process.env, JUPYTER_TOKEN: 'never-printed' },
  });

describe('nteract-mcp (built bin)', () => {
  it('prints help on stdout for --help and exits 0', () => {
    const result = run('--help');
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(/^nteract-mcp: keeps an AI agent's Jupyter notebook/);
    expect(result.stdout).toContain('--version');
    // How to take a variable away from kernels (they get the client's environment otherwise).
    expect(result.stdout).toContain('NTERACT_MCP_KERNEL_ENV_DROP');
    expect(result.stdout).toContain('NTERACT_MCP_KERNEL_ENV_KEEP');
  });

  it('gives an install hint on stderr and exits 1 before speaking MCP when the child is missing', () => {
    const result = run('--child', '/nonexistent/runt-mcp');
    expect(result.status).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain("the MCP server child '/nonexistent/runt-mcp' was not found");
  });

  it('prints its version', () => {
    expect(run('--version').stdout).toMatch(/^nteract-mcp \d+\.\d+\.\d+\n$/);
  });

  it('reports with --check exactly what the proxy loads, without printing secrets', () => {
    const result = run('--check');
    expect(result.status).toBe(0);
    const report = JSON.parse(result.stdout);
    expect(report).toMatchObject({
      plugins: ['proxy', 'transport-legacy', 'transport-native', 'app-view'],
      protocolEras: ['legacy', 'native'],
    });
    expect(report).not.toHaveProperty('targetKinds');
    expect(result.stdout + result.stderr).not.toContain('never-printed');
  });

  it("leaves the child's session engine out of the proxy's bundle (the child's bundle has it)", () => {
    // The proxy's entry and every chunk it imports, statically or not, followed from the entry.
    const seen = new Set<string>();
    const pending = [bin];
    let proxyCode = '';
    for (let file = pending.pop(); file !== undefined; file = pending.pop()) {
      if (seen.has(file)) continue;
      seen.add(file);
      const code = readFileSync(file, 'utf8');
      proxyCode += code;
      for (const [, chunk] of code.matchAll(/(?:from|import\(?)\s*["'](\.\/[^"']+\.js)["']/g)) {
        pending.push(join(dirname(file), chunk as string));
      }
    }
    // The id of the recovery loop's own bounded retry stands for the engine: it is built with it.
    const engineMark = 'core.bounded-retry';
    expect(readFileSync(join(dirname(bin), 'runt-mcp-bundled.cjs'), 'utf8')).toContain(engineMark);
    expect(seen.size).toBeGreaterThan(1);
    expect(proxyCode).not.toContain(engineMark);
  });

  it("reports with runt-mcp --check exactly what the child loads: the eras it serves and the backends' target kinds", () => {
    const result = spawnSync(process.execPath, [childBin, '--check'], {
      encoding: 'utf8',
      env: { ...process.env, JUPYTER_TOKEN: 'never-printed' },
    });
    expect(result.status).toBe(0);
    const report = JSON.parse(result.stdout);
    expect(report).toMatchObject({
      plugins: ['transport-legacy', 'transport-native', 'local-daemon', 'hosted', 'app-view'],
      targetKinds: ['local-path', 'notebook-id', 'hosted-url'],
      protocolEras: ['legacy', 'native'],
      recovery: ['local-daemon.watch-loop', 'hosted.rejoin-retry'],
    });
    expect(Object.keys(report)).toEqual(['version', 'plugins', 'targetKinds', 'protocolEras', 'recovery']);
    expect(result.stdout + result.stderr).not.toContain('never-printed');
  });

  it('runt-mcp leaves a compile cache for its next start under $XDG_CACHE_HOME once it has started', async () => {
    const cacheHome = mkdtempSync(join(tmpdir(), 'runt-mcp-cache-'));
    const cacheDir = join(cacheHome, 'nteract-mcp', 'compile-cache');
    const child = spawn(process.execPath, [childBin], {
      env: { ...process.env, XDG_CACHE_HOME: cacheHome, NTERACT_MCP_NO_AUTOSTART: '1', NTERACT_MCP_LOG_LEVEL: 'error' },
      stdio: ['pipe', 'ignore', 'ignore'],
    });
    try {
      await vi.waitFor(
        () =>
          expect(existsSync(cacheDir) && readdirSync(cacheDir)).toEqual([
            expect.stringMatching(/^runt-mcp-bundled\.cjs\..+\.bin$/),
          ]),
        {
          timeout: 30_000,
          interval: 50,
        },
      );
      // A start compiled from that cache runs as well.
      expect(
        spawnSync(process.execPath, [childBin, '--version'], {
          encoding: 'utf8',
          env: { ...process.env, XDG_CACHE_HOME: cacheHome },
        }).stdout,
      ).toMatch(/^runt-mcp \d/);
      // Ended by the proxy's SIGTERM, it writes its cache again and still ends by that signal.
      const ended = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
      child.kill('SIGTERM');
      expect(await ended).toEqual({ code: null, signal: 'SIGTERM' });
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      rmSync(cacheHome, { recursive: true, force: true });
    }
    expect(runtHelp()).toContain('nteract-mcp/compile-cache');
  });

  it('documents the tool cache under $XDG_CACHE_HOME and refuses a bad --tool-list-wait-secs with exit 2', () => {
    expect(run('--help').stdout).toContain('$XDG_CACHE_HOME/nteract-mcp/tool-cache.json');
    for (const value of ['0', 'abc', '601']) {
      const result = run('--tool-list-wait-secs', value);
      expect(result.status).toBe(2);
      expect(result.stdout).toBe('');
      expect(result.stderr).toBe(
        `nteract-mcp: --tool-list-wait-secs needs a whole number from 1 to 600, got '${value}'.\n`,
      );
    }
  });

  it('documents --notebook and refuses it without a target, exit 2', () => {
    expect(run('--help').stdout).toContain('--notebook TARGET');
    for (const args of [['--notebook'], ['--notebook', '  ']]) {
      const result = run(...args);
      expect(result.status).toBe(2);
      expect(result.stdout).toBe('');
      expect(result.stderr).toBe('nteract-mcp: --notebook needs a notebook path, id or URL.\n');
    }
  });

  it('refuses unknown options with exit 2 and a hint on stderr', () => {
    const result = run('--frobnicate');
    expect(result.status).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe("nteract-mcp: unknown option '--frobnicate'. Run 'nteract-mcp --help' for usage.\n");
  });
});

describe('the composition of each bin', () => {
  it('gives the child every notebook backend and the proxy none', () => {
    const child = createMcpContainer({ plugins: childPlugins({ env: {} }) });
    expect(child.get(NotebookTargetResolver).supportedKinds()).toEqual(['local-path', 'notebook-id', 'hosted-url']);
    const proxy = createMcpContainer({ plugins: proxyPlugins() });
    expect(proxy.get(NotebookTargetResolver).supportedKinds()).toEqual([]);
    expect(proxy.getAll(ProtocolAdmission).map((era) => era.era)).toEqual(['legacy', 'native']);
  });
});
