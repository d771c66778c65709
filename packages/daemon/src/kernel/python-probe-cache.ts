import { type ChildProcess, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, open, readFile, realpath, stat } from 'node:fs/promises';
import { dirname, isAbsolute } from 'node:path';
import type { Logger } from '@nteract-mcp/foundation';
import { writeFileAtomic } from '../persistence/write-file-atomic.js';

type Env = Readonly<Record<string, string | undefined>>;

/** What the kernel lookup asks of a Python interpreter (each answer costs a process start). */
export interface PythonProbes {
  /** `sys.prefix` of `interpreter` (absolute), or `undefined` when it does not run as Python. */
  sysPrefix(interpreter: string, env: Env): Promise<string | undefined>;
  /** Whether `interpreter` runs `import ipykernel` with `env`. */
  importsIpykernel(interpreter: string, env: Env): Promise<boolean>;
}

const probeTimeoutMs = 20_000;
const fileVersion = 1;

/**
 * The environment variables that can change what an interpreter answers (which Python a shim
 * runs, where it imports from). Only a hash of their values is kept, never the values.
 */
const relevantVariables = [
  'PATH',
  'HOME',
  'PYTHONPATH',
  'PYTHONHOME',
  'PYTHONNOUSERSITE',
  'PYTHONUSERBASE',
  'PYTHONSAFEPATH',
  'VIRTUAL_ENV',
  'CONDA_PREFIX',
  'PYENV_VERSION',
  'PYENV_ROOT',
] as const;

/** A file as it was when an answer was taken: any change (replaced, rewritten, removed) invalidates it. */
interface FileMark {
  readonly path: string;
  readonly dev: number;
  readonly ino: number;
  readonly size: number;
  readonly mtimeMs: number;
}

interface Answer {
  readonly kind: 'prefix' | 'ipykernel';
  readonly interpreter: string;
  /** sha256 of the relevant variables. */
  readonly envHash: string;
  /** `sys.prefix`, or `ipykernel.__file__`: only positive answers are kept. */
  readonly value: string;
  /** The interpreter's real file, and for `ipykernel` the module file. */
  readonly marks: readonly FileMark[];
  /**
   * The interpreter is a script (`#!`: a pyenv or asdf shim, a wrapper), which picks the Python it
   * runs anew each time: its file marks do not show that choice changing.
   */
  readonly script: boolean;
}

interface CacheFile {
  readonly version: number;
  readonly answers: readonly Answer[];
}

/**
 * Python probe answers kept across daemon lives, so that a fresh daemon's first kernel does not
 * start three or four interpreters again (~0.6 s and more on a loaded machine) before it can start.
 *
 * Guarantees: only positive answers are kept (an interpreter without ipykernel is asked again
 * every time, so installing it is noticed without a restart); an answer is used only while the
 * interpreter's real file (after symlinks), and for `import ipykernel` the module file it
 * imported, are the same files unchanged (device, inode, size, mtime), and under the same values
 * of the variables that steer Python (`PATH`, `PYTHONPATH`, `VIRTUAL_ENV`, `PYENV_VERSION`, ...;
 * kept as a hash); an unreadable or foreign file counts as empty; the file is written atomically
 * (0600) and a failed write is logged, never thrown. An answer of a script interpreter (a pyenv
 * shim, which may now select another version: no file mark shows it) read from the file is asked
 * again once per daemon life by {@link PythonProbeCache.revalidate}, which reports whether one changed.
 * Does not guarantee: that a kept answer is still true between two revalidations when the
 * change shows in no file mark.
 */
export class PythonProbeCache implements PythonProbes {
  readonly #file: string | undefined;
  readonly #logger: Logger | undefined;
  #loaded: Promise<Map<string, Answer>> | undefined;
  /** Keys of answers read from the file and not asked again in this life. */
  readonly #fromFile = new Set<string>();
  /** Answers served from the file, with the environment they were used under, until {@link PythonProbeCache.revalidate}. */
  readonly #servedFromFile = new Map<string, Env>();
  /** Probes in flight, shared by concurrent lookups. */
  readonly #inFlight = new Map<string, Promise<Answer | undefined>>();
  #writing: Promise<void> = Promise.resolve();
  /** Interpreters asked right now (each its own process group). */
  readonly #running = new Set<ChildProcess>();
  #closed = false;

  /** `file`: where answers persist (`undefined`: in this process only). */
  public constructor(options: { readonly file?: string; readonly logger?: Logger } = {}) {
    this.#file = options.file;
    this.#logger = options.logger;
  }

