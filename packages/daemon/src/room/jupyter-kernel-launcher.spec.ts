import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RecordingLogger } from '@nteract-mcp/foundation/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { PythonProbeCache } from '../kernel/python-probe-cache.js';
import { JupyterKernelLauncher } from './jupyter-kernel-launcher.js';

const tempDirs: string[] = [];
afterEach(async () => {
  await Promise.all(tempDirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

/**
 * A kernelspec dir with `python3/kernel.json` naming a fake interpreter: each fake records its runs
 * (`probe` for `-c …`, `kernel` for `-m ipykernel_launcher`) in `runs`, answers the probes as a
 * Python with ipykernel does, and exits 3 as a kernel (so no real kernel is ever started).
 */
async function fakeInstall() {
  const dir = await mkdtemp(join(tmpdir(), 'launcher-'));
  tempDirs.push(dir);
  const runs = join(dir, 'runs');
  const module = join(dir, 'site', 'ipykernel', '__init__.py');
  await mkdir(join(dir, 'site', 'ipykernel'), { recursive: true });
  await writeFile(module, '');
  await writeFile(runs, '');
  const python = async (name: string) => {
    const path = join(dir, 'bin', name);
    await mkdir(join(dir, 'bin'), { recursive: true });
    await writeFile(
      path,
      [
        '#!/bin/sh',
        'case "$1" in',
        `  -m) echo "${name} kernel" >> '${runs}'; exit 3 ;;`,
        'esac',
        `echo "${name} probe" >> '${runs}'`,
        `case "$2" in *ipykernel*) echo '${module}' ;; *) echo '${dir}/prefix' ;; esac`,
        '',
      ].join('\n'),
    );
    await chmod(path, 0o755);
    return path;
  };
  const specs = join(dir, 'kernels');
  const useInterpreter = async (interpreter: string) => {
    await mkdir(join(specs, 'python3'), { recursive: true });
    await writeFile(
      join(specs, 'python3', 'kernel.json'),
      JSON.stringify({
        argv: [interpreter, '-m', 'ipykernel_launcher', '-f', '{connection_file}'],
        display_name: 'Fake',
        language: 'python',
      }),
    );
  };
  const first = await python('python-a');
  await useInterpreter(first);
  const launcher = new JupyterKernelLauncher({
    logger: new RecordingLogger(),
    connectionDir: join(dir, 'connections'),
    kernelspec: { searchDirs: [specs], pythonCandidates: [first], env: { PATH: '/usr/bin:/bin', HOME: dir } },
    probeCache: new PythonProbeCache({ file: join(dir, 'cache', 'python-probes.json') }),
  });
  return {
    launcher,
    python,
    useInterpreter,
    workingDir: dir,
    runs: async () => (await readFile(runs, 'utf8')).split('\n').filter(Boolean),
  };
}

describe(JupyterKernelLauncher, () => {
  it('resolves the default kernelspec ahead (prewarm), so the launch starts no probe before the kernel', async () => {
    const install = await fakeInstall();
    await install.launcher.prewarm();
    const probed = await install.runs();
    expect(probed.length).toBeGreaterThan(0);
    expect(probed.every((run) => run.endsWith(' probe'))).toBe(true);
    await expect(install.launcher.launch(install.workingDir)).rejects.toThrow();
    expect(await install.runs()).toEqual([...probed, 'python-a kernel']);
  });

  it('looks the spec up again after its kernel failed to start', async () => {
    const install = await fakeInstall();
    await expect(install.launcher.launch(install.workingDir)).rejects.toThrow();
    // The installation changed meanwhile: the next launch sees it.
    await install.useInterpreter(await install.python('python-b'));
    await expect(install.launcher.launch(install.workingDir)).rejects.toThrow();
    const kernels = (await install.runs()).filter((run) => run.endsWith(' kernel'));
    expect(kernels).toEqual(['python-a kernel', 'python-b kernel']);
  });
});
