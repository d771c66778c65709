import { chmod, mkdir, mkdtemp, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { findKernelspec } from './find-kernelspec.js';
import { PythonProbeCache } from './python-probe-cache.js';

const tempDirs: string[] = [];
afterEach(async () => {
  await Promise.all(tempDirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

/**
 * A fake Python in a temp dir: a script that records each run in `runs`, prints the prefix it
 * reads from `selected` for `sys.prefix` (as a pyenv shim reads its version file), and for `import ipykernel` prints its module file when `site/ipykernel/__init__.py`
 * exists (else fails, as Python without ipykernel does).
 */
async function fakePython(prefix = '/opt/fake-prefix') {
  const dir = await mkdtemp(join(tmpdir(), 'probe-cache-'));
  tempDirs.push(dir);
  const python = join(dir, 'bin', 'python3');
  const runs = join(dir, 'runs');
  const module = join(dir, 'site', 'ipykernel', '__init__.py');
  const selected = join(dir, 'selected');
  await mkdir(join(dir, 'bin'));
  await writeFile(runs, '');
  const write = async (printedPrefix: string) => {
    await writeFile(selected, printedPrefix);
    await writeFile(
      python,
      [
        '#!/bin/sh',
        `echo run >> '${runs}'`,
        'case "$2" in',
        `  *ipykernel*) [ -f '${module}' ] || exit 1; echo '${module}' ;;`,
        `  *) cat '${selected}'; echo ;;`,
        'esac',
        `# ${printedPrefix}`,
        '',
      ].join('\n'),
    );
    await chmod(python, 0o755);
  };
  await write(prefix);
  return {
    dir,
    python,
    cacheFile: join(dir, 'state', 'cache', 'python-probes.json'),
    module,
    runCount: async () => (await readFile(runs, 'utf8')).split('\n').filter(Boolean).length,
    installIpykernel: async () => {
      await mkdir(join(dir, 'site', 'ipykernel'), { recursive: true });
      await writeFile(module, '# ipykernel\n');
    },
    /** Another prefix, the interpreter file untouched (what no file mark shows). */
    select: (printedPrefix: string) => writeFile(selected, printedPrefix),
    /** Rewrites the interpreter (another size and mtime, as an upgrade of Python does). */
    replace: async (printedPrefix: string) => {
      await write(printedPrefix);
      const later = new Date(Date.now() + 60_000);
      await utimes(python, later, later);
    },
  };
}

const env = { PATH: '/usr/bin:/bin', HOME: '/home/u' };

describe(PythonProbeCache, () => {
  it('answers a fresh daemon from the answers an earlier one kept, starting no interpreter', async () => {
    const py = await fakePython();
    await py.installIpykernel();
    const first = new PythonProbeCache({ file: py.cacheFile });
    expect(await first.sysPrefix(py.python, env)).toBe('/opt/fake-prefix');
    expect(await first.importsIpykernel(py.python, env)).toBe(true);
    expect(await py.runCount()).toBe(2);
    const next = new PythonProbeCache({ file: py.cacheFile });
    expect(await next.sysPrefix(py.python, env)).toBe('/opt/fake-prefix');
    expect(await next.importsIpykernel(py.python, env)).toBe(true);
    expect(await py.runCount()).toBe(2);
  });

  it('asks again when the interpreter file changed, when ipykernel is gone, and under other Python variables', async () => {
    const py = await fakePython();
    await py.installIpykernel();
    await new PythonProbeCache({ file: py.cacheFile }).importsIpykernel(py.python, env);
    await new PythonProbeCache({ file: py.cacheFile }).sysPrefix(py.python, env);
    expect(await py.runCount()).toBe(2);

    await py.replace('/opt/upgraded');
    expect(await new PythonProbeCache({ file: py.cacheFile }).sysPrefix(py.python, env)).toBe('/opt/upgraded');
    expect(await py.runCount()).toBe(3);

    await rm(py.module);
    expect(await new PythonProbeCache({ file: py.cacheFile }).importsIpykernel(py.python, env)).toBe(false);
    expect(await py.runCount()).toBe(4);

    const other = { ...env, PYTHONPATH: '/somewhere/else' };
    expect(await new PythonProbeCache({ file: py.cacheFile }).sysPrefix(py.python, other)).toBe('/opt/upgraded');
    expect(await py.runCount()).toBe(5);
    // Only a hash of the variables is kept, never their values.
    expect(await readFile(py.cacheFile, 'utf8')).not.toContain('/somewhere/else');
  });

  it('keeps no negative answer: ipykernel installed later is seen without a restart', async () => {
    const py = await fakePython();
    const cache = new PythonProbeCache({ file: py.cacheFile });
    expect(await cache.importsIpykernel(py.python, env)).toBe(false);
    expect(await cache.importsIpykernel(py.python, env)).toBe(false);
    expect(await py.runCount()).toBe(2);
    await py.installIpykernel();
    expect(await cache.importsIpykernel(py.python, env)).toBe(true);
    expect(await cache.importsIpykernel(py.python, env)).toBe(true);
    expect(await py.runCount()).toBe(3);
  });

  it('asks again once what it answered from the file, and says whether an answer changed', async () => {
    const py = await fakePython('/opt/a');
    await new PythonProbeCache({ file: py.cacheFile }).sysPrefix(py.python, env);
    const unchanged = new PythonProbeCache({ file: py.cacheFile });
    await unchanged.sysPrefix(py.python, env);
    expect(await py.runCount()).toBe(1);
    expect(await unchanged.revalidate()).toBe(false);
    expect(await py.runCount()).toBe(2);
    // Once per life: nothing more to ask.
    expect(await unchanged.revalidate()).toBe(false);
    expect(await py.runCount()).toBe(2);

    // A change no file mark shows (as when a pyenv shim selects another version).
    await py.select('/opt/b');
    const served = new PythonProbeCache({ file: py.cacheFile });
    expect(await served.sysPrefix(py.python, env)).toBe('/opt/a');
    expect(await served.revalidate()).toBe(true);
    expect(await new PythonProbeCache({ file: py.cacheFile }).sysPrefix(py.python, env)).toBe('/opt/b');
  });

  it('starts empty from a file that is not its own, and writes a good one', async () => {
    const py = await fakePython();
    await mkdir(join(py.dir, 'state', 'cache'), { recursive: true });
    await writeFile(py.cacheFile, 'not json');
    expect(await new PythonProbeCache({ file: py.cacheFile }).sysPrefix(py.python, env)).toBe('/opt/fake-prefix');
    expect(JSON.parse(await readFile(py.cacheFile, 'utf8'))).toMatchObject({ version: 1 });
  });

  it('lets findKernelspec of a fresh daemon resolve the same spec without running the interpreter', async () => {
    const py = await fakePython();
    await py.installIpykernel();
    const searchDirs = [join(py.dir, 'no-kernels-here')];
    const lookup = (probes: PythonProbeCache) =>
      findKernelspec({ searchDirs, pythonCandidates: [py.python], env, probes });
    const first = await lookup(new PythonProbeCache({ file: py.cacheFile }));
    const runs = await py.runCount();
    expect(first.kind === 'found' ? first.spec.argv.slice(0, 3) : first).toEqual([
      py.python,
      '-m',
      'ipykernel_launcher',
    ]);
    const again = await lookup(new PythonProbeCache({ file: py.cacheFile }));
    expect(again).toEqual(first);
    expect(await py.runCount()).toBe(runs);
  });

  it('ends a probe under way with the processes it started when closed, and starts none after', async () => {
    // A shim as pyenv's is: a shell script whose own children do the work.
    const dir = await mkdtemp(join(tmpdir(), 'probe-cache-'));
    tempDirs.push(dir);
    const python = join(dir, 'python3');
    const pids = join(dir, 'pids');
    await writeFile(python, `#!/bin/sh\nsleep 600 &\necho $! >> '${pids}'\nwait\n`);
    await chmod(python, 0o755);
    const cache = new PythonProbeCache();
    const asked = cache.sysPrefix(python, env);
    const grandchild = await waitForPid(pids);
    cache.close();
    expect(await asked).toBeUndefined();
    await expect.poll(() => isAlive(grandchild), { timeout: 10_000 }).toBe(false);
    expect(await cache.sysPrefix(python, env)).toBeUndefined();
    expect((await readFile(pids, 'utf8')).trim().split('\n')).toHaveLength(1);
  });
});

async function waitForPid(file: string): Promise<number> {
  for (;;) {
    const text = await readFile(file, 'utf8').catch(() => '');
    const pid = Number.parseInt(text, 10);
    if (Number.isInteger(pid) && pid > 0) return pid;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