  public async sysPrefix(interpreter: string, env: Env): Promise<string | undefined> {
    return (await this.answer('prefix', interpreter, env))?.value;
  }

  public async importsIpykernel(interpreter: string, env: Env): Promise<boolean> {
    return (await this.answer('ipykernel', interpreter, env)) !== undefined;
  }

  /**
   * Asks again, with the environment it was used under, each answer of a script interpreter served
   * from the file in this life (once each), keeps the fresh answers, and resolves `true` when one differs from what was
   * used (then a spec resolved from it may be wrong: resolve again).
   */
  public async revalidate(): Promise<boolean> {
    const answers = await this.load();
    const served = [...this.#servedFromFile];
    this.#servedFromFile.clear();
    let changed = false;
    for (const [key, env] of served) {
      const old = answers.get(key);
      if (!old) continue;
      const fresh = await this.probe(old.kind, old.interpreter, env);
      if (fresh?.value !== old.value) changed = true;
      if (fresh) answers.set(key, fresh);
      else answers.delete(key);
    }
    if (served.length > 0) await this.save(answers);
    return changed;
  }

  /**
   * Ends the probes under way with their process groups (a pyenv shim is a shell script that
   * starts more processes), and has later questions answered "no" without starting anything: the
   * daemon calls it as it stops, so that no probe outlives it.
   */
  public close(): void {
    this.#closed = true;
    for (const child of this.#running) killGroup(child);
    this.#running.clear();
  }

  private async answer(kind: Answer['kind'], interpreter: string, env: Env): Promise<Answer | undefined> {
    const envHash = hashEnv(env);
    const key = JSON.stringify([kind, interpreter, envHash]);
    const answers = await this.load();
    const kept = answers.get(key);
    if (kept && (await stillValid(kept))) {
      if (this.#fromFile.delete(key) && kept.script) this.#servedFromFile.set(key, env);
      return kept;
    }
    if (kept) {
      answers.delete(key);
      this.#fromFile.delete(key);
    }
    let running = this.#inFlight.get(key);
    if (!running) {
      running = this.probe(kind, interpreter, env).finally(() => this.#inFlight.delete(key));
      this.#inFlight.set(key, running);
    }
    const fresh = await running;
    if (fresh && answers.get(key) !== fresh) {
      answers.set(key, fresh);
      await this.save(answers);
    } else if (kept) {
      await this.save(answers);
    }
    return fresh;
  }

  private async probe(kind: Answer['kind'], interpreter: string, env: Env): Promise<Answer | undefined> {
    const script =
      kind === 'prefix' ? 'import sys; print(sys.prefix)' : 'import ipykernel; print(ipykernel.__file__ or "")';
    if (this.#closed) return undefined;
    const printed = await run(interpreter, script, env, this.#running);
    if (printed === undefined || this.#closed) return undefined;
    if (kind === 'prefix' && !isAbsolute(printed)) return undefined;
    const own = await markOf(interpreter);
    if (!own) return undefined;
    const module = kind === 'ipykernel' && isAbsolute(printed) ? await markOf(printed) : undefined;
    return {
      kind,
      interpreter,
      envHash: hashEnv(env),
      value: printed,
      marks: module ? [own, module] : [own],
      script: await isScript(own.path),
    };
  }

  private load(): Promise<Map<string, Answer>> {
    this.#loaded ??= (async () => {
      const answers = new Map<string, Answer>();
      if (this.#file === undefined) return answers;
      const text = await readFile(this.#file, 'utf8').catch(() => undefined);
      if (text === undefined) return answers;
      try {
        const parsed = JSON.parse(text) as Partial<CacheFile>;
        if (parsed.version !== fileVersion || !Array.isArray(parsed.answers)) return answers;
        for (const answer of parsed.answers) {
          if (!isAnswer(answer)) continue;
          const key = JSON.stringify([answer.kind, answer.interpreter, answer.envHash]);
          answers.set(key, answer);
          this.#fromFile.add(key);
        }
      } catch {
        // Not ours, or torn by hand: start empty.
      }
      return answers;
    })();
    return this.#loaded;
  }

  /** Writes the answers (one write at a time, the last state wins); a failure is logged. */
  private save(answers: Map<string, Answer>): Promise<void> {
    const file = this.#file;
    if (file === undefined) return Promise.resolve();
    const text = `${JSON.stringify({ version: fileVersion, answers: [...answers.values()] } satisfies CacheFile)}\n`;
    this.#writing = this.#writing.then(async () => {
      try {
        await mkdir(dirname(file), { recursive: true, mode: 0o700 });
        await writeFileAtomic(file, text, 0o600);
      } catch (error) {
        this.#logger?.warn('could not keep the Python probe answers', { file, error: (error as Error).message });
      }
    });
    return this.#writing;
  }
}

/** No cache: every question starts the interpreter (what a lookup without a cache does). */
export const uncachedPythonProbes: PythonProbes = {
  sysPrefix: async (interpreter, env) => {
    const printed = await run(interpreter, 'import sys; print(sys.prefix)', env);
    return printed !== undefined && isAbsolute(printed) ? printed : undefined;
  },
  importsIpykernel: async (interpreter, env) => (await run(interpreter, 'import ipykernel', env)) !== undefined,
};

/**
 * What `interpreter -c script` printed (trimmed), or `undefined` when it failed, was killed or timed
 * out. It runs in its own process group, which a timeout kills whole; while it runs it is in `running`.
 */
function run(interpreter: string, script: string, env: Env, running?: Set<ChildProcess>): Promise<string | undefined> {
  return new Promise((resolve) => {
    const child = spawn(interpreter, ['-c', script], {
      env,
      stdio: ['ignore', 'pipe', 'ignore'],
      detached: true,
      windowsHide: true,
    });
    running?.add(child);
    const chunks: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
    const timer = setTimeout(() => killGroup(child), probeTimeoutMs);
    const settle = (printed: string | undefined): void => {
      clearTimeout(timer);
      running?.delete(child);
      resolve(printed);
    };
    child.once('error', () => settle(undefined));
    child.once('close', (code) => settle(code === 0 ? Buffer.concat(chunks).toString('utf8').trim() : undefined));
  });
}

/** SIGKILL to the child's process group (to the child alone when the group is gone). */
function killGroup(child: ChildProcess): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    child.kill('SIGKILL');
  }
}

/** Whether the file starts with `#!`. */
async function isScript(path: string): Promise<boolean> {
  const handle = await open(path, 'r').catch(() => undefined);
  if (!handle) return false;
  try {
    const head = Buffer.alloc(2);
    const { bytesRead } = await handle.read(head, 0, 2, 0);
    return bytesRead === 2 && head.toString('latin1') === '#!';
  } finally {
    await handle.close();
  }
}

async function markOf(path: string): Promise<FileMark | undefined> {
  try {
    const real = await realpath(path);
    const stats = await stat(real);
    return { path: real, dev: stats.dev, ino: stats.ino, size: stats.size, mtimeMs: stats.mtimeMs };
  } catch {
    return undefined;
  }
}

async function stillValid(answer: Answer): Promise<boolean> {
  const [own, ...rest] = answer.marks;
  if (!own) return false;
  // The interpreter path may now lead to another file (a re-pointed symlink).
  const now = await markOf(answer.interpreter);
  if (!now || !sameMark(now, own)) return false;
  for (const mark of rest) {
    const current = await markOf(mark.path);
    if (!current || !sameMark(current, mark)) return false;
  }
  return true;
}

function sameMark(a: FileMark, b: FileMark): boolean {
  return a.path === b.path && a.dev === b.dev && a.ino === b.ino && a.size === b.size && a.mtimeMs === b.mtimeMs;
}

function hashEnv(env: Env): string {
  const hash = createHash('sha256');
  for (const name of relevantVariables) hash.update(`${name}=${env[name] ?? '\u0000'}\n`);
  return hash.digest('hex');
}

function isAnswer(value: unknown): value is Answer {
  if (typeof value !== 'object' || value === null) return false;
  const answer = value as Record<string, unknown>;
  return (
    (answer.kind === 'prefix' || answer.kind === 'ipykernel') &&
    typeof answer.interpreter === 'string' &&
    typeof answer.envHash === 'string' &&
    typeof answer.value === 'string' &&
    typeof answer.script === 'boolean' &&
    Array.isArray(answer.marks) &&
    answer.marks.every(
      (mark) =>
        typeof mark === 'object' &&
        mark !== null &&
        typeof (mark as FileMark).path === 'string' &&
        typeof (mark as FileMark).ino === 'number' &&
        typeof (mark as FileMark).dev === 'number' &&
        typeof (mark as FileMark).size === 'number' &&
        typeof (mark as FileMark).mtimeMs === 'number',
    )
  );
}
