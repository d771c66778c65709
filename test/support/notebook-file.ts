import { readFileSync } from 'node:fs';

/** One cell of a `.ipynb` file, as saved on disk. */
export interface SavedCell {
  readonly cellType: string;
  readonly source: string;
}

/** The cells of a `.ipynb` file on disk (sources joined when stored as line arrays). */
export function readNotebookFile(path: string): SavedCell[] {
  const notebook = JSON.parse(readFileSync(path, 'utf8')) as {
    cells?: { cell_type?: string; source?: string | string[] }[];
  };
  return (notebook.cells ?? []).map((cell) => ({
    cellType: cell.cell_type ?? 'code',
    source: Array.isArray(cell.source) ? cell.source.join('') : (cell.source ?? ''),
  }));
}
