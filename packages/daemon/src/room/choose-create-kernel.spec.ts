import type { WireKernelspec } from '@nteract-mcp/runtimed-protocol';
import { describe, expect, it } from 'vitest';
import { DaemonError } from '../daemon-error.js';
import { chooseCreateKernel } from './choose-create-kernel.js';
import type { KernelLauncher } from './kernel-launcher.js';

const installed: WireKernelspec[] = [
  { name: 'ark', display_name: 'Ark R', language: 'R', resource_dir: '/k/ark', available: true },
  { name: 'ir', display_name: 'R', language: 'R', resource_dir: '/k/ir', available: true },
  {
    name: 'julia',
    display_name: 'Julia',
    language: 'julia',
    resource_dir: '/k/julia',
    available: false,
    reason: 'no julia',
  },
  { name: 'python3', display_name: 'Python 3 (ipykernel)', language: 'python', resource_dir: null, available: true },
];

const launcher = (kernels: readonly WireKernelspec[] | undefined): KernelLauncher => ({
  launch: async () => ({ kind: 'unavailable', reason: 'not in this test' }),
  ...(kernels === undefined ? {} : { listKernels: async () => kernels }),
});

async function refusal(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(DaemonError.is(error, 'badRequest')).toBe(true);
  return (error as Error).message;
}

describe(chooseCreateKernel, () => {
  it('defaults to python3 without asking the launcher, also for runtime python', async () => {
    const python3 = { name: 'python3', displayName: 'Python 3 (ipykernel)', language: 'python' };
    expect(await chooseCreateKernel({}, launcher(undefined))).toEqual(python3);
    expect(await chooseCreateKernel({ runtime: 'Python' }, launcher([]))).toEqual(python3);
  });

  it('takes a named kernelspec, and a language by its usual kernel first', async () => {
    expect(await chooseCreateKernel({ kernel: 'ark' }, launcher(installed))).toEqual({
      name: 'ark',
      displayName: 'Ark R',
      language: 'R',
    });
    expect((await chooseCreateKernel({ runtime: 'r' }, launcher(installed))).name).toBe('ir');
    expect((await chooseCreateKernel({ runtime: 'r', kernel: 'ark' }, launcher(installed))).name).toBe('ark');
  });

  it('refuses what is not installed or cannot run, naming the kernels that can', async () => {
    const names = 'Installed kernels: ark (Ark R, R), ir (R, R), python3 (Python 3 (ipykernel), python).';
    expect(await refusal(chooseCreateKernel({ kernel: 'deno' }, launcher(installed)))).toBe(
      `No Jupyter kernel named 'deno' is installed. ${names}`,
    );
    expect(await refusal(chooseCreateKernel({ kernel: 'julia' }, launcher(installed)))).toBe(
      `The Jupyter kernel 'julia' is installed but cannot run (no julia). ${names}`,
    );
    expect(await refusal(chooseCreateKernel({ runtime: 'deno' }, launcher(installed)))).toBe(
      `No installed Jupyter kernel runs the language 'deno'. ${names}`,
    );
    expect(await refusal(chooseCreateKernel({ kernel: 'ir' }, launcher(undefined)))).toBe(
      "No Jupyter kernel named 'ir' is installed. No installed Jupyter kernel can run here.",
    );
  });
});
