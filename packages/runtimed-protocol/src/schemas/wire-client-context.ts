import * as z from 'zod';

/**
 * Who opens a notebook or asks for the kernels (optional on `open`, `attach`, `create` and
 * `list_kernels`; daemons before it ignore it): the client's working directory and the environment
 * its kernels get (already filtered by the client, see `kernelEnvironmentOf`). The daemon starts a
 * room's kernel with the context of the client that created the room; it keeps it for the room's
 * life (a later client joining gets the kernel as it was started). Never logged, never stored.
 */
export const wireClientContextSchema = z.object({
  /** Absolute working directory of the client: an untitled notebook's kernel runs there; its project virtualenv is looked for from there. */
  cwd: z.string().optional(),
  /** The environment of the client's kernels (before the kernelspec's `env`). */
  env: z.record(z.string(), z.string()).optional(),
});
export type WireClientContext = z.infer<typeof wireClientContextSchema>;
