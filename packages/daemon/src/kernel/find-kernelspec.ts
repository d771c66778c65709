import { constants } from 'node:fs';
import { access, readdir, readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { basename, delimiter, isAbsolute, join, resolve } from 'node:path';
import { type PythonProbes, uncachedPythonProbes } from './python-probe-cache.js';

/**
 * A Jupyter kernelspec, ready to launch. `argv` contains `{connection_file}` (and maybe
 * `{resource_dir}`). For a Python/ipykernel spec, `argv[0]` is an absolute path to an interpreter
 * that was seen to `import ipykernel` (at lookup time: uninstalling it later is not noticed).
 * For other languages, `argv[0]` was only seen to exist.
 */
export interface Kernelspec {
  readonly name: string;
  readonly displayName: string;
  readonly language: string;
  readonly argv: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  readonly interruptMode: 'signal' | 'message';
  /** The directory holding `kernel.json`; absent for a spec synthesised from an interpreter. */
  readonly resourceDir?: string;
}

/** Either a launchable spec or a human-readable reason (including what to install) why there is none. */
export type KernelspecResolution =
  | { readonly kind: 'found'; readonly spec: Kernelspec }
  | { readonly kind: 'unavailable'; readonly reason: string };

export interface FindKernelspecOptions {
  /** Kernelspec name; default `python3`. */
  readonly name?: string;
  /**
   * Directories holding `<name>/kernel.json`, searched in order. Default: Jupyter's own order (see
   * {@link kernelspecSearchDirs}).
   */
  readonly searchDirs?: readonly string[];
  /** The platform whose user data directory is searched (default `process.platform`). */
  readonly platform?: NodeJS.Platform;
  /**
   * Interpreters to try when a spec's own interpreter cannot import ipykernel, or when no spec
   * exists. Default: `$RUNTIMED_PYTHON`, `python3` and `python` on `PATH`, `/usr/bin/python3`,
   * `/usr/local/bin/python3`. Bare names are looked up on `env.PATH`.
   */
  readonly pythonCandidates?: readonly string[];
  /** Environment for `PATH`, `HOME`, `JUPYTER_PATH`, `RUNTIMED_PYTHON` and the probes; default `process.env`. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /**
   * How interpreters are asked (`sys.prefix`, `import ipykernel`); default: each question starts
   * the interpreter. The daemon passes a {@link PythonProbeCache} that keeps the answers across its lives.
   */
  readonly probes?: PythonProbes;
}

type Env = Readonly<Record<string, string | undefined>>;

const pythonNamePattern = /^python[0-9.]*$/;
/** What Jupyter allows in a kernelspec (directory) name; anything else is never looked up. */
const kernelNamePattern = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

/**
 * Finds the kernelspec `name` (default `python3`) and makes sure it can run.
 *
 * Guarantees: never throws for a missing or broken installation (that is `unavailable`, with a
 * reason that says what to install); the first usable spec in `searchDirs` order wins; when a
 * Python/ipykernel spec names its interpreter by a bare name that cannot import ipykernel (e.g.
 * `python3` that is a pyenv shim), `argv[0]` is replaced by the first candidate that can (Jupyter
 * runs its own interpreter there too); an interpreter named by an absolute path that is missing or
 * cannot import ipykernel makes the kernel unavailable (never another interpreter in its place); when no directory
 * holds a spec for a Python name (`python`, `python3`, ...) but a candidate has ipykernel, the
 * standard ipykernel spec is synthesised for it. Caches nothing itself: every call reads the
 * kernelspecs again, and asks the interpreters through `options.probes` (uncached by default).
 * Does not guarantee: that the kernel will start (only that its interpreter imports ipykernel),
 * or that a non-Python kernel works (only that its executable exists).
 */
export async function findKernelspec(options: FindKernelspecOptions = {}): Promise<KernelspecResolution> {
  const env: Env = options.env ?? process.env;
  const name = options.name ?? 'python3';
  const candidates = options.pythonCandidates ?? defaultPythonCandidates(env);
  const searchDirs =
    options.searchDirs ??
    (await kernelspecSearchDirs({
      env,
      pythonCandidates: candidates,
      platform: options.platform,
      probes: options.probes,
    }));
  return resolveKernelspec(name, searchDirs, candidates, new IpykernelProbe(env, options.probes), env);
}

/** One installed kernelspec as `list_kernels` shows it: usable or not (and why not). */
export interface KernelspecSummary {
  readonly name: string;
  readonly displayName: string;
  readonly language: string;
  /** The directory holding its `kernel.json`; absent for the Python kernel synthesised from an interpreter. */
  readonly resourceDir?: string;
  /** Whether it can be launched (its program exists; for Python, its interpreter imports ipykernel). */
  readonly available: boolean;
  /** Why it cannot be launched, when it cannot. */
  readonly reason?: string;
  /** The program that runs it (`argv[0]`; for Python the interpreter that imports ipykernel), when it can run. */
  readonly interpreter?: string;
}

/**
 * Every kernelspec found the way Jupyter finds them (`jupyter kernelspec list`): each name once,
 * from the first directory in search order that has it, sorted by name; each checked as
 * {@link findKernelspec} checks it. When no directory has a `python3` spec but an interpreter
 * candidate imports ipykernel, the synthesised `python3` kernel is listed too (it is what a new
 * notebook runs). Never throws for a missing or broken installation.
 */
export async function listKernelspecs(options: FindKernelspecOptions = {}): Promise<KernelspecSummary[]> {
  const env: Env = options.env ?? process.env;
  const candidates = options.pythonCandidates ?? defaultPythonCandidates(env);
  const searchDirs =
    options.searchDirs ??
    (await kernelspecSearchDirs({
      env,
      pythonCandidates: candidates,
      platform: options.platform,
      probes: options.probes,
    }));
  const names = new Set<string>();
  for (const dir of searchDirs) {
    const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
    for (const entry of entries) {
      if (!entry.isDirectory() && !entry.isSymbolicLink()) continue;
      const file = join(dir, entry.name, 'kernel.json');
      if (
        await access(file).then(
          () => true,
          () => false,
        )
      )
        names.add(entry.name);
    }
  }
  names.add('python3');
  const probe = new IpykernelProbe(env, options.probes);
  const summaries: KernelspecSummary[] = [];
  for (const name of [...names].sort()) {
    const resolution = await resolveKernelspec(name, searchDirs, candidates, probe, env);
    if (resolution.kind === 'found') {
      const { spec } = resolution;
      summaries.push({
        name,
        displayName: spec.displayName,
        language: spec.language,
        ...(spec.resourceDir === undefined ? {} : { resourceDir: spec.resourceDir }),
        available: true,
        ...(spec.argv[0] === undefined ? {} : { interpreter: spec.argv[0] }),
      });
      continue;
    }
    const spec = await firstKernelJson(name, searchDirs);
    // A python3 that is neither installed nor synthesisable is not listed: nothing names it.
    if (spec === undefined) continue;
    summaries.push({
      name,
      displayName: spec.displayName,
      language: spec.language,
      ...(spec.resourceDir === undefined ? {} : { resourceDir: spec.resourceDir }),
      available: false,
      reason: resolution.reason,
    });
  }
  return summaries;
}

/**
 * Where Jupyter looks for kernelspecs, in its order (`jupyter --paths`, data part), each with
 * `/kernels` appended: every `$JUPYTER_PATH` entry; the user data directory (`$JUPYTER_DATA_DIR`,
 * else `~/Library/Jupyter` on macOS, `$XDG_DATA_HOME/jupyter` or `~/.local/share/jupyter`
 * elsewhere); `{sys.prefix}/share/jupyter` of each interpreter candidate that runs; then
 * `/usr/local/share/jupyter` and `/usr/share/jupyter`. Duplicates are dropped.
 */
export async function kernelspecSearchDirs(
  options: {
    readonly env?: Readonly<Record<string, string | undefined>>;
    readonly pythonCandidates?: readonly string[];
    readonly platform?: NodeJS.Platform;
    readonly probes?: PythonProbes;
  } = {},
): Promise<string[]> {
  const env: Env = options.env ?? process.env;
  const platform = options.platform ?? process.platform;
  const candidates = options.pythonCandidates ?? defaultPythonCandidates(env);
  const roots: string[] = [];
  for (const entry of (env.JUPYTER_PATH ?? '').split(delimiter)) if (entry.trim() !== '') roots.push(entry.trim());
  roots.push(userDataDir(env, platform));
  const probes = options.probes ?? uncachedPythonProbes;
  const programs = new Set<string>();
  for (const candidate of candidates) {
    const program = await findExecutable(candidate, env);
    if (program !== undefined) programs.add(program);
  }
  // Asked side by side (each is a process start), kept in candidate order.
  const prefixes = await Promise.all([...programs].map((program) => probes.sysPrefix(program, env)));
  for (const prefix of prefixes) if (prefix !== undefined) roots.push(join(prefix, 'share', 'jupyter'));
  roots.push('/usr/local/share/jupyter', '/usr/share/jupyter');
  return [...new Set(roots.map((root) => join(resolve(root), 'kernels')))];
}

function userDataDir(env: Env, platform: NodeJS.Platform): string {
  const dataDir = env.JUPYTER_DATA_DIR?.trim();
  if (dataDir) return dataDir;
  const home = env.HOME?.trim() || homedir();
  if (platform === 'darwin') return join(home, 'Library', 'Jupyter');
  const xdg = env.XDG_DATA_HOME?.trim();
  return join(xdg && isAbsolute(xdg) ? xdg : join(home, '.local', 'share'), 'jupyter');
}

/** The first parseable `kernel.json` of `name` in `searchDirs`, unchecked. */
async function firstKernelJson(name: string, searchDirs: readonly string[]): Promise<Kernelspec | undefined> {
  for (const dir of searchDirs) {
    const resourceDir = resolve(dir, name);
    const parsed = await readKernelJson(join(resourceDir, 'kernel.json'), name, resourceDir);
    if (typeof parsed === 'object') return parsed;
  }
  return undefined;
}

async function resolveKernelspec(
  name: string,
  searchDirs: readonly string[],
  candidates: readonly string[],
  probe: IpykernelProbe,
  env: Env,
): Promise<KernelspecResolution> {
  const problems: string[] = [];
  if (!kernelNamePattern.test(name)) {
    return {
      kind: 'unavailable',
      reason: `'${name}' is not a kernelspec name (letters, digits, '.', '_' and '-' only).`,
    };
  }

  for (const dir of searchDirs) {
    const resourceDir = resolve(dir, name);
    const file = join(resourceDir, 'kernel.json');
    const parsed = await readKernelJson(file, name, resourceDir);
    if (parsed === undefined) continue;
    if (typeof parsed === 'string') {
      problems.push(`${file}: ${parsed}`);
      continue;
    }
    const [program = '', ...rest] = parsed.argv;
    if (!isIpykernelSpec(parsed)) {
      const executable = await findExecutable(program, { ...env, ...parsed.env });
      if (executable !== undefined) return { kind: 'found', spec: parsed };
      problems.push(`${file}: its program ${program} was not found`);
      continue;
    }
    const own = await probe.first([program], parsed.env);
    if (own !== undefined) return { kind: 'found', spec: { ...parsed, argv: [own, ...rest] } };
    if (isAbsolute(program)) {
      // The spec names its interpreter: running another one instead would be a silent substitution.
      const what = (await findExecutable(program, env)) === undefined ? 'does not exist' : 'cannot import ipykernel';
      return {
        kind: 'unavailable',
        reason: `The kernelspec '${name}' (${file}) runs ${program}, which ${what}. Reinstall that kernel (\`python -m ipykernel install --user --name ${name}\` with the interpreter you want), or remove its directory.`,
      };
    }
    const interpreter = await probe.first(candidates, parsed.env);
    if (interpreter !== undefined) {
      return { kind: 'found', spec: { ...parsed, argv: [interpreter, ...rest] } };
    }
    problems.push(`${file}: ${program} cannot import ipykernel, and neither can ${describeList(candidates)}`);
  }

  if (pythonNamePattern.test(name)) {
    const interpreter = await probe.first(candidates);
    if (interpreter !== undefined) return { kind: 'found', spec: synthesiseIpykernelSpec(name, interpreter) };
  }

  return { kind: 'unavailable', reason: unavailableReason(name, searchDirs, candidates, problems) };
}

function unavailableReason(
  name: string,
  searchDirs: readonly string[],
  candidates: readonly string[],
  problems: readonly string[],
): string {
  const found = problems.length > 0 ? ` (${problems.join('; ')})` : ` (searched ${describeList(searchDirs)})`;
  if (!pythonNamePattern.test(name)) {
    return `No usable Jupyter kernelspec named '${name}'${found}. Install that kernel; \`jupyter kernelspec list\` shows what is installed.`;
  }
  return (
    `No usable Jupyter kernel '${name}': no working kernelspec${found}, and none of ${describeList(candidates)} can import ipykernel. ` +
    'Install ipykernel: `sudo apt-get install -y python3-ipykernel` on Debian/Ubuntu, or `python3 -m pip install ipykernel`; ' +
    'or set RUNTIMED_PYTHON to an interpreter that has it.'
  );
}

function describeList(items: readonly string[]): string {
  return items.length === 0 ? '(none)' : items.join(', ');
}

/** The standard ipykernel spec (`python -m ipykernel_launcher -f {connection_file}`) for `interpreter`. */
export function synthesiseIpykernelSpec(name: string, interpreter: string): Kernelspec {
  return {
    name,
    displayName: 'Python 3 (ipykernel)',
    language: 'python',
    argv: [interpreter, '-m', 'ipykernel_launcher', '-f', '{connection_file}'],
    env: {},
    interruptMode: 'signal',
  };
}

/** Whether `name` is one of the names of the default Python kernel (`python`, `python3`, `python3.12`, ...). */
export function isPythonKernelName(name: string): boolean {
  return pythonNamePattern.test(name);
}

/** A spec run by a Python interpreter (ipykernel, `-m ipykernel_launcher`), as opposed to e.g. IRkernel. */
export function isIpykernelSpec(spec: Kernelspec): boolean {
  const [program = '', ...rest] = spec.argv;
  return (
    rest.some((arg) => arg === 'ipykernel_launcher' || arg === 'ipykernel') || pythonNamePattern.test(basename(program))
  );
}

/** `undefined` when the file does not exist; a string describing the problem when it is unusable. */
async function readKernelJson(
  file: string,
  name: string,
  resourceDir: string,
): Promise<Kernelspec | string | undefined> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code === 'ENOENT' || code === 'ENOTDIR' ? undefined : `cannot be read (${code ?? String(error)})`;
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return 'is not valid JSON';
  }
  if (typeof json !== 'object' || json === null) return 'is not a JSON object';
  const record = json as Record<string, unknown>;
  const argv = record.argv;
  if (!Array.isArray(argv) || argv.length === 0 || !argv.every((arg) => typeof arg === 'string')) {
    return 'has no argv list of strings';
  }
  const env: Record<string, string> = {};
  if (typeof record.env === 'object' && record.env !== null) {
    for (const [key, value] of Object.entries(record.env)) if (typeof value === 'string') env[key] = value;
  }
  return {
    name,
    displayName: typeof record.display_name === 'string' ? record.display_name : name,
    language: typeof record.language === 'string' ? record.language : '',
    argv: argv as string[],
    env,
    interruptMode: record.interrupt_mode === 'message' ? 'message' : 'signal',
    resourceDir,
  };
}

