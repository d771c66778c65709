import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { NotebookDocument } from '../document/notebook-document.js';
import { writeFileAtomic } from './write-file-atomic.js';

/**
 * Persisted untitled (non-ephemeral, not yet saved) notebooks, one `.ipynb` per UUID in the data
 * dir, so they come back on attach after a daemon restart. Ephemeral notebooks never come here.
 */
export class UntitledStore {
  public constructor(private readonly dir: string) {}

  public pathOf(notebookId: string): string {
    return join(this.dir, `${notebookId}.ipynb`);
  }

  public async write(notebookId: string, document: NotebookDocument): Promise<void> {
    await writeFileAtomic(this.pathOf(notebookId), document.toIpynb(), 0o600);
  }

  /** The stored document, or `undefined` when there is none. A corrupt file throws `notebookLoadFailed`. */
  public async read(notebookId: string): Promise<NotebookDocument | undefined> {
    let text: string;
    try {
      text = await readFile(this.pathOf(notebookId), 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
    return NotebookDocument.fromIpynb(text, this.pathOf(notebookId));
  }

  public async remove(notebookId: string): Promise<void> {
    await rm(this.pathOf(notebookId), { force: true });
  }
}
