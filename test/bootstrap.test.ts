import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { installReason, stalePackages } from '../scripts/bootstrap.mjs';

const repo = fileURLToPath(new URL('..', import.meta.url));
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function scratch(): string {
  const dir = mkdtempSync(join(tmpdir(), 'nteract-bootstrap-'));
  dirs.push(dir);
  return dir;
}

function file(path: string, ageSeconds: number): void {
  mkdirSync(join(path, '..'), { recursive: true });
  writeFileSync(path, 'x');
  const when = Date.now() / 1000 - ageSeconds;
  utimesSync(path, when, when);
}

describe('bootstrap: install staleness', () => {
  it('installs when node_modules is missing, or older than package-lock.json', () => {
    const dir = scratch();
    file(join(dir, 'package-lock.json'), 100);
    expect(installReason(dir)).toBe('dependencies are not installed');
    file(join(dir, 'node_modules', '.package-lock.json'), 50);
    expect(installReason(dir)).toBeUndefined();
    file(join(dir, 'package-lock.json'), 10);
    expect(installReason(dir)).toBe('package-lock.json changed since the last install');
  });
});

describe('bootstrap: build staleness', () => {
  it('rebuilds packages whose dist is missing or older than any source', () => {
    const dir = scratch();
    for (const name of ['fresh', 'unbuilt', 'edited']) {
      file(join(dir, 'packages', name, 'package.json'), 100);
      file(join(dir, 'packages', name, 'src', 'index.ts'), 100);
    }
    file(join(dir, 'packages', 'fresh', 'dist', 'index.js'), 50);
    file(join(dir, 'packages', 'edited', 'dist', 'index.js'), 50);
    file(join(dir, 'packages', 'edited', 'src', 'deep', 'util.ts'), 10);
    file(join(dir, 'examples', 'demo', 'package.json'), 100);
    file(join(dir, 'examples', 'demo', 'src', 'main.ts'), 100);
    expect(stalePackages(dir).sort()).toEqual(['examples/demo', 'packages/edited', 'packages/unbuilt']);
  });
});

describe('npm start', () => {
  it('runs the distribution entry with its arguments, keeping stdout for the program alone', () => {
    const result = spawnSync(process.execPath, [join(repo, 'scripts', 'bootstrap.mjs'), 'start', '--version'], {
      encoding: 'utf8',
    });
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(/^nteract-mcp \d+\.\d+\.\d+\n$/);
  });

  it('refuses an unknown bootstrap command with exit 2', () => {
    const result = spawnSync(process.execPath, [join(repo, 'scripts', 'bootstrap.mjs'), 'deploy'], {
      encoding: 'utf8',
    });
    expect(result.status).toBe(2);
    expect(result.stderr).toContain('usage: node scripts/bootstrap.mjs <start|test|bench>');
  });
});
