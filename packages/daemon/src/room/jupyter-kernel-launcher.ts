import { delimiter, join } from 'node:path';
import type { Logger } from '@nteract-mcp/foundation';
import type { WireKernelspec } from '@nteract-mcp/runtimed-protocol';
import { buildKernelEnvironment } from '../kernel/build-kernel-environment.js';
import {
  type FindKernelspecOptions,
  findKernelspec,
  isIpykernelSpec,
  isPythonKernelName,
  type Kernelspec,
  type KernelspecSummary,
  listKernelspecs,
  synthesiseIpykernelSpec,
} from '../kernel/find-kernelspec.js';
import { findProjectVirtualenv, type ProjectVirtualenv } from '../kernel/find-project-virtualenv.js';
import { JupyterKernel } from '../kernel/jupyter-kernel.js';
import type { KernelRecords } from '../kernel/kernel-records.js';
import type { PythonProbeCache } from '../kernel/python-probe-cache.js';
import { describeInstalledKernels } from './choose-create-kernel.js';
import type { KernelClient, KernelLaunch, KernelLauncher, KernelRequest } from './kernel-launcher.js';

export interface JupyterKernelLauncherOptions {
  readonly kernelspec?: FindKernelspecOptions;
  /** When set, no kernel is ever started and rooms report this reason (`runtimed start --no-kernels`). */
  readonly disabledReason?: string;
  readonly logger: Logger;
  /** Where running kernel processes are recorded (the daemon's data dir), so a next daemon can reap orphans. */
  readonly records?: KernelRecords;
  /** Where kernel connection files go (the daemon's runtime dir); default the temp dir. */
  readonly connectionDir?: string;
  /** The daemon's own environment, of which a kernel without a client environment gets the basics; default `process.env`. */
  readonly daemonEnv?: Readonly<Record<string, string | undefined>>;
  /**
   * Where the answers of the Python probes are kept across daemon lives (the daemon's data dir), so
   * that a fresh daemon's first kernel does not probe the interpreters again; default: none kept.
   */
  readonly probeCache?: PythonProbeCache;
}

const defaultKernel: KernelRequest = { name: 'python3', language: 'python' };

/**
 * Starts kernels from the installed kernelspecs (any language: ipykernel, IRkernel, ...). The spec
 * of a name, once found, is kept for the life of the daemon; an unavailable one is looked for again
 * at the next launch, so installing a kernel does not need a daemon restart. A notebook whose
 * kernelspec is not installed runs in an installed kernel of its language when there is one (the
 * one named like the language's usual kernel first: `python3` for Python, `ir` for R); else its
 * runtime is unavailable, with a reason naming the installed kernels.
 *
 * A kernel's environment is its client's (see {@link buildKernelEnvironment}); a default Python
 * kernel (`python3`, ...) runs in the client's project virtualenv when it has one with ipykernel
 * (see {@link findProjectVirtualenv}), with that virtualenv activated (`VIRTUAL_ENV`, its `bin`
 * first on `PATH`). Environment values are never logged; withheld names are, at debug level.
 */
export class JupyterKernelLauncher implements KernelLauncher {
  readonly #specs = new Map<string, Kernelspec>();
  /** Lookups in flight by kernel name, shared by concurrent launches (and the prewarm). */
  readonly #resolving = new Map<string, Promise<Kernelspec | string>>();
  #revalidating: Promise<void> | undefined;

  public constructor(private readonly options: JupyterKernelLauncherOptions) {}

  /**
   * Starts looking up the default kernel's spec now (in the background), so the first launch
   * finds it resolved or under way. Never rejects; does nothing when kernels are disabled.
   */
  public prewarm(): Promise<void> {
    if (this.options.disabledReason !== undefined) return Promise.resolve();
    return this.specFor(defaultKernel).then(
      () => undefined,
      (error: unknown) => this.options.logger.debug('prewarming the kernelspec failed', { error }),
    );
  }

  public async launch(
    workingDir: string,
    kernel: KernelRequest = defaultKernel,
    client: KernelClient = {},
  ): Promise<KernelLaunch> {
    if (this.options.disabledReason !== undefined) return { kind: 'unavailable', reason: this.options.disabledReason };
    const base = buildKernelEnvironment(client.env, this.options.daemonEnv ?? process.env);
    const found = await this.specFor(kernel);
    const pythonName = typeof found === 'string' ? kernel.name : found.name;
    const pythonKernel = isPythonKernelName(pythonName) && (typeof found === 'string' || isIpykernelSpec(found));
    const venv = pythonKernel ? await findProjectVirtualenv({ env: base.env, ...cwdOf(client) }) : undefined;
    const spec = venv === undefined ? found : withVirtualenv(found, pythonName, venv);
    if (typeof spec === 'string') return { kind: 'unavailable', reason: spec };
    const env = venv === undefined ? base.env : activated(base.env, venv);
    this.options.logger.debug('kernel environment', {
      kernel: spec.name,
      variables: Object.keys(env).length,
      withheld: base.withheld,
      fromClient: client.env !== undefined,
      ...(venv === undefined ? {} : { virtualenv: venv.dir }),
    });
    let started: JupyterKernel;
    try {
      started = await JupyterKernel.start({
        spec,
        cwd: workingDir,
        logger: this.options.logger.child('kernel'),
        ...(this.options.records === undefined ? {} : { records: this.options.records }),
        ...(this.options.connectionDir === undefined ? {} : { connectionDir: this.options.connectionDir }),
        env,
      });
    } catch (error) {
      // Perhaps a remembered answer is no longer true: the next launch looks again.
      this.#specs.delete(kernel.name);
      this.revalidate();
      throw error;
    }
    this.revalidate();
    return {
      kind: 'started',
      kernel: started,
      ...(spec.argv[0] === undefined ? {} : { interpreter: spec.argv[0] }),
      ...(venv === undefined ? {} : { virtualenv: venv.dir }),
    };
  }

