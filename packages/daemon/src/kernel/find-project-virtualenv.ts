import { constants } from 'node:fs';
import { access } from 'node:fs/promises';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { importsIpykernel } from './find-kernelspec.js';

/** A project virtualenv whose interpreter imports ipykernel. */
export interface ProjectVirtualenv {
  /** The virtualenv's directory (its `sys.prefix`). */
  readonly dir: string;
  /** Its interpreter, `<dir>/bin/python`. */
  readonly python: string;
}

export interface FindProjectVirtualenvOptions {
  /** The client's working directory: `.venv` and `venv` are looked for there and in each directory above. */
  readonly cwd?: string;
  /** The client's environment: `VIRTUAL_ENV` comes first; the probe runs with it. */
  readonly env: Readonly<Record<string, string | undefined>>;
}

/**
 * The virtualenv a Python notebook of this client runs in, as VS Code and Jupyter pick it: the
 * active one (`$VIRTUAL_ENV`), else `.venv` or `venv` in `cwd` or the nearest directory above it
 * that has one. A candidate counts only when its `bin/python` runs and imports ipykernel; the
 * first that does wins. `undefined` when none does. Never throws.
 */
export async function findProjectVirtualenv(
  options: FindProjectVirtualenvOptions,
): Promise<ProjectVirtualenv | undefined> {
  for (const dir of candidateDirs(options)) {
    const python = join(dir, 'bin', 'python');
    const runs = await access(python, constants.X_OK).then(
      () => true,
      () => false,
    );
    if (runs && (await importsIpykernel(python, options.env))) return { dir, python };
  }
  return undefined;
}

function candidateDirs(options: FindProjectVirtualenvOptions): string[] {
  const dirs: string[] = [];
  const active = options.env.VIRTUAL_ENV?.trim();
  if (active && isAbsolute(active)) dirs.push(resolve(active));
  if (options.cwd !== undefined && isAbsolute(options.cwd)) {
    for (let dir = resolve(options.cwd); ; dir = dirname(dir)) {
      dirs.push(join(dir, '.venv'), join(dir, 'venv'));
      if (dirname(dir) === dir) break;
    }
  }
  return [...new Set(dirs)];
}
