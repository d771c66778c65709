#!/usr/bin/env node
// Brings a checkout up by itself, then runs a command. Node built-ins only: this runs before
// `npm ci`. Its own messages and those of npm/turbo go to stderr, so `start` keeps stdout for MCP.
//
//   node scripts/bootstrap.mjs start [args…]  install/build when needed, then run nteract-mcp
//   node scripts/bootstrap.mjs test           install/build when needed, lint, typecheck, all tests
//
// `test` and `bench` first make sure the system prerequisites (a Python with ipykernel, the R kernel) are there:
// installed with apt-get when it can (root, or `sudo -n`), else it stops at once with one line
// naming what is missing and the command that installs it. `start` does not check: a session works
// without a kernel (the daemon reports the runtime unavailable, with the same install command).
//   node scripts/bootstrap.mjs bench          install/build when needed, then run the benchmarks
//   node scripts/bootstrap.mjs demo           install/build when needed, then run the scripted agent session
//                                             (scripts/demo.mjs; needs only ipykernel and matplotlib)
import { spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { delimiter, dirname, isAbsolute, join } from 'node:path';
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

/**
 * What the tests and a working session need from the system, beyond npm packages. Each is probed
 * one of three ways: `module` is imported by a Python interpreter (see {@link pythonCandidates});
 * `kernelspec` names a Jupyter kernel whose `kernel.json` must be found where Jupyter looks and
 * whose program must exist (as the daemon checks it); `executable` is a program on PATH. `debian` installs it there; elsewhere `pip`
 * (a Python package) or `manual` (a command of its own) does. Later needs are added here, and
 * nowhere else.
 */
export const systemPrerequisites = [
  {
    name: 'ipykernel',
    module: 'ipykernel.kernelapp',
    debian: 'python3-ipykernel',
    pip: 'ipykernel',
    why: 'the Jupyter kernel that runs Python code in notebooks',
  },
  {
    name: 'matplotlib',
    module: 'matplotlib.pyplot',
    debian: 'python3-matplotlib',
    pip: 'matplotlib',
    why: 'plots in the rich-output tests (an image output must come back as MCP image content)',
  },
  {
    name: 'IRkernel',
    kernelspec: 'ir',
    debian: 'r-cran-irkernel',
    manual: 'R -e \'install.packages("IRkernel"); IRkernel::installspec()\'',
    why: 'the Jupyter kernel that runs R code in notebooks',
  },
  {
    name: 'jupyter_server',
    module: 'jupyter_server',
    debian: 'python3-jupyter-server',
    pip: 'jupyter_server',
    why: 'the Jupyter Server the hosted-notebook tests run against',
  },
  {
    name: 'jupyterhub',
    module: 'jupyterhub.singleuser',
    debian: 'jupyterhub',
    pip: 'jupyterhub notebook',
    why: 'the JupyterHub (and its single-user servers) the hub tests run against',
  },
  {
    name: 'venv',
    module: 'ensurepip',
    debian: 'python3-venv',
    manual: 'python3 -m ensurepip --help  # part of Python; on Debian/Ubuntu: sudo apt-get install -y python3-venv',
    why: 'python3 -m venv, for the project-virtualenv kernel test',
  },
  {
    name: 'chromium',
    executable: 'chromium',
    debian: 'chromium',
    manual: 'install Chromium and put `chromium` on PATH (or set NTERACT_CHROMIUM to its path)',
    why: 'the headless browser the live-page tests drive (a person looking at the notebook)',
  },
];

/** The interpreters looked at, in the daemon's own order: `$RUNTIMED_PYTHON`, then PATH names, then fixed paths. */
export function pythonCandidates(env = process.env) {
  const names = [env.RUNTIMED_PYTHON?.trim() ?? '', 'python3', 'python', '/usr/bin/python3', '/usr/local/bin/python3'];
  return [...new Set(names.filter((name) => name !== ''))];
}

/** The first absolute path of `program` that is executable: itself when it has a slash, else on PATH. */
function executablePath(program, env) {
  const paths = program.includes('/')
    ? [program]
    : (env.PATH ?? '')
        .split(delimiter)
        .filter((dir) => isAbsolute(dir))
        .map((dir) => join(dir, program));
  for (const path of paths) {
    try {
      accessSync(path, constants.X_OK);
      return path;
    } catch {
      // not there or not executable: the next one
    }
  }
  return undefined;
}

/** Whether some candidate interpreter imports `module` (each probe bounded to 20 s). */
function someInterpreterImports(module, env) {
  return pythonCandidates(env).some((candidate) => {
    const program = executablePath(candidate, env);
    if (program === undefined) return false;
    const probe = spawnSync(program, ['-c', `import ${module}`], { stdio: 'ignore', timeout: 20_000, env });
    return probe.status === 0;
  });
}

/** Where Jupyter looks for kernelspecs (data dirs, each with `/kernels`), as the daemon does without an interpreter's prefix. */
export function kernelspecDirs(env = process.env, platform = process.platform) {
  const roots = (env.JUPYTER_PATH ?? '').split(delimiter).filter((entry) => entry.trim() !== '');
  const home = env.HOME?.trim() || '/';
  if (env.JUPYTER_DATA_DIR?.trim()) roots.push(env.JUPYTER_DATA_DIR.trim());
  else if (platform === 'darwin') roots.push(join(home, 'Library', 'Jupyter'));
  else roots.push(join(env.XDG_DATA_HOME?.trim() || join(home, '.local', 'share'), 'jupyter'));
  roots.push('/usr/local/share/jupyter', '/usr/share/jupyter');
  return [...new Set(roots.map((root) => join(root, 'kernels')))];
}

/** Whether the kernelspec `name` is installed with a program that exists (the first `kernel.json` found decides). */
export function kernelspecRuns(name, env = process.env) {
  for (const dir of kernelspecDirs(env)) {
    let spec;
    try {
      spec = JSON.parse(readFileSync(join(dir, name, 'kernel.json'), 'utf8'));
    } catch {
      continue;
    }
    const program = Array.isArray(spec?.argv) ? spec.argv[0] : undefined;
    return typeof program === 'string' && executablePath(program, env) !== undefined;
  }
  return false;
}

/** The prerequisites a command needs: `demo` runs Python and plots; `test` and `bench` need them all. */
export function prerequisitesFor(command) {
  if (command === 'demo')
    return systemPrerequisites.filter((prerequisite) => ['ipykernel', 'matplotlib'].includes(prerequisite.name));
  return systemPrerequisites;
}

/**
 * The prerequisites that are not there. `imports` probes a Python module, `runs` a kernelspec,
 * `finds` a program on PATH (all replaced in tests); `needed` is the list looked at (default all).
 */
export function missingPrerequisites(
  imports = (module) => someInterpreterImports(module, process.env),
  runs = (kernelspec) => kernelspecRuns(kernelspec, process.env),
  needed = systemPrerequisites,
  finds = (program) => executablePath(program, process.env) !== undefined,
) {
  return needed.filter((prerequisite) => {
    if (prerequisite.executable !== undefined) return !finds(prerequisite.executable);
    return prerequisite.kernelspec === undefined ? !imports(prerequisite.module) : !runs(prerequisite.kernelspec);
  });
}

/**
 * How the missing prerequisites can be installed here: `apt-get` run directly (root) or through
 * `sudo -n` (a user allowed to, without a password prompt); `undefined` when neither works.
 */
export function installPlan(missing, host) {
  if (missing.length === 0 || !host.hasAptGet) return undefined;
  const packages = missing.map((prerequisite) => prerequisite.debian);
  if (host.uid === 0) return { prefix: [], packages };
  if (host.sudoWithoutPassword) return { prefix: ['sudo', '-n'], packages };
  return undefined;
}

/** One line: what is missing, what it is for, and the command that installs it. */
export function missingHint(missing, host) {
  const what = missing.map((prerequisite) => `${prerequisite.name} (${prerequisite.why})`).join(', ');
  if (host.hasAptGet) {
    return `missing ${what}; install it with: sudo apt-get install -y ${missing.map((prerequisite) => prerequisite.debian).join(' ')}`;
  }
  const pip = missing.filter((prerequisite) => prerequisite.pip !== undefined).map((prerequisite) => prerequisite.pip);
  const commands = [
    ...(pip.length > 0 ? [`python3 -m pip install ${pip.join(' ')}`] : []),
    ...missing.filter((prerequisite) => prerequisite.pip === undefined).map((prerequisite) => prerequisite.manual),
  ];
  return `missing ${what}; install it with: ${commands.join('; ')}`;
}

function describeHost() {
  const hasAptGet = executablePath('apt-get', process.env) !== undefined;
  const uid = process.getuid?.() ?? -1;
  const sudoWithoutPassword =
    uid !== 0 &&
    executablePath('sudo', process.env) !== undefined &&
    spawnSync('sudo', ['-n', 'true'], { stdio: 'ignore', timeout: 10_000 }).status === 0;
  return { hasAptGet, uid, sudoWithoutPassword };
}

/**
 * Makes the system prerequisites present when it can (apt-get as root or through `sudo -n`).
 * Returns `undefined` when all are there, else the one-line hint of what is still missing.
 */
function ensureSystemPrerequisites(needed) {
  const missing = missingPrerequisites(undefined, undefined, needed);
  if (missing.length === 0) return undefined;
  const host = describeHost();
  const plan = installPlan(missing, host);
  if (plan) {
    const [command, ...prefixArgs] = [...plan.prefix, 'apt-get'];
    say(`installing ${plan.packages.join(' ')} with apt-get`);
    const env = { DEBIAN_FRONTEND: 'noninteractive' };
    if (run(command, [...prefixArgs, 'update', '-qq'], { env }) === 0) {
      run(command, [...prefixArgs, 'install', '-y', '-qq', '--no-install-recommends', ...plan.packages], { env });
    }
  }
  const still = plan ? missingPrerequisites(undefined, undefined, needed) : missing;
  return still.length === 0 ? undefined : missingHint(still, host);
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

/** Why this Node.js cannot run the project, or undefined. */
export function nodeTooOld(version = process.versions.node) {
  const [major, minor] = version.split('.').map(Number);
  return major < 20 || (major === 20 && minor < 19)
    ? `Node.js ${version} is too old: nteract-mcp needs >= 20.19`
    : undefined;
}

function main(argv) {
  const [command, ...args] = argv;
  const tooOld = nodeTooOld();
  if (tooOld) {
    say(tooOld);
    if (command === 'test') console.log('0 passed, 1 failed');
    return 1;
  }
  if (!['start', 'test', 'bench', 'demo'].includes(command)) {
    say('usage: node scripts/bootstrap.mjs <start|test|bench|demo> [args…]');
    return 2;
  }
  // `start` does not probe: a session works without a kernel, and the daemon reports the runtime
  // unavailable with the same install hint.
  if (command !== 'start') {
    const hint = ensureSystemPrerequisites(prerequisitesFor(command));
    if (hint) {
      say(`cannot ${command}: ${hint}`);
      if (command === 'test') console.log('0 passed, 1 failed');
      return 1;
    }
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
  if (command === 'demo') {
    return run(process.execPath, [join(root, 'scripts', 'demo.mjs'), ...args], { stdio: inherit });
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
