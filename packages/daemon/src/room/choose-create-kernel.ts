import type { WireKernelspec } from '@nteract-mcp/runtimed-protocol';
import { DaemonError } from '../daemon-error.js';
import type { KernelLauncher } from './kernel-launcher.js';

/** The kernel a new notebook is created for: what its `metadata.kernelspec` will say. */
export interface CreateKernelChoice {
  readonly name: string;
  readonly displayName: string;
  readonly language: string;
}

const python3: CreateKernelChoice = { name: 'python3', displayName: 'Python 3 (ipykernel)', language: 'python' };

/**
 * Picks the kernel of a `create`: the kernelspec named `kernel`; else an installed kernel of the
 * language `runtime` (`python` is always `python3`, so a machine without kernels still creates
 * Python notebooks whose runtime is then unavailable, as before); else `python3`.
 *
 * Guarantees: a name or language nothing installed runs is refused with `badRequest`, saying why
 * and naming the installed kernels that run; the language match ignores case, and prefers the
 * language's usual kernel (`ir` for R). A launcher that cannot list kernels offers only `python3`.
 */
export async function chooseCreateKernel(
  request: { readonly kernel?: string; readonly runtime?: string },
  launcher: KernelLauncher,
): Promise<CreateKernelChoice> {
  const name = request.kernel?.trim() || undefined;
  const language = request.runtime?.trim().toLowerCase() || undefined;
  if (name === undefined && (language === undefined || language === 'python')) return python3;
  if (name === 'python3' && !launcher.listKernels) return python3;
  const installed = launcher.listKernels ? await launcher.listKernels() : [];
  const usable = installed.filter((spec) => spec.available);
  if (name !== undefined) {
    const spec = installed.find((candidate) => candidate.name === name);
    if (spec?.available) return choiceOf(spec);
    const why = spec
      ? `The Jupyter kernel '${name}' is installed but cannot run (${spec.reason ?? 'unknown reason'}).`
      : `No Jupyter kernel named '${name}' is installed.`;
    throw new DaemonError('badRequest', `${why} ${describeInstalledKernels(installed)}`);
  }
  const usual = language === 'r' ? 'ir' : language;
  const matching = usable
    .filter((spec) => spec.language.toLowerCase() === language)
    .sort((a, b) => Number(b.name === usual) - Number(a.name === usual));
  const chosen = matching[0];
  if (chosen) return choiceOf(chosen);
  throw new DaemonError(
    'badRequest',
    `No installed Jupyter kernel runs the language '${request.runtime?.trim()}'. ${describeInstalledKernels(installed)}`,
  );
}

function choiceOf(spec: WireKernelspec): CreateKernelChoice {
  return { name: spec.name, displayName: spec.display_name, language: spec.language };
}

/** One sentence naming the installed kernels that can run (or saying there are none). */
export function describeInstalledKernels(installed: readonly WireKernelspec[]): string {
  const usable = installed.filter((spec) => spec.available);
  if (usable.length === 0) return 'No installed Jupyter kernel can run here.';
  return `Installed kernels: ${usable.map((spec) => `${spec.name} (${spec.display_name}, ${spec.language})`).join(', ')}.`;
}
