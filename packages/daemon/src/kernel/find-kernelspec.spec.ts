import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { findKernelspec } from './find-kernelspec.js';

const tempDirs: string[] = [];

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'kernelspec-test-'));
  tempDirs.push(dir);
  return dir;
}

async function writeSpec(root: string, name: string, json: unknown): Promise<string> {
  const dir = join(root, name);
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, 'kernel.json'), typeof json === 'string' ? json : JSON.stringify(json));
  return dir;
}

function importsIpykernel(interpreter: string): boolean {
  try {
    execFileSync(interpreter, ['-c', 'import ipykernel'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

afterEach(async () => {
  await Promise.all(tempDirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

describe(findKernelspec, () => {
  it('finds the python3 kernel of this machine, with an interpreter that imports ipykernel', async () => {
    const resolution = await findKernelspec();
    expect(resolution.kind).toBe('found');
    if (resolution.kind !== 'found') return;
    const { spec } = resolution;
    expect(spec.name).toBe('python3');
    expect(spec.language).toBe('python');
    expect(spec.argv).toContain('{connection_file}');
    expect(importsIpykernel(spec.argv[0] ?? '')).toBe(true);
  }, 60_000);

  it('is unavailable, saying to install ipykernel, when there is neither a spec nor an interpreter', async () => {
    const empty = await tempDir();
    const resolution = await findKernelspec({ searchDirs: [empty], pythonCandidates: ['/nonexistent/python'] });
    expect(resolution.kind).toBe('unavailable');
    if (resolution.kind !== 'unavailable') return;
    expect(resolution.reason).toMatch(/ipykernel/);
    expect(resolution.reason).toMatch(/pip install ipykernel|python3-ipykernel/);
  });

  it("replaces a spec's interpreter that cannot import ipykernel by a candidate that can", async () => {
    const root = await tempDir();
    const missing = join(root, 'bin', 'python3');
    const resourceDir = await writeSpec(root, 'python3', {
      argv: [missing, '-m', 'ipykernel_launcher', '-f', '{connection_file}'],
      display_name: 'Project Python',
      language: 'python',
      env: { PROJECT_FLAG: '1', IGNORED: 3 },
      interrupt_mode: 'message',
    });
    const resolution = await findKernelspec({ searchDirs: [root], pythonCandidates: ['/usr/bin/python3'] });
    expect(resolution).toEqual({
      kind: 'found',
      spec: {
        name: 'python3',
        displayName: 'Project Python',
        language: 'python',
        argv: ['/usr/bin/python3', '-m', 'ipykernel_launcher', '-f', '{connection_file}'],
        env: { PROJECT_FLAG: '1' },
        interruptMode: 'message',
        resourceDir,
      },
    });
  }, 60_000);

  it('synthesises the ipykernel spec when no directory has one but a candidate has ipykernel', async () => {
    const empty = await tempDir();
    const resolution = await findKernelspec({
      searchDirs: [empty],
      pythonCandidates: ['/nonexistent/python', '/usr/bin/python3'],
    });
    expect(resolution).toEqual({
      kind: 'found',
      spec: {
        name: 'python3',
        displayName: 'Python 3 (ipykernel)',
        language: 'python',
        argv: ['/usr/bin/python3', '-m', 'ipykernel_launcher', '-f', '{connection_file}'],
        env: {},
        interruptMode: 'signal',
      },
    });
  }, 60_000);

  it('skips a broken kernel.json in favour of a later directory and reports it when nothing works', async () => {
    const broken = await tempDir();
    const good = await tempDir();
    await writeSpec(broken, 'python3', '{ not json');
    await writeSpec(good, 'python3', {
      argv: ['/usr/bin/python3', '-m', 'ipykernel_launcher', '-f', '{connection_file}'],
      display_name: 'Good',
      language: 'python',
    });
    const found = await findKernelspec({ searchDirs: [broken, good], pythonCandidates: [] });
    expect(found.kind === 'found' && found.spec.displayName).toBe('Good');

    const missing = await findKernelspec({ searchDirs: [broken], pythonCandidates: ['/nonexistent/python'] });
    expect(missing.kind === 'unavailable' && missing.reason).toMatch(/kernel\.json: is not valid JSON/);
  }, 60_000);

  it('does not synthesise a Python kernel for another language, and checks its program exists', async () => {
    const root = await tempDir();
    await writeSpec(root, 'ir', { argv: ['/nonexistent/R', '--slave', '{connection_file}'], language: 'R' });
    const resolution = await findKernelspec({ name: 'ir', searchDirs: [root], pythonCandidates: ['/usr/bin/python3'] });
    expect(resolution.kind).toBe('unavailable');
    expect(resolution.kind === 'unavailable' && resolution.reason).toMatch(/\/nonexistent\/R was not found/);

    await writeSpec(root, 'sh', { argv: ['/bin/sh', '{connection_file}'], language: 'sh' });
    const other = await findKernelspec({ name: 'sh', searchDirs: [root], pythonCandidates: [] });
    expect(other.kind === 'found' && other.spec.argv[0]).toBe('/bin/sh');
  });
});
