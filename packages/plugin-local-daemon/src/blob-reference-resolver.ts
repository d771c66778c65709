import type { CellOutput, NotebookCell } from '@nteract-mcp/core';
import { isBlobReference, readBlobText } from '@nteract-mcp/runtimed-protocol';

/**
 * Gives back the texts of the output values a daemon sent as blob references (the notebook
 * handshake asked for them and the daemon named its blob directory): the handle keeps the
 * references in its copy of the cells, so a large output is not held in this process, and reads
 * a value from its blob file only when a caller asks for the cell or the execution.
 *
 * Guarantees: what it gives out holds no reference: each is replaced by its blob's text, read now,
 * or by a line saying the blob is lost; what holds no reference is given out as it is (no copy).
 * Without a blob directory (a daemon that sends texts) everything is given out as it is.
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
    return outputs.map((output) => {
      if (!holdsReference(output)) return output;
      const copy: Record<string, unknown> = { ...output };
      if (isBlobReference(copy.text)) copy.text = readBlobText(dir, copy.text);
      const data = copy.data;
      if (isRecord(data)) {
        copy.data = Object.fromEntries(
          Object.entries(data).map(([mime, value]) => [
            mime,
            isBlobReference(value) ? readBlobText(dir, value) : value,
          ]),
        );
      }
      return copy as CellOutput;
    });
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function holdsReference(output: CellOutput): boolean {
  if (isBlobReference(output.text)) return true;
  return isRecord(output.data) && Object.values(output.data).some(isBlobReference);
}
