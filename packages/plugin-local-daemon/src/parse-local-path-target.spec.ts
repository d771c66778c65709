import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { CoreError } from '@nteract-mcp/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inspectPathOnDisk, parseLocalPathTarget } from './parse-local-path-target.js';

let root: string;
let canonicalRoot: string;

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'nteract-target-'));
  canonicalRoot =
    inspectPathOnDisk(root).kind === 'directory'
      ? (inspectPathOnDisk(root) as { canonicalPath: string }).canonicalPath
      : root;
  mkdirSync(join(root, 'real'));
  writeFileSync(join(root, 'real', 'a.ipynb'), '{}');
  symlinkSync(join(root, 'real'), join(root, 'link'));
  mkdirSync(join(root, 'home'));
});

afterAll(() => rmSync(root, { recursive: true, force: true }));

function expectInvalid(run: () => unknown, message: string | RegExp): void {
  let caught: unknown;
  try {
    run();
  } catch (error) {
    caught = error;
  }
  expect(CoreError.is(caught, 'invalidTarget')).toBe(true);
  if (typeof message === 'string') expect((caught as Error).message).toBe(message);
  else expect((caught as Error).message).toMatch(message);
}

describe(parseLocalPathTarget, () => {
  it('resolves a relative path against the given cwd and canonicalises an existing file', () => {
    const target = parseLocalPathTarget('link/a.ipynb', { cwd: root });
    expect(target).toEqual({ kind: 'local-path', path: join(canonicalRoot, 'real', 'a.ipynb'), existed: true });
  });

  it('expands ~ and ~/ with the home directory', () => {
    writeFileSync(join(root, 'home', 'h.ipynb'), '{}');
    expect(parseLocalPathTarget('~/h.ipynb', { cwd: '/', homeDir: join(root, 'home') }).path).toBe(
      join(canonicalRoot, 'home', 'h.ipynb'),
    );
    expectInvalid(() => parseLocalPathTarget('~', { cwd: '/', homeDir: join(root, 'home') }), /is a directory/);
  });

  it('keeps a missing file in an existing directory (a new notebook), canonicalising the directory', () => {
    const target = parseLocalPathTarget(join(root, 'link', 'b.ipynb'), { cwd: '/' });
    expect(target).toEqual({ kind: 'local-path', path: join(canonicalRoot, 'real', 'b.ipynb'), existed: false });
  });

  it('refuses a missing file whose directory does not exist, naming the directory', () => {
    expectInvalid(
      () => parseLocalPathTarget(join(root, 'link', 'new', 'b.ipynb'), { cwd: '/' }),
      `Cannot open '${join(root, 'link', 'new', 'b.ipynb')}': the directory ${join(root, 'link', 'new')} does not exist. Create it first, or give a path in an existing directory.`,
    );
  });

  it('accepts a file:// URL', () => {
    expect(parseLocalPathTarget(pathToFileURL(join(root, 'real', 'a.ipynb')).href, { cwd: '/' }).path).toBe(
      join(canonicalRoot, 'real', 'a.ipynb'),
    );
  });

  it('refuses empty input, a directory, ~user and a relative cwd with actionable messages', () => {
    expectInvalid(
      () => parseLocalPathTarget('', { cwd: root }),
      "Notebook path is empty: give the path of a .ipynb file, e.g. 'analysis.ipynb'.",
    );
    expectInvalid(() => parseLocalPathTarget('   ', { cwd: root }), /Notebook path is empty/);
    expectInvalid(
      () => parseLocalPathTarget('real', { cwd: root }),
      /is a directory\. Give the path of a notebook file inside it/,
    );
    expectInvalid(() => parseLocalPathTarget('~bob/x.ipynb', { cwd: root }), /'~user' paths are not supported/);
    expectInvalid(() => parseLocalPathTarget('x.ipynb', { cwd: 'relative/dir' }), /is not absolute/);
    expectInvalid(() => parseLocalPathTarget('a\0b.ipynb', { cwd: root }), /NUL byte/);
  });

  it('uses the injected file-system view', () => {
    const target = parseLocalPathTarget('x.ipynb', {
      cwd: '/work',
      inspectPath: (path) =>
        path === '/work/x.ipynb' ? { kind: 'file', canonicalPath: '/data/x.ipynb' } : { kind: 'missing' },
    });
    expect(target.path).toBe('/data/x.ipynb');
  });
});
