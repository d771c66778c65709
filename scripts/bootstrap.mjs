#!/usr/bin/env node
// Brings a checkout up by itself, then runs a command. Node built-ins only: this runs before
// `npm ci`. Its own messages and those of npm/turbo go to stderr, so `start` keeps stdout for MCP.
//
//   node scripts/bootstrap.mjs start [args…]  install/build when needed, then run nteract-mcp
//   node scripts/bootstrap.mjs test           install/build when needed, lint, typecheck, all tests
//   node scripts/bootstrap.mjs bench          install/build when needed, then run the benchmarks
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const buildInputs = ['src', 'tsup.config.ts', 'tsconfig.json', 'package.json'];
const sharedBuildInputs = ['tsconfig.base.json', 'tsup.shared.ts'];

function say(message) {
  process.stderr.write(`[bootstrap] ${message}\n`);
}

/** Newest modification time (ms) of a file or of every file under a directory; 0 when absent. */
export function newestMtime(path) {
  if (!existsSync(path)) return 0;
  const info = statSync(path);
  if (!info.isDirectory()) return info.mtimeMs;
  let newest = 0;
  for (const entry of readdirSync(path)) newest = Math.max(newest, newestMtime(join(path, entry)));
  return newest;
}

/** Oldest modification time of the files under a directory; 0 when absent or empty. */
export function oldestMtime(path) {
  if (!existsSync(path)) return 0;
  const info = statSync(path);
  if (!info.isDirectory()) return info.mtimeMs;
  let oldest = Number.POSITIVE_INFINITY;
  for (const entry of readdirSync(path)) {
    const value = oldestMtime(join(path, entry));
    if (value === 0) return 0;
    oldest = Math.min(oldest, value);
  }
  return oldest === Number.POSITIVE_INFINITY ? 0 : oldest;
}

/** Why dependencies must be installed, or undefined when node_modules matches package-lock.json. */
export function installReason(dir) {
  const installed = join(dir, 'node_modules', '.package-lock.json');
  if (!existsSync(installed)) return 'dependencies are not installed';
  if (newestMtime(join(dir, 'package-lock.json')) > newestMtime(installed))
    return 'package-lock.json changed since the last install';
  return undefined;
}

/** Workspace packages (`packages/*`, `examples/*`) whose dist is missing or older than their sources. */
export function stalePackages(dir) {
  const stale = [];
  const shared = Math.max(0, ...sharedBuildInputs.map((input) => newestMtime(join(dir, input))));
  for (const group of ['packages', 'examples']) {
    const groupDir = join(dir, group);
    if (!existsSync(groupDir)) continue;
    for (const name of readdirSync(groupDir)) {
      const pkg = join(groupDir, name);
      if (!existsSync(join(pkg, 'package.json'))) continue;
      const built = oldestMtime(join(pkg, 'dist'));
      if (built === 0 || shared > built || buildInputs.some((input) => newestMtime(join(pkg, input)) > built))
        stale.push(`${group}/${name}`);
    }
  }
  return stale;
}

function run(command, args, options = {}) {
  const result = spawnSync(command, args, {
    cwd: root,
    stdio: options.stdio ?? ['ignore', 2, 2],
    env: { ...process.env, TURBO_TELEMETRY_DISABLED: '1', DO_NOT_TRACK: '1', ...options.env },
  });
  if (result.error) throw result.error;
  return result.status ?? (result.signal ? 128 : 1);
}

function npmCommand() {
  return process.platform === 'win32' ? 'npm.cmd' : 'npm';
}

function bin(name) {
  return join(root, 'node_modules', '.bin', name);
}

function ensureReady() {
  const reason = installReason(root);
  if (reason) {
    say(`${reason}: running npm ci`);
    if (run(npmCommand(), ['ci', '--no-audit', '--no-fund']) !== 0) return 'npm ci failed';
  }
  const stale = stalePackages(root);
  if (stale.length > 0) {
    say(`building (${stale.join(', ')} missing or out of date)`);
    if (run(bin('turbo'), ['run', 'build', '--output-logs=errors-only']) !== 0) return 'the build failed';
  }
  return undefined;
}

function main(argv) {
  const [command, ...args] = argv;
  if (!['start', 'test', 'bench'].includes(command)) {
    say('usage: node scripts/bootstrap.mjs <start|test|bench> [args…]');
    return 2;
  }
  const failure = ensureReady();
  if (failure) {
    say(failure);
    if (command === 'test') console.log('0 passed, 1 failed');
    return 1;
  }
  const inherit = ['inherit', 'inherit', 'inherit'];
  if (command === 'start') {
    return run(process.execPath, [join(root, 'packages', 'nteract-mcp', 'dist', 'nteract-mcp.js'), ...args], {
      stdio: inherit,
    });
  }
  if (command === 'bench') {
    return run(process.execPath, [join(root, 'bench', 'run-benchmarks.mjs'), ...args], { stdio: inherit });
  }
  for (const [label, step, stepArgs] of [
    ['lint (biome)', bin('biome'), ['check', '.']],
    ['typecheck', bin('turbo'), ['run', 'typecheck', '--output-logs=errors-only']],
    ['typecheck (test/)', bin('tsc'), ['-p', 'test/tsconfig.json']],
  ]) {
    say(label);
    if (run(step, stepArgs) !== 0) {
      say(`${label} failed`);
      console.log('0 passed, 1 failed');
      return 1;
    }
  }
  return run(bin('vitest'), ['run', '--config', 'vitest.all.config.ts', ...args], { stdio: inherit });
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  process.exitCode = main(process.argv.slice(2));
}
