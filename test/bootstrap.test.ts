import { spawnSync } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import {
  installPlan,
  installReason,
  kernelspecDirs,
  kernelspecRuns,
  missingHint,
  missingPrerequisites,
  nodeTooOld,
  prerequisitesFor,
  pythonCandidates,
  stalePackages,
  systemPrerequisites,
} from '../scripts/bootstrap.mjs';

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

describe('a fresh clone installs cleanly', () => {
  it('`npm ci` prints no EBADENGINE warning on the Node.js this repository supports (the root `overrides` keeps every locked package installable on Node 20)', {
    timeout: 60_000,
  }, () => {
    // What `npm ci` reads of a clone: the root manifest, the lockfile and each workspace's manifest.
    const clone = scratch();
    for (const path of ['package.json', 'package-lock.json']) copyFileSync(join(repo, path), join(clone, path));
    const patterns = (JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')) as { workspaces: string[] })
      .workspaces;
    const workspaces = patterns.flatMap((pattern) =>
      pattern.endsWith('/*')
        ? readdirSync(join(repo, pattern.slice(0, -2))).map((name) => join(pattern.slice(0, -2), name))
        : [pattern],
    );
    for (const workspace of workspaces) {
      if (!existsSync(join(repo, workspace, 'package.json'))) continue;
      mkdirSync(join(clone, workspace), { recursive: true });
      copyFileSync(join(repo, workspace, 'package.json'), join(clone, workspace, 'package.json'));
    }
    const env: Record<string, string> = {};
    for (const [key, value] of Object.entries(process.env))
      if (value !== undefined && !/^npm_/i.test(key)) env[key] = value;
    const result = spawnSync('npm', ['ci', '--dry-run', '--no-audit', '--no-fund'], {
      cwd: clone,
      env,
      encoding: 'utf8',
    });
    const printed = `${result.stdout}\n${result.stderr}`;
    expect(result.status, printed).toBe(0);
    expect(printed).not.toMatch(/EBADENGINE/);
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
  // A real run of the bootstrap: it checks the prerequisites and rebuilds what is stale first.
  it('runs the distribution entry with its arguments, keeping stdout for the program alone', {
    timeout: 180_000,
  }, () => {
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
    expect(result.stderr).toContain('usage: node scripts/bootstrap.mjs <start|test|bench|demo>');
  });
});

describe('bootstrap: system prerequisites', () => {
  const ipykernel = systemPrerequisites.find((prerequisite) => prerequisite.name === 'ipykernel');

  const irkernel = systemPrerequisites.find((prerequisite) => prerequisite.name === 'IRkernel');

  it('checks each prerequisite with its probe (a Python import or a kernelspec) and reports only those missing', () => {
    const asked: string[] = [];
    expect(
      missingPrerequisites(
        (module: string) => {
          asked.push(`import ${module}`);
          return true;
        },
        (kernelspec: string) => {
          asked.push(`kernelspec ${kernelspec}`);
          return true;
        },
        systemPrerequisites,
        (program: string) => {
          asked.push(`program ${program}`);
          return true;
        },
      ),
    ).toEqual([]);
    expect(asked).toEqual(
      systemPrerequisites.map((prerequisite) =>
        'executable' in prerequisite
          ? `program ${prerequisite.executable}`
          : 'kernelspec' in prerequisite
            ? `kernelspec ${prerequisite.kernelspec}`
            : `import ${prerequisite.module}`,
      ),
    );
    expect(asked).toContain('kernelspec ir');
    expect(asked).toContain('program chromium');
    expect(
      missingPrerequisites(
        () => false,
        () => false,
        systemPrerequisites,
        () => false,
      ),
    ).toEqual(systemPrerequisites);
    expect(
      missingPrerequisites(
        () => true,
        () => false,
        systemPrerequisites,
        () => true,
      ),
    ).toEqual([irkernel]);
  });

  it('finds a kernelspec where Jupyter looks, and counts it only when its program exists', () => {
    const dir = scratch();
    const spec = (name: string, program: string): void => {
      mkdirSync(join(dir, 'kernels', name), { recursive: true });
      writeFileSync(
        join(dir, 'kernels', name, 'kernel.json'),
        JSON.stringify({ argv: [program, '{connection_file}'] }),
      );
    };
    spec('nteract-test-sh', 'sh');
    spec('nteract-test-gone', '/nonexistent/R');
    const env = { JUPYTER_PATH: dir, HOME: dir, PATH: '/usr/bin:/bin' };
    expect(kernelspecRuns('nteract-test-sh', env)).toBe(true);
    expect(kernelspecRuns('nteract-test-gone', env)).toBe(false);
    expect(kernelspecRuns('nteract-test-absent', env)).toBe(false);
    expect(kernelspecDirs({ HOME: '/Users/u' }, 'darwin')).toEqual([
      '/Users/u/Library/Jupyter/kernels',
      '/usr/local/share/jupyter/kernels',
      '/usr/share/jupyter/kernels',
    ]);
  });

  // It probes real interpreters (each import bounded to 20 s by the bootstrap): not the 5 s default under load.
  it('requires matplotlib (Debian python3-matplotlib) for the rich-output tests, and finds it here', {
    timeout: 120_000,
  }, () => {
    expect(systemPrerequisites.find((prerequisite) => prerequisite.name === 'matplotlib')).toMatchObject({
      module: 'matplotlib.pyplot',
      debian: 'python3-matplotlib',
      pip: 'matplotlib',
    });
    expect(missingPrerequisites().map((prerequisite) => prerequisite.name)).toEqual([]);
  });

  it('asks of `demo` only what its session runs (a Python kernel and matplotlib), of `test` and `bench` everything', () => {
    expect(prerequisitesFor('demo').map((prerequisite) => prerequisite.name)).toEqual(['ipykernel', 'matplotlib']);
    expect(prerequisitesFor('test')).toEqual(systemPrerequisites);
    expect(prerequisitesFor('bench')).toEqual(systemPrerequisites);
    const none = () => false;
    expect(missingPrerequisites(none, none, prerequisitesFor('demo')).map((prerequisite) => prerequisite.name)).toEqual(
      ['ipykernel', 'matplotlib'],
    );
  });

  it('includes the Jupyter Server the hosted-notebook tests need, probed by importing jupyter_server', () => {
    expect(systemPrerequisites.find((prerequisite) => prerequisite.name === 'jupyter_server')).toMatchObject({
      module: 'jupyter_server',
      debian: 'python3-jupyter-server',
    });
  });

  it('installs with apt-get as root, through sudo -n when allowed, and not at all otherwise', () => {
    const missing = [ipykernel];
    expect(installPlan(missing, { hasAptGet: true, uid: 0, sudoWithoutPassword: false })).toEqual({
      prefix: [],
      packages: ['python3-ipykernel'],
    });
    expect(installPlan(missing, { hasAptGet: true, uid: 1000, sudoWithoutPassword: true })).toEqual({
      prefix: ['sudo', '-n'],
      packages: ['python3-ipykernel'],
    });
    expect(installPlan(missing, { hasAptGet: true, uid: 1000, sudoWithoutPassword: false })).toBeUndefined();
    expect(installPlan(missing, { hasAptGet: false, uid: 0, sudoWithoutPassword: false })).toBeUndefined();
    expect(installPlan([], { hasAptGet: true, uid: 0, sudoWithoutPassword: false })).toBeUndefined();
  });

  it('names what is missing, what it is for and the command that installs it, in one line', () => {
    const onDebian = missingHint([ipykernel], { hasAptGet: true });
    expect(onDebian).toBe(
      'missing ipykernel (the Jupyter kernel that runs Python code in notebooks); install it with: sudo apt-get install -y python3-ipykernel',
    );
    expect(missingHint([ipykernel], { hasAptGet: false })).toContain('python3 -m pip install ipykernel');
    expect(onDebian).not.toContain('\n');
    expect(missingHint([ipykernel, irkernel], { hasAptGet: true })).toBe(
      'missing ipykernel (the Jupyter kernel that runs Python code in notebooks), IRkernel (the Jupyter kernel that runs R code in notebooks); install it with: sudo apt-get install -y python3-ipykernel r-cran-irkernel',
    );
    expect(missingHint([ipykernel, irkernel], { hasAptGet: false })).toBe(
      'missing ipykernel (the Jupyter kernel that runs Python code in notebooks), IRkernel (the Jupyter kernel that runs R code in notebooks); install it with: python3 -m pip install ipykernel; R -e \'install.packages("IRkernel"); IRkernel::installspec()\'',
    );
  });

  it('looks at the interpreters the daemon looks at, RUNTIMED_PYTHON first', () => {
    expect(pythonCandidates({ RUNTIMED_PYTHON: ' /opt/py/bin/python ' })).toEqual([
      '/opt/py/bin/python',
      'python3',
      'python',
      '/usr/bin/python3',
      '/usr/local/bin/python3',
    ]);
  });

  it('refuses a Node.js older than 20.19', () => {
    expect(nodeTooOld('20.18.3')).toContain('needs >= 20.19');
    expect(nodeTooOld('18.20.0')).toContain('too old');
    expect(nodeTooOld('20.19.0')).toBeUndefined();
    expect(nodeTooOld('22.1.0')).toBeUndefined();
  });
});
