import { readFile } from 'node:fs/promises';
import type { Logger } from '@nteract-mcp/foundation';
import { writeFileAtomic } from './write-file-atomic.js';

interface RegistryFile {
  readonly version: 1;
  readonly entries: Record<string, { readonly path: string; readonly updated_at: string }>;
}

/**
 * Which notebook UUID a saved file has, kept across daemon restarts (so a saved notebook keeps its
 * UUID). It is identity, not content: a binding says nothing about whether the file still exists.
 * Writes are atomic and serialised; a corrupt registry file is set aside and logged, not fatal.
 */
export class NotebookRegistry {
  readonly #byId = new Map<string, string>();
  #writing: Promise<void> = Promise.resolve();

  private constructor(
    private readonly file: string,
    private readonly logger: Logger,
  ) {}

  public static async load(file: string, logger: Logger): Promise<NotebookRegistry> {
    const registry = new NotebookRegistry(file, logger);
    let text: string | undefined;
    try {
      text = await readFile(file, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
    if (text !== undefined) {
      try {
        const parsed = JSON.parse(text) as RegistryFile;
        for (const [id, entry] of Object.entries(parsed.entries ?? {})) {
          if (typeof entry?.path === 'string') registry.#byId.set(id, entry.path);
        }
      } catch (error) {
        logger.error('notebook registry is unreadable; starting with an empty one', { file, error });
      }
    }
    return registry;
  }

  public pathOf(notebookId: string): string | undefined {
    return this.#byId.get(notebookId);
  }

  public idOf(path: string): string | undefined {
    for (const [id, bound] of this.#byId) if (bound === path) return id;
    return undefined;
  }

  /** Binds `notebookId` to `path`, dropping any other id bound to that path; resolves once durable. */
  public bind(notebookId: string, path: string): Promise<void> {
    for (const [id, bound] of this.#byId) if (bound === path && id !== notebookId) this.#byId.delete(id);
    this.#byId.set(notebookId, path);
    return this.persist();
  }

  private persist(): Promise<void> {
    const snapshot: RegistryFile = {
      version: 1,
      entries: Object.fromEntries(
        [...this.#byId].map(([id, path]) => [id, { path, updated_at: new Date().toISOString() }]),
      ),
    };
    this.#writing = this.#writing
      .catch(() => undefined)
      .then(async () => {
        await writeFileAtomic(this.file, `${JSON.stringify(snapshot, null, 1)}\n`, 0o600);
      })
      .catch((error: unknown) => {
        this.logger.error('could not write the notebook registry', { file: this.file, error });
        throw error;
      });
    return this.#writing;
  }
}
