import type { CellOutput, NotebookCell } from '@nteract-mcp/core';
import { releaseLargeTransient, releaseLargeTransientWhenAnswered } from '@nteract-mcp/foundation';
import { isBlobReference, readBlobText } from '@nteract-mcp/runtimed-protocol';

/**
 * Gives back the texts of the output values a daemon sent as blob references (the notebook
 * handshake asked for them and the daemon named its blob directory): the handle keeps the
 * references in its copy of the cells, so a large output is not held in this process, and reads
 * a value from its blob file only when a caller asks for the cell or the execution.
 *
 * Guarantees: what it gives out holds no reference: each is replaced by its blob's text, read now,
 * or by a line saying the blob is lost; what holds no reference is given out as it is (no copy).
 * Without a blob directory (a daemon that sends texts) everything is given out as it is. A large
 * text it reads is a transient of the request being answered: given back when the answer goes out
 * (V8 would keep it until its next full collection, which an idle process may not reach for long).
 */
export class BlobReferenceResolver {
  public constructor(
    /** The daemon's blob directory, as its `connected` frame named it. */
    public readonly dir: string | undefined,
  ) {}

  public cells(cells: readonly NotebookCell[]): NotebookCell[] {
    return cells.map((cell) => this.cell(cell));
  }

  public cell<T extends NotebookCell>(cell: T): T {
    const outputs = this.outputs(cell.outputs);
    return outputs === cell.outputs ? cell : { ...cell, outputs };
  }

  /** `value` with its `outputs` resolved (an execution's state or result). */
  public withOutputs<T extends { readonly outputs: readonly CellOutput[] }>(value: T): T {
    const outputs = this.outputs(value.outputs);
    return outputs === value.outputs ? value : { ...value, outputs };
  }

  public outputs(outputs: readonly CellOutput[]): readonly CellOutput[] {
    const dir = this.dir;
    if (dir === undefined || !outputs.some(holdsReference)) return outputs;
    let chars = 0;
    const read = (value: unknown): unknown => {
      if (!isBlobReference(value)) return value;
      chars += value.chars;
      return readBlobText(dir, value);
    };
    const resolved = outputs.map((output) => {
      if (!holdsReference(output)) return output;
      const copy: Record<string, unknown> = { ...output, text: read(output.text) };
      if (output.text === undefined) delete copy.text;
      if (isRecord(output.data)) {
        copy.data = Object.fromEntries(Object.entries(output.data).map(([mime, value]) => [mime, read(value)]));
      }
      return copy as CellOutput;
    });
    releaseLargeTransientWhenAnswered(chars);
    return resolved;
  }

  /**
   * The texts `outputs` held were dropped (the copy of the cells took references in their place):
   * their memory is given back soon, and at the latest with the answer that may still use them.
   */
  public dropped(outputs: readonly CellOutput[]): void {
    let chars = 0;
    for (const output of outputs) {
      if (typeof output.text === 'string') chars += output.text.length;
      if (isRecord(output.data))
        for (const value of Object.values(output.data)) if (typeof value === 'string') chars += value.length;
    }
    releaseLargeTransient(chars);
    releaseLargeTransientWhenAnswered(chars);
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function holdsReference(output: CellOutput): boolean {
  if (isBlobReference(output.text)) return true;
  return isRecord(output.data) && Object.values(output.data).some(isBlobReference);
}
