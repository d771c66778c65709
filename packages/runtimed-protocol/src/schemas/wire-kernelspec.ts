import * as z from 'zod';

/**
 * One installed Jupyter kernelspec, as `list_kernels` answers it: its name (what `create` takes as
 * `kernel`, and what a notebook's `metadata.kernelspec.name` says), how Jupyter shows it, its
 * language, where its `kernel.json` is, and whether the daemon can start it (with why not).
 */
export const wireKernelspecSchema = z.object({
  name: z.string().min(1),
  display_name: z.string(),
  language: z.string(),
  resource_dir: z.string().nullable(),
  available: z.boolean(),
  reason: z.string().optional(),
  /** The program that runs it (for Python, the interpreter), when it can run. */
  interpreter: z.string().optional(),
  /** The project virtualenv whose interpreter runs it instead of the kernelspec's (see the README). */
  virtualenv: z.string().optional(),
});
export type WireKernelspec = z.infer<typeof wireKernelspecSchema>;
