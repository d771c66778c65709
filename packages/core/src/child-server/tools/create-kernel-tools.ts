import * as z from 'zod';
import type { KernelInfo } from '../../ports/kernel-info.js';
import type { ChildServerDependencies } from '../child-server-dependencies.js';
import { defineChildTool, jsonResult, type RegisteredChildTool } from './child-tool-registry.js';
import { ToolError, toToolFailure } from './to-tool-failure.js';

const noKernelListerText =
  'This server cannot list kernels: no loaded plugin creates notebooks (the local daemon, runtimed, does).';

/**
 * `list_kernels`: the Jupyter kernels new notebooks can run in, from the backend that creates
 * notebooks (the local daemon finds them the way Jupyter does). Needs no session.
 */
export function createKernelTools(deps: ChildServerDependencies): RegisteredChildTool[] {
  const listKernels = defineChildTool({
    name: 'list_kernels',
    description:
      'List the Jupyter kernels installed for new notebooks (found as `jupyter kernelspec list` finds them): name, display name, language, and whether each can start here (with why not), and the interpreter that runs it (a project virtualenv with ipykernel, $VIRTUAL_ENV or .venv/venv in the working directory or above, runs the Python kernel). Pass a name to create_notebook(kernel=...); a notebook opened from a file runs in the kernel its metadata names.',
    inputSchema: z.object({}),
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    handler: async () => {
      const backend = deps.resolver.kernelLister();
      if (!backend?.listKernels) throw new ToolError(noKernelListerText);
      let kernels: readonly KernelInfo[];
      try {
        kernels = await backend.listKernels();
      } catch (error) {
        throw toToolFailure(error, { wrap: (m) => `Failed to list kernels. Is the daemon running? Error: ${m}` });
      }
      return jsonResult({
        kernels: kernels.map(kernelJson),
        default: 'python3',
        hint: kernels.some((kernel) => kernel.available)
          ? "Create a notebook in one with create_notebook(kernel='<name>')."
          : 'No kernel can start here: install one (Python: ipykernel; R: IRkernel) and list again.',
      });
    },
  });
  return [listKernels];
}

function kernelJson(kernel: KernelInfo): Record<string, unknown> {
  return {
    name: kernel.name,
    display_name: kernel.displayName,
    language: kernel.language,
    available: kernel.available,
    ...(kernel.reason === undefined ? {} : { reason: kernel.reason }),
    location: kernel.location ?? null,
    ...(kernel.interpreter === undefined ? {} : { interpreter: kernel.interpreter }),
    ...(kernel.virtualenv === undefined ? {} : { virtualenv: kernel.virtualenv }),
  };
}
