import type { Subscription } from '@nteract-mcp/foundation';
import type { WireKernelspec } from '@nteract-mcp/runtimed-protocol';
import type { NotebookOutput } from '../document/notebook-document.js';
import type { ExecutionOutputChange, KernelInterruptOutcome } from '../kernel/jupyter-kernel.js';

/** What a room needs of a running kernel; `JupyterKernel` provides it. */
export interface RoomKernel {
  readonly pid: number;
  readonly status: string;
  onStatus(listener: (status: string) => void): Subscription;
  onExit(listener: (info: { code: number | null; signal: string | null }) => void): Subscription;
  execute(
    code: string,
    options?: {
      /** Each change of the outputs, with the outputs now (not copied: read them before returning). */
      onOutput?: (change: ExecutionOutputChange, outputs: readonly NotebookOutput[]) => void;
      /** `false` for a scratch run: no history, no new execution count. */
      storeHistory?: boolean;
      /** Answers the code's `input()` (absent: `input()` raises in the kernel). */
      onInput?: (prompt: string, password: boolean) => Promise<string>;
    },
  ): Promise<{ status: 'ok' | 'error' | 'aborted'; executionCount: number | null; outputs: readonly NotebookOutput[] }>;
  /** Interrupts the running execution and says whether it ended (see {@link KernelInterruptOutcome}). */
  interrupt(): Promise<KernelInterruptOutcome>;
  restart(): Promise<void>;
  shutdown(): Promise<void>;
}

/**
 * Which kernel a notebook asks for: its `metadata.kernelspec.name`, and the language it is written
 * in (`metadata.kernelspec.language`, else `metadata.language_info.name`) for when no kernel of that
 * name is installed.
 */
export interface KernelRequest {
  readonly name: string;
  readonly language?: string;
}

/**
 * The client a kernel is started for (see `wireClientContextSchema`): its environment (the base of
 * the kernel's) and its working directory (where its project virtualenv is looked for). Both
 * optional: an older client sends neither. Secret-bearing: never logged, never stored.
 */
export interface KernelClient {
  readonly env?: Readonly<Record<string, string>>;
  readonly cwd?: string;
}

/** The outcome of asking for a kernel: one (with the program running it), or the reason there can be none. */
export type KernelLaunch =
  | {
      readonly kind: 'started';
      readonly kernel: RoomKernel;
      /** The program running the kernel (for Python, the interpreter). */
      readonly interpreter?: string;
      /** The project virtualenv it runs in, when one was chosen. */
      readonly virtualenv?: string;
    }
  | { readonly kind: 'unavailable'; readonly reason: string };

/**
 * Starts kernels for rooms. `unavailable` is an answer, not an error: the room's runtime state
 * becomes `unavailable` with the reason and everything else keeps working. `kernel` defaults to
 * the `python3` kernel; `client` to none (an environment of basics only).
 */
export interface KernelLauncher {
  launch(workingDir: string, kernel?: KernelRequest, client?: KernelClient): Promise<KernelLaunch>;
  /** The installed kernelspecs (`list_kernels`) as `client` would run them; a launcher without it offers only `python3`. */
  listKernels?(client?: KernelClient): Promise<readonly WireKernelspec[]>;
}