function defaultPythonCandidates(env: Env): string[] {
  const candidates = [
    env.RUNTIMED_PYTHON?.trim() ?? '',
    'python3',
    'python',
    '/usr/bin/python3',
    '/usr/local/bin/python3',
  ];
  return [...new Set(candidates.filter((candidate) => candidate !== ''))];
}

/** Absolute path of `program`: itself when it contains a slash, else the first match on `env.PATH`. */
async function findExecutable(program: string, env: Env): Promise<string | undefined> {
  if (program === '') return undefined;
  const paths = program.includes('/')
    ? [resolve(program)]
    : (env.PATH ?? '')
        .split(delimiter)
        .filter((dir) => isAbsolute(dir))
        .map((dir) => join(dir, program));
  for (const path of paths) {
    try {
      await access(path, constants.X_OK);
      return path;
    } catch {
      // not here; keep looking
    }
  }
  return undefined;
}

/** Asks `<python> -c "import ipykernel"` through `probes`, remembering answers for the duration of one lookup. */
class IpykernelProbe {
  private readonly answers = new Map<string, Promise<boolean>>();

  public constructor(
    private readonly env: Env,
    private readonly probes: PythonProbes = uncachedPythonProbes,
  ) {}

  /** The absolute path of the first interpreter in `programs` that can import ipykernel. */
  public async first(
    programs: readonly string[],
    extraEnv: Readonly<Record<string, string>> = {},
  ): Promise<string | undefined> {
    const env = { ...this.env, ...extraEnv };
    for (const program of programs) {
      const path = await findExecutable(program, env);
      if (path === undefined) continue;
      const key = `${path}\0${JSON.stringify(extraEnv)}`;
      let answer = this.answers.get(key);
      if (answer === undefined) {
        answer = this.probes.importsIpykernel(path, env);
        this.answers.set(key, answer);
      }
      if (await answer) return path;
    }
    return undefined;
  }
}

/** Whether `interpreter` runs `import ipykernel` successfully with `env` (bounded by a timeout; not cached). */
export function importsIpykernel(interpreter: string, env: Env): Promise<boolean> {
  return uncachedPythonProbes.importsIpykernel(interpreter, env);
}
