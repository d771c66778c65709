import { chmod, mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { findProjectVirtualenv } from './find-project-virtualenv.js';

const tempDirs: string[] = [];
afterEach(async () => {
  await Promise.all(tempDirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

async function tempDir(): Promise<string> {
  const dir = await realpath(await mkdtemp(join(tmpdir(), 'venv-test-')));
  tempDirs.push(dir);
  return dir;
}

/** A stand-in virtualenv whose `bin/python` imports ipykernel (exits 0) or not (exits 1). */
async function fakeVenv(dir: string, hasIpykernel: boolean): Promise<string> {
  await mkdir(join(dir, 'bin'), { recursive: true });
  const python = join(dir, 'bin', 'python');
  await writeFile(python, `#!/bin/sh\nexit ${hasIpykernel ? 0 : 1}\n`);
  await chmod(python, 0o755);
  return python;
}

describe(findProjectVirtualenv, () => {
  it('finds .venv in the working directory or the nearest directory above that has one', async () => {
    const root = await tempDir();
    const python = await fakeVenv(join(root, '.venv'), true);
    const deep = join(root, 'src', 'pkg');
    await mkdir(deep, { recursive: true });
    expect(await findProjectVirtualenv({ cwd: deep, env: {} })).toEqual({ dir: join(root, '.venv'), python });
  });

  it('prefers $VIRTUAL_ENV, and skips candidates without ipykernel (venv/ then counts)', async () => {
    const root = await tempDir();
    const active = await tempDir();
    const activePython = await fakeVenv(active, true);
    await fakeVenv(join(root, '.venv'), false);
    const venvPython = await fakeVenv(join(root, 'venv'), true);
    expect(await findProjectVirtualenv({ cwd: root, env: { VIRTUAL_ENV: active } })).toEqual({
      dir: active,
      python: activePython,
    });
    expect(await findProjectVirtualenv({ cwd: root, env: {} })).toEqual({
      dir: join(root, 'venv'),
      python: venvPython,
    });
  });

  it('finds nothing without a usable candidate or a working directory', async () => {
    const root = await tempDir();
    await fakeVenv(join(root, '.venv'), false);
    expect(await findProjectVirtualenv({ cwd: root, env: {} })).toBeUndefined();
    expect(await findProjectVirtualenv({ env: { VIRTUAL_ENV: 'relative/venv' } })).toBeUndefined();
  });
});
