import { execFileSync } from 'node:child_process';
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { findKernelspec, kernelspecSearchDirs, listKernelspecs } from './find-kernelspec.js';

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

  it('is unavailable, naming the interpreter, when a spec names a missing one by its path (no other interpreter in its place)', async () => {
    const root = await tempDir();
    const missing = join(root, 'gone-venv', 'bin', 'python3');
    await writeSpec(root, 'python3', {
      argv: [missing, '-m', 'ipykernel_launcher', '-f', '{connection_file}'],
      display_name: 'Project Python',
      language: 'python',
    });
    const resolution = await findKernelspec({ searchDirs: [root], pythonCandidates: ['/usr/bin/python3'] });
    expect(resolution.kind).toBe('unavailable');
    if (resolution.kind !== 'unavailable') return;
    expect(resolution.reason).toContain(`runs ${missing}, which does not exist`);
    const listed = await listKernelspecs({ searchDirs: [root], pythonCandidates: ['/usr/bin/python3'] });
    expect(listed.find((spec) => spec.name === 'python3')).toMatchObject({ available: false });
  }, 60_000);

  it('is unavailable when a spec names by its path an interpreter without ipykernel', async () => {
    const root = await tempDir();
    await writeSpec(root, 'python3', {
      argv: ['/bin/sh', '-m', 'ipykernel_launcher', '-f', '{connection_file}'],
      display_name: 'Odd Python',
      language: 'python',
    });
    const resolution = await findKernelspec({ searchDirs: [root], pythonCandidates: ['/usr/bin/python3'] });
    expect(resolution).toMatchObject({
      kind: 'unavailable',
      reason: expect.stringContaining('/bin/sh, which cannot import ipykernel'),
    });
  }, 60_000);

  it("replaces a spec's interpreter named by a bare name that cannot import ipykernel by a candidate that can", async () => {
    const root = await tempDir();
    const missing = 'no-such-python-nteract-test';
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

describe(kernelspecSearchDirs, () => {
  it("searches in Jupyter's order: JUPYTER_PATH, the user data dir, each interpreter's sys.prefix, then the system dirs", async () => {
    const root = await tempDir();
    // An "interpreter" that answers `sys.prefix` with a directory of ours.
    const python = join(root, 'bin', 'python3');
    await mkdir(join(root, 'bin'));
    await writeFile(python, `#!/bin/sh\necho ${join(root, 'venv')}\n`);
    await chmod(python, 0o755);
    const env = { HOME: '/home/u', JUPYTER_PATH: `/a:/b/`, PATH: '' };
    expect(
      await kernelspecSearchDirs({ env, pythonCandidates: [python, '/nonexistent/python'], platform: 'linux' }),
    ).toEqual([
      '/a/kernels',
      '/b/kernels',
      '/home/u/.local/share/jupyter/kernels',
      join(root, 'venv', 'share', 'jupyter', 'kernels'),
      '/usr/local/share/jupyter/kernels',
      '/usr/share/jupyter/kernels',
    ]);
    expect(await kernelspecSearchDirs({ env: { HOME: '/Users/u' }, pythonCandidates: [], platform: 'darwin' })).toEqual(
      ['/Users/u/Library/Jupyter/kernels', '/usr/local/share/jupyter/kernels', '/usr/share/jupyter/kernels'],
    );
    const xdg = { HOME: '/home/u', XDG_DATA_HOME: '/data' };
    expect((await kernelspecSearchDirs({ env: xdg, pythonCandidates: [], platform: 'linux' }))[0]).toBe(
      '/data/jupyter/kernels',
    );
    const dataDir = { ...xdg, JUPYTER_DATA_DIR: '/jd' };
    expect((await kernelspecSearchDirs({ env: dataDir, pythonCandidates: [], platform: 'darwin' }))[0]).toBe(
      '/jd/kernels',
    );
  });

  it('finds the Debian python3 kernelspec through /usr/bin/python3 (sys.prefix /usr)', async () => {
    const dirs = await kernelspecSearchDirs({ env: { HOME: '/nonexistent' }, pythonCandidates: ['/usr/bin/python3'] });
    expect(dirs).toContain('/usr/share/jupyter/kernels');
    expect(new Set(dirs).size).toBe(dirs.length);
  }, 60_000);
});

describe(listKernelspecs, () => {
  it('lists each name once (the first directory wins), says which cannot run and why, and adds the synthesised python3', async () => {
    const first = await tempDir();
    const second = await tempDir();
    await writeSpec(first, 'sh', { argv: ['/bin/sh', '{connection_file}'], display_name: 'Shell', language: 'sh' });
    await writeSpec(second, 'sh', { argv: ['/bin/false'], display_name: 'Shadowed', language: 'sh' });
    await writeSpec(second, 'ir', { argv: ['/nonexistent/R', '{connection_file}'], display_name: 'R', language: 'R' });
    await writeSpec(second, 'broken', '{ not json');
    await mkdir(join(second, 'empty-dir'));
    const listed = await listKernelspecs({ searchDirs: [first, second], pythonCandidates: ['/usr/bin/python3'] });
    expect(listed).toEqual([
      {
        name: 'ir',
        displayName: 'R',
        language: 'R',
        resourceDir: join(second, 'ir'),
        available: false,
        reason: expect.stringContaining('its program /nonexistent/R was not found'),
      },
      {
        name: 'python3',
        displayName: 'Python 3 (ipykernel)',
        language: 'python',
        available: true,
        interpreter: '/usr/bin/python3',
      },
      {
        name: 'sh',
        displayName: 'Shell',
        language: 'sh',
        resourceDir: join(first, 'sh'),
        available: true,
        interpreter: '/bin/sh',
      },
    ]);
  }, 60_000);

  it('lists no python3 when no interpreter has ipykernel and no directory has the spec', async () => {
    const empty = await tempDir();
    expect(await listKernelspecs({ searchDirs: [empty], pythonCandidates: ['/nonexistent/python'] })).toEqual([]);
  });

  it('never looks up a name that could leave the kernelspec directories', async () => {
    const root = await tempDir();
    await writeSpec(root, 'python3', { argv: ['/bin/sh', '{connection_file}'], language: 'sh' });
    const resolution = await findKernelspec({ name: '../kernels/python3', searchDirs: [join(root, 'x')] });
    expect(resolution).toEqual({ kind: 'unavailable', reason: expect.stringContaining('is not a kernelspec name') });
  });
});
