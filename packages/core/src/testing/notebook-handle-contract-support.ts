import { CoreError, type CoreErrorKind } from '../errors/core-error.js';
import type { CellOutput, NotebookHandle } from '../ports/notebook-handle.js';

/**
 * The test runner's registration functions the contract suite uses (vitest's `describe` and `it`
 * fit). Taken as a parameter so `@nteract-mcp/core/testing` does not import a test runner.
 */
export interface ContractTestApi {
  describe(name: string, body: () => void): void;
  it(name: string, body: () => Promise<void>, timeoutMs?: number): void;
}

/** One fresh notebook for one check of the contract suite, opened by the backend under test. */
export interface ContractNotebook {
  /** A handle on a new notebook the check may change freely. */
  readonly handle: NotebookHandle;
  /** Opens another peer on the same notebook (a second connection), when the backend has peers. */
  openPeer?(): Promise<NotebookHandle>;
  /** Where the notebook may be saved (`save(path)`), in the backend's terms; absent: no save check. */
  readonly savePath?: string;
  /** Releases what was made for the check (files, rooms); called after the suite closed the handles. */
  dispose?(): Promise<void>;
}

/** How a backend is put under the contract suite. */
export interface NotebookHandleContractSetup {
  /** Opens a new notebook for one check. */
  open(): Promise<ContractNotebook>;
  /**
   * A code cell the backend's kernel runs, and a text its outputs contain (Python: `print(6 * 7)`,
   * `42`); absent when the backend has no kernel: then no check that runs code is registered.
   */
  readonly execution?: {
    readonly source: string;
    readonly outputText: string;
    /** Code that runs for many seconds (Python: `import time; time.sleep(30)`); absent: no timeout check. */
    readonly slowSource?: string;
  };
  /** Each check's time limit; default 60 s (a real kernel starts within it). */
  readonly timeoutMs?: number;
  /** How long a change told asynchronously (another peer's edit, a change event) may take; default 10 s. */
  readonly settleMs?: number;
}

/** A contract check failed: what the port promises and what the handle did. */
export class ContractViolation extends Error {
  public constructor(message: string) {
    super(message);
    this.name = 'ContractViolation';
  }
}

/** Fails the check unless `condition` holds. */
export function ensure(condition: boolean, message: string): asserts condition {
  if (!condition) throw new ContractViolation(message);
}

/** Fails the check unless the two values are equal as JSON (cell ids, sources, lists of them). */
export function ensureEqual(actual: unknown, expected: unknown, what: string): void {
  const a = JSON.stringify(actual);
  const e = JSON.stringify(expected);
  ensure(a === e, `${what}: expected ${e}, got ${a}`);
}

/** Resolves with the error `call` rejected with; fails the check when it resolves or does not settle in `withinMs`. */
export async function rejection(call: () => Promise<unknown>, what: string, withinMs: number): Promise<unknown> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<'late'>((resolve) => {
    timer = setTimeout(() => resolve('late'), withinMs);
  });
  try {
    const outcome = await Promise.race([
      Promise.resolve()
        .then(call)
        .then(
          () => ({ rejected: false as const }),
          (error: unknown) => ({ rejected: true as const, error }),
        ),
      late,
    ]);
    ensure(outcome !== 'late', `${what} neither resolved nor rejected within ${withinMs} ms`);
    ensure(outcome.rejected, `${what} resolved; it must reject`);
    return outcome.error;
  } finally {
    clearTimeout(timer);
  }
}

/** Fails the check unless `call` rejects with a `CoreError` of `kind`. */
export async function ensureRejectsWith(
  call: () => Promise<unknown>,
  kind: CoreErrorKind,
  what: string,
  withinMs: number,
): Promise<void> {
  const error = await rejection(call, what, withinMs);
  const seen = CoreError.is(error) ? `CoreError ${error.kind}` : String(error);
  ensure(CoreError.is(error, kind), `${what} must reject with CoreError ${kind}; it rejected with ${seen}`);
}

/** Waits until `probe` answers true (re-asking every 25 ms), failing the check after `withinMs`. */
export async function eventually(
  probe: () => boolean | Promise<boolean>,
  what: string,
  withinMs: number,
): Promise<void> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    if (await probe()) return;
    ensure(Date.now() < deadline, `${what} did not happen within ${withinMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** The text of an output as a person reads it (stream text, the plain text of a result, an error's name and value). */
export function outputText(output: CellOutput): string {
  const text = output.text;
  if (typeof text === 'string') return text;
  if (Array.isArray(text)) return text.join('');
  const data = output.data as Record<string, unknown> | undefined;
  const plain = data?.['text/plain'];
  if (typeof plain === 'string') return plain;
  if (Array.isArray(plain)) return plain.join('');
  return [output.ename, output.evalue].filter((part) => typeof part === 'string').join(': ');
}

/** All the outputs' text, joined. */
export function outputsText(outputs: readonly CellOutput[]): string {
  return outputs.map(outputText).join('');
}
