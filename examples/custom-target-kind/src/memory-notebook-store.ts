import { injectable } from 'inversify';
import { MemoryNotebook } from './memory-notebook.js';

/**
 * The notebooks of the `acme.memory` kind, by name, for the life of the container: connecting to
 * a name reaches its notebook, made empty on the first connection. Bound by its class, one per
 * container (the plugin's process).
 */
@injectable()
export class MemoryNotebookStore {
  readonly #notebooks = new Map<string, MemoryNotebook>();

  /** The notebook named `name`, made empty when there is none yet. */
  public notebook(name: string): MemoryNotebook {
    let notebook = this.#notebooks.get(name);
    if (notebook === undefined) {
      notebook = new MemoryNotebook(name);
      this.#notebooks.set(name, notebook);
    }
    return notebook;
  }

  /**
   * A restart of the store, as a remote kind's server restarts: every peer's connection is lost
   * (its handle closes `disconnected`), the notebooks are kept.
   */
  public restart(): void {
    for (const notebook of this.#notebooks.values()) notebook.dropPeers();
  }

  /** The names of the notebooks made so far. */
  public names(): readonly string[] {
    return [...this.#notebooks.keys()];
  }
}