  public async listKernels(client: KernelClient = {}): Promise<readonly WireKernelspec[]> {
    const listed = (await listKernelspecs(this.lookupOptions())).map(toWireKernelspec);
    if (client.env === undefined && client.cwd === undefined) return listed;
    const { env } = buildKernelEnvironment(client.env, this.options.daemonEnv ?? process.env);
    const venv = await findProjectVirtualenv({ env, ...cwdOf(client) });
    if (venv === undefined) return listed;
    const inVenv = (spec: WireKernelspec): WireKernelspec =>
      withoutReason({ ...spec, available: true, interpreter: venv.python, virtualenv: venv.dir });
    const pythonSpecs = listed.filter(
      (spec) => isPythonKernelName(spec.name) && spec.language.toLowerCase() === 'python',
    );
    if (pythonSpecs.length === 0) {
      const synthesised = synthesiseIpykernelSpec('python3', venv.python);
      const entry = inVenv({
        name: synthesised.name,
        display_name: synthesised.displayName,
        language: synthesised.language,
        resource_dir: null,
        available: true,
      });
      return [...listed, entry].sort((a, b) => a.name.localeCompare(b.name));
    }
    return listed.map((spec) => (pythonSpecs.includes(spec) ? inVenv(spec) : spec));
  }

  /** The spec to run for `kernel`, or why there is none. */
  private specFor(kernel: KernelRequest): Promise<Kernelspec | string> {
    const cached = this.#specs.get(kernel.name);
    if (cached) return Promise.resolve(cached);
    let resolving = this.#resolving.get(kernel.name);
    if (!resolving) {
      resolving = this.resolveSpec(kernel).finally(() => this.#resolving.delete(kernel.name));
      this.#resolving.set(kernel.name, resolving);
    }
    return resolving;
  }

  /**
   * Has the probe cache ask again, in the background, what it answered from earlier lives (each
   * answer once per daemon life: later calls find little or nothing to ask); a change drops the specs.
   */
  private revalidate(): void {
    const cache = this.options.probeCache;
    if (!cache || this.#revalidating) return;
    this.#revalidating = cache.revalidate().then(
      (changed) => {
        if (!changed) return;
        this.options.logger.info(
          'an interpreter answers differently than in an earlier daemon life; kernelspecs are looked up again',
        );
        this.#specs.clear();
      },
      (error: unknown) => this.options.logger.warn('revalidating the Python probe answers failed', { error }),
    );
    void this.#revalidating.finally(() => {
      this.#revalidating = undefined;
    });
  }

  private lookupOptions(): FindKernelspecOptions {
    const probes = this.options.probeCache;
    return probes === undefined ? { ...this.options.kernelspec } : { ...this.options.kernelspec, probes };
  }

  private async resolveSpec(kernel: KernelRequest): Promise<Kernelspec | string> {
    const resolution = await findKernelspec({ ...this.lookupOptions(), name: kernel.name });
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
      const found = await findKernelspec({ ...this.lookupOptions(), name: substitute.name });
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

/** `{ cwd }` when the client gave one. */
function cwdOf(client: KernelClient): { cwd?: string } {
  return client.cwd === undefined ? {} : { cwd: client.cwd };
}

/** `spec` run by the virtualenv's interpreter (the standard ipykernel spec when none was found). */
function withVirtualenv(spec: Kernelspec | string, name: string, venv: ProjectVirtualenv): Kernelspec {
  if (typeof spec === 'string') return synthesiseIpykernelSpec(name, venv.python);
  const [, ...rest] = spec.argv;
  return { ...spec, argv: [venv.python, ...rest] };
}

/** `env` as an activated virtualenv has it: `VIRTUAL_ENV` set, its `bin` first on `PATH`. */
function activated(env: Readonly<Record<string, string>>, venv: ProjectVirtualenv): Record<string, string> {
  const bin = join(venv.dir, 'bin');
  return { ...env, VIRTUAL_ENV: venv.dir, PATH: env.PATH ? `${bin}${delimiter}${env.PATH}` : bin };
}

function withoutReason(spec: WireKernelspec): WireKernelspec {
  const { reason: _reason, ...rest } = spec;
  return rest;
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
    ...(summary.interpreter === undefined ? {} : { interpreter: summary.interpreter }),
  };
}
