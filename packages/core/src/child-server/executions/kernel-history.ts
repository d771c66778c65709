import { pythonDefinedNames } from '../tools/python-defined-names.js';

/** One run of a code cell by this server, as {@link KernelHistory} keeps it. */
export interface KernelRun {
  readonly cellId: string;
  /** The source that ran. */
  readonly source: string;
}

/** The cells this server had run in a kernel that is gone, and what they had defined. */
export interface LostKernelState {
  /** Why the kernel is gone (the kernel notice, or `restart_kernel`). */
  readonly reason: string;
  /** Each cell once, in the order of its last run in the lost kernel. */
  readonly runs: readonly KernelRun[];
  /** Whether the kernel ran Python (then {@link LostKernelState.names} lists what the cells defined). */
  readonly python: boolean;
}

/** At most this many runs are kept per notebook (the oldest are forgotten first). */
export const maxKernelRuns = 500;

/** At most this many notebooks are remembered (the least recently used is forgotten). */
export const maxKernelHistoryNotebooks = 32;

interface NotebookHistory {
  current: KernelRun[];
  lost: LostKernelState | undefined;
  /** A replacement was recorded from the handle's pending notice: the execution that carries that notice starts no new kernel. */
  awaitingNotice: boolean;
}

/**
 * Which code cells this server ran in which kernel of each notebook, so that when a kernel is
 * replaced the agent is told what it had defined that is gone, and `restore_state` can run those
 * cells again.
 *
 * Fed by the tools that run cells (every execution goes through core's tools): each finished run
 * is added to the notebook's current kernel; a run whose result carries a kernel notice ran in a
 * new kernel, so the runs before it become the lost kernel's. A replacement seen another way (the
 * handle's pending `kernelNotice` read by `session_status` or `restore_state`, or `restart_kernel`)
 * is recorded with {@link KernelHistory.replaced}.
 *
 * Guarantees: per notebook id (a rejoined handle keeps its history); bounded ({@link maxKernelRuns}
 * runs, {@link maxKernelHistoryNotebooks} notebooks); the last lost kernel is kept until the next
 * replacement. Does not guarantee: runs by other peers (a person in JupyterLab, another agent), scratch
 * runs (`run_code`), or anything before this child process started (it lives in memory).
 */
export class KernelHistory {
  readonly #notebooks = new Map<string, NotebookHistory>();

  /**
   * Records a finished run of `run.cellId`; with `kernelNotice` (the run went to a new kernel), the
   * runs before it are the lost kernel's first. Returns the lost state when the run carried a notice.
   */
  public ran(
    notebookId: string,
    run: KernelRun | undefined,
    kernelNotice: string | undefined,
    python: boolean,
  ): LostKernelState | undefined {
    const history = this.notebook(notebookId);
    let lost: LostKernelState | undefined;
    if (kernelNotice !== undefined) {
      if (history.awaitingNotice) history.awaitingNotice = false;
      else this.replace(history, kernelNotice, python);
      lost = history.lost;
    }
    if (run) {
      history.current = history.current.filter((earlier) => earlier.cellId !== run.cellId);
      history.current.push(run);
      if (history.current.length > maxKernelRuns) history.current.shift();
    }
    return lost;
  }

  /**
   * The notebook's kernel was replaced (`reason` says how): the runs so far become the lost
   * kernel's. `fromPendingNotice`: the replacement is the handle's pending notice, which the next
   * execution will carry again (it then starts no second replacement). Returns the lost state.
   */
  public replaced(
    notebookId: string,
    reason: string,
    python: boolean,
    fromPendingNotice: boolean,
  ): LostKernelState | undefined {
    const history = this.notebook(notebookId);
    if (fromPendingNotice && history.awaitingNotice) return history.lost;
    this.replace(history, reason, python);
    history.awaitingNotice = fromPendingNotice;
    return history.lost;
  }

  /** The last lost kernel of the notebook, if one was recorded. */
  public lost(notebookId: string): LostKernelState | undefined {
    return this.#notebooks.get(notebookId)?.lost;
  }

  private replace(history: NotebookHistory, reason: string, python: boolean): void {
    // A replacement with nothing run since the last one keeps what the last one lost.
    if (history.current.length === 0 && history.lost) return;
    history.lost = history.current.length === 0 ? undefined : { reason, runs: history.current, python };
    history.current = [];
  }

  private notebook(notebookId: string): NotebookHistory {
    let history = this.#notebooks.get(notebookId);
    if (history) this.#notebooks.delete(notebookId);
    else history = { current: [], lost: undefined, awaitingNotice: false };
    this.#notebooks.set(notebookId, history);
    while (this.#notebooks.size > maxKernelHistoryNotebooks) {
      this.#notebooks.delete(this.#notebooks.keys().next().value as string);
    }
    return history;
  }
}

/** Whether a kernel named `kernelName` runs Python (an unnamed one is taken to: `python3` is the default). */
export function isPythonKernel(kernelName: string | undefined): boolean {
  return kernelName === undefined || /python|^py|ipykernel/i.test(kernelName);
}

/**
 * The lost state as a tool answer shows it: `lost_state` with the defined names (Python) or the
 * cells that ran (other languages), one sentence saying it plainly, and how to bring it back.
 */
export function lostStateJson(lost: LostKernelState | undefined): Record<string, unknown> {
  if (lost === undefined || lost.runs.length === 0) return {};
  const cells = lost.runs.map((run) => run.cellId);
  const again = `restore_state() runs ${cells.length === 1 ? 'that cell' : `those ${cells.length} cells`} again, in order (${cells.join(', ')}).`;
  if (!lost.python) {
    return {
      lost_state: {
        cells,
        summary: `Gone with the old kernel: whatever cells ${cells.join(', ')} had defined (run by this agent). ${again}`,
      },
    };
  }
  const names = pythonDefinedNames(lost.runs.map((run) => run.source));
  const parts = [
    names.variables.length > 0 ? `variables ${names.variables.join(', ')}` : undefined,
    names.functions.length > 0 ? `functions ${names.functions.join(', ')}` : undefined,
    names.classes.length > 0 ? `classes ${names.classes.join(', ')}` : undefined,
    names.imports.length > 0 ? `imports ${names.imports.join(', ')}` : undefined,
  ].filter((part) => part !== undefined);
  const what =
    parts.length > 0 ? parts.join('; ') : `nothing at top level that could be read, from cells ${cells.join(', ')}`;
  return {
    lost_state: {
      variables: names.variables,
      functions: names.functions,
      classes: names.classes,
      imports: names.imports,
      cells,
      summary: `Gone with the old kernel (defined by the cells this agent ran): ${what}. ${again}`,
    },
  };
}
