import {
  type BackendConnectContext,
  CoreError,
  type NotebookBackend,
  type NotebookHandle,
  type NotebookTarget,
} from '@nteract-mcp/core';
import { inject, injectable } from 'inversify';
import { MemoryNotebookHandle } from './memory-notebook-handle.js';
import { MemoryNotebookStore } from './memory-notebook-store.js';
import { type MemoryTarget, memoryKind, memoryScheme } from './memory-target.js';

const namePattern = /^[a-z0-9][a-z0-9_-]{0,63}$/;

/**
 * The whole `acme.memory` target kind: `memory:<name>` targets (the `url` argument of
 * `connect_notebook`), notebooks the plugin keeps in memory. Connecting opens a new peer, a
 * {@link MemoryNotebookHandle} of the kind's own, on the notebook of that name (made empty on the
 * first connection); every connection to one name shares it. Coming back after a loss is
 * connecting again (no `reopen` of its own): the notebook lives as long as the plugin's process.
 */
@injectable()
export class MemoryNotebookBackend implements NotebookBackend {
  public readonly id = 'acme.memory';
  public readonly specificationVersion = 'v1';
  public readonly kind = memoryKind;
  public readonly argument = 'url';

  public constructor(@inject(MemoryNotebookStore) private readonly store: MemoryNotebookStore) {}

  public recognizes(raw: string): boolean {
    return raw.trim().toLowerCase().startsWith(memoryScheme);
  }

  public parse(raw: string): MemoryTarget {
    const text = raw.trim();
    const name = text.toLowerCase().startsWith(memoryScheme) ? text.slice(memoryScheme.length) : '';
    if (!namePattern.test(name)) {
      throw new CoreError(
        'invalidTarget',
        `'${text}' does not name a memory notebook: write memory:<name> (lowercase letters, digits, - and _), e.g. memory:scratch.`,
      );
    }
    return { kind: memoryKind, name };
  }

  public describe(target: NotebookTarget): string {
    return `${memoryScheme}${(target as MemoryTarget).name}`;
  }

  public async connect(target: NotebookTarget, context: BackendConnectContext): Promise<NotebookHandle> {
    // A connection no longer wanted is not made (there is nothing to wait for, so nothing else to honour).
    context.signal.throwIfAborted();
    return new MemoryNotebookHandle(this.store.notebook((target as MemoryTarget).name), context.peerLabel);
  }
}
