import type { Logger } from '@nteract-mcp/foundation';
import type { WireKernelspec } from '@nteract-mcp/runtimed-protocol';
import {
  type FindKernelspecOptions,
  findKernelspec,
  type Kernelspec,
  type KernelspecSummary,
  listKernelspecs,
} from '../kernel/find-kernelspec.js';
import { JupyterKernel } from '../kernel/jupyter-kernel.js';
import type { KernelRecords } from '../kernel/kernel-records.js';
import { describeInstalledKernels } from './choose-create-kernel.js';
import type { KernelLaunch, KernelLauncher, KernelRequest } from './kernel-launcher.js';

export interface JupyterKernelLauncherOptions {
  readonly kernelspec?: FindKernelspecOptions;
  /** When set, no kernel is ever started and rooms report this reason (`runtimed start --no-kernels`). */
  readonly disabledReason?: string;
  readonly logger: Logger;
  /** Where running kernel processes are recorded (the daemon's data dir), so a next daemon can reap orphans. */
  readonly records?: KernelRecords;
}

const defaultKernel: KernelRequest = { name: 'python3', language: 'python' };

/**
 * Starts kernels from the installed kernelspecs (any language: ipykernel, IRkernel, ...). The spec
 * of a name, once found, is kept for the life of the daemon; an unavailable one is looked for again
 * at the next launch, so installing a kernel does not need a daemon restart. A notebook whose
 * kernelspec is not installed runs in an installed kernel of its language when there is one (the
 * one named like the language's usual kernel first: `python3` for Python, `ir` for R); else its
 * runtime is unavailable, with a reason naming the installed kernels.
 */
export class JupyterKernelLauncher implements KernelLauncher {
  readonly #specs = new Map<string, Kernelspec>();

  public constructor(private readonly options: JupyterKernelLauncherOptions) {}

  public async launch(workingDir: string, kernel: KernelRequest = defaultKernel): Promise<KernelLaunch> {
    if (this.options.disabledReason !== undefined) return { kind: 'unavailable', reason: this.options.disabledReason };
    const spec = await this.specFor(kernel);
    if (typeof spec === 'string') return { kind: 'unavailable', reason: spec };
    const started = await JupyterKernel.start({
      spec,
      cwd: workingDir,
      logger: this.options.logger.child('kernel'),
      ...(this.options.records === undefined ? {} : { records: this.options.records }),
      // Debian's debugpy otherwise warns about frozen modules on every kernel start.
      env: { PYDEVD_DISABLE_FILE_VALIDATION: '1' },
    });
    return { kind: 'started', kernel: started };
  }

  public async listKernels(): Promise<readonly WireKernelspec[]> {
    return (await listKernelspecs(this.options.kernelspec)).map(toWireKernelspec);
  }

  /** The spec to run for `kernel`, or why there is none. */
  private async specFor(kernel: KernelRequest): Promise<Kernelspec | string> {
    const cached = this.#specs.get(kernel.name);
    if (cached) return cached;
    const resolution = await findKernelspec({ ...this.options.kernelspec, name: kernel.name });
    if (resolution.kind === 'found') {
      this.#specs.set(kernel.name, resolution.spec);
      return resolution.spec;
    }
    const installed = await this.listKernels();
    const language = kernel.language?.trim().toLowerCase();
    const usable = installed.filter((spec) => spec.available);
    const sameLanguage = language
      ? usable
          .filter((spec) => spec.language.toLowerCase() === language)
          .sort((a, b) => Number(b.name === usualKernelOf(language)) - Number(a.name === usualKernelOf(language)))
      : [];
    const substitute = sameLanguage[0];
    if (substitute !== undefined && !installed.some((spec) => spec.name === kernel.name)) {
      const found = await findKernelspec({ ...this.options.kernelspec, name: substitute.name });
      if (found.kind === 'found') {
        this.options.logger.info('the notebook kernel is not installed; using one of its language', {
          wanted: kernel.name,
          using: substitute.name,
        });
        return found.spec;
      }
    }
    return `${resolution.reason} ${describeInstalledKernels(installed)}`;
  }
}

/** The kernelspec name a language's kernel is usually installed under. */
function usualKernelOf(language: string): string {
  return language === 'python' ? 'python3' : language === 'r' ? 'ir' : language;
}

function toWireKernelspec(summary: KernelspecSummary): WireKernelspec {
  return {
    name: summary.name,
    display_name: summary.displayName,
    language: summary.language,
    resource_dir: summary.resourceDir ?? null,
    available: summary.available,
    ...(summary.reason === undefined ? {} : { reason: summary.reason }),
  };
}
