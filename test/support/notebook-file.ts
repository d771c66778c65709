import { readFileSync } from 'node:fs';

/** One cell of a `.ipynb` file, as saved on disk. */
export interface SavedCell {
  readonly id: string | undefined;
  readonly cellType: string;
  readonly source: string;
  /** The text of its stream outputs, joined in order (empty when it has none). */
  readonly streamText: string;
}

type Multiline = string | string[] | undefined;
const joined = (text: Multiline): string => (Array.isArray(text) ? text.join('') : (text ?? ''));

/** The cells of a `.ipynb` file on disk (texts joined when stored as line arrays). */
export function readNotebookFile(path: string): SavedCell[] {
  const notebook = JSON.parse(readFileSync(path, 'utf8')) as {
    cells?: {
      id?: string;
      cell_type?: string;
      source?: Multiline;
      outputs?: { output_type?: string; text?: Multiline }[];
    }[];
  };
  return (notebook.cells ?? []).map((cell) => ({
    id: cell.id,
    cellType: cell.cell_type ?? 'code',
    source: joined(cell.source),
    streamText: (cell.outputs ?? [])
      .filter((output) => output.output_type === 'stream')
      .map((output) => joined(output.text))
      .join(''),
  }));
}
