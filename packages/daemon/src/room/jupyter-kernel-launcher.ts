import type { Logger } from '@nteract-mcp/foundation';
import { type FindKernelspecOptions, findKernelspec, type Kernelspec } from '../kernel/find-kernelspec.js';
import { JupyterKernel } from '../kernel/jupyter-kernel.js';
import type { KernelRecords } from '../kernel/kernel-records.js';
import type { KernelLaunch, KernelLauncher } from './kernel-launcher.js';

export interface JupyterKernelLauncherOptions {
  readonly kernelspec?: FindKernelspecOptions;
  /** When set, no kernel is ever started and rooms report this reason (`runtimed start --no-kernels`). */
  readonly disabledReason?: string;
  readonly logger: Logger;
  /** Where running kernel processes are recorded (the daemon's data dir), so a next daemon can reap orphans. */
  readonly records?: KernelRecords;
}

/**
 * Starts ipykernel-backed kernels from the first usable kernelspec. A found kernelspec is kept for
 * the life of the daemon; an unavailable one is looked for again at the next launch, so installing
 * ipykernel does not need a daemon restart.
 */
export class JupyterKernelLauncher implements KernelLauncher {
  #spec: Kernelspec | undefined;

  public constructor(private readonly options: JupyterKernelLauncherOptions) {}

  public async launch(workingDir: string): Promise<KernelLaunch> {
    if (this.options.disabledReason !== undefined) return { kind: 'unavailable', reason: this.options.disabledReason };
    if (!this.#spec) {
      const resolution = await findKernelspec(this.options.kernelspec);
      if (resolution.kind === 'unavailable') return { kind: 'unavailable', reason: resolution.reason };
      this.#spec = resolution.spec;
    }
    const kernel = await JupyterKernel.start({
      spec: this.#spec,
      cwd: workingDir,
      logger: this.options.logger.child('kernel'),
      ...(this.options.records === undefined ? {} : { records: this.options.records }),
      // Debian's debugpy otherwise warns about frozen modules on every kernel start.
      env: { PYDEVD_DISABLE_FILE_VALIDATION: '1' },
    });
    return { kind: 'started', kernel };
  }
}
