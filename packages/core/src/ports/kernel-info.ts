/**
 * One installed Jupyter kernel (kernelspec) a notebook can run in: its `name` (what
 * `create_notebook` takes as `kernel`, and a notebook's `metadata.kernelspec.name`), how Jupyter
 * shows it, its language, and whether it can start here (with why not).
 */
export interface KernelInfo {
  readonly name: string;
  readonly displayName: string;
  readonly language: string;
  /** The directory of its `kernel.json`; `undefined` for a kernel synthesised from an interpreter. */
  readonly location: string | undefined;
  readonly available: boolean;
  readonly reason?: string;
  /** The program that runs it (for Python, the interpreter), when known. */
  readonly interpreter?: string;
  /** The project virtualenv it runs in for this client, when one is used instead of the kernelspec's interpreter. */
  readonly virtualenv?: string;
}
