import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { UserSessionDirs } from './create-user-environment.js';

/** Shell kernels that never come up, for the tests of kernel start failures. */
export const brokenKernelArgv = Object.freeze({
  /** Starts and never answers `kernel_info_request` (nor anything else). */
  hangs: ['/bin/sh', '-c', 'echo "hanging kernel: never answers" >&2; exec sleep 600', 'sh', '{connection_file}'],
  /** Exits at once with code 3, saying why on stderr. */
  exits: ['/bin/sh', '-c', 'echo "boom: cannot start" >&2; exit 3', 'sh', '{connection_file}'],
});

/**
 * Installs the kernelspec `name` in the user's Jupyter data dir of a session (where `jupyter
 * kernelspec install --user` puts it): the daemon finds it at the next launch, no restart needed.
 */
export function installKernelspec(
  dirs: Pick<UserSessionDirs, 'data'>,
  name: string,
  argv: readonly string[],
  language = 'python',
): void {
  const dir = join(dirs.data, 'jupyter', 'kernels', name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'kernel.json'), JSON.stringify({ argv, display_name: `Test ${name}`, language }));
}
