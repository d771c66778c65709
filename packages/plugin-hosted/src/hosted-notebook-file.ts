import {
  CoreError,
  cellChangesBetween,
  type HostedUrlTarget,
  type Logger,
  type MutationOptions,
  type NotebookCell,
  type NotebookCellChange,
  type Subscription,
} from '@nteract-mcp/core';
import { cellContentVersion, ListenerSet } from '@nteract-mcp/foundation';
import { type MutableCell, readCell, toNotebookCell, writeCell } from './hosted-cell.js';
import type { JupyterServerPort, NotebookJson, ServerNotebookFile } from './jupyter-server-port.js';

export interface HostedNotebookFileOptions {
  readonly target: HostedUrlTarget;
  readonly server: JupyterServerPort;
  /** The file as loaded through the contents API. */
  readonly file: ServerNotebookFile;
  readonly logger: Logger;
  /** For the logs. */
  readonly notebookId: string;
}

/**
 * The document side of a hosted notebook: its cells as loaded through the contents API, the
 * writes back (one at a time, each refused when the file changed on the server since this handle
 * loaded or last wrote it), and the listeners told of every change once it is saved.
 *
 * Does not guarantee that a change made on the server between the check and the write of a save
 * is seen (the contents API has no conditional write; the window is one REST round trip).
 */
export class HostedNotebookFile {
  readonly #options: HostedNotebookFileOptions;
  readonly #notebook: NotebookJson;
  #cells: MutableCell[];
  #lastModified: string;
  #writes: Promise<unknown> = Promise.resolve();
  readonly #changeListeners: ListenerSet<NotebookCellChange>;

  public constructor(options: HostedNotebookFileOptions) {
    this.#options = options;
    this.#notebook = options.file.content;
    this.#cells = options.file.content.cells.map(readCell);
    this.#lastModified = options.file.lastModified;
    this.#changeListeners = new ListenerSet((error) =>
      options.logger.error('an onDidChangeCells listener threw', { notebookId: options.notebookId, error }),
    );
  }

  /** The cells as they are here now (a change is here before it is saved). */
  public get cells(): readonly MutableCell[] {
    return this.#cells;
  }

  /** Replaces the cell list (inside {@link HostedNotebookFile.edit}). */
  public set cells(cells: MutableCell[]) {
    this.#cells = cells;
  }

  /** Settles when the writes queued so far have. */
  public get writes(): Promise<unknown> {
    return this.#writes;
  }

  public listCells(): NotebookCell[] {
    return this.#cells.map(toNotebookCell);
  }

  /** The cell, or `undefined` when it is gone (deleted meanwhile). */
  public find(cellId: string): MutableCell | undefined {
    return this.#cells.find((candidate) => candidate.id === cellId);
  }

  /**
   * The cell `cellId` (`cellNotFound` when there is none); with `options.expectedVersion`, refused
   * (`staleCell`) when its content has another version.
   */
  public cell(cellId: string, options?: MutationOptions): MutableCell {
    const cell = this.find(cellId);
    if (!cell) throw new CoreError('cellNotFound', `Cell not found: ${cellId}`);
    const expected = options?.expectedVersion;
    const version = cellContentVersion(cell.cellType, cell.source);
    if (expected !== undefined && expected !== version) {
      throw new CoreError(
        'staleCell',
        `Cell ${cellId} has changed since version ${expected} (its version is now ${version}). Nothing was changed. Its source now:\n${cell.source}`,
      );
    }
    return cell;
  }

  /**
   * Applies `change` to the cells and saves them (the conflict rule); when the save fails the
   * cells are as before and it rejects. Once saved, the listeners are told what changed.
   * `beforeApply` runs when the write's turn comes (e.g. to check the handle is still open).
   */
  public edit<R>(change: () => R, beforeApply: () => void = () => undefined): Promise<R> {
    return this.queueWrite(async () => {
      beforeApply();
      const before = this.#cells.map((cell) => ({ ...cell, outputs: [...cell.outputs] }));
      const result = change();
      try {
        await this.persist();
      } catch (error) {
        this.#cells = before;
        throw error;
      }
      for (const changed of cellChangesBetween(before.map(toNotebookCell), this.#cells.map(toNotebookCell))) {
        this.tellChange(changed);
      }
      return result;
    });
  }

  /** Saves the cells as they are, after the writes already queued. */
  public save(): Promise<void> {
    return this.queueWrite(() => this.persist());
  }

  public onDidChangeCells(listener: (change: NotebookCellChange) => void): Subscription {
    return this.#changeListeners.add(listener);
  }

  /** Tells every listener of `change` (a listener that throws is logged, the others still told). */
  public tellChange(change: NotebookCellChange): void {
    this.#changeListeners.tell(change);
  }

  /** Forgets every listener (the handle closed). */
  public disposeListeners(): void {
    this.#changeListeners.clear();
  }

  private queueWrite<R>(write: () => Promise<R>): Promise<R> {
    const result = this.#writes.then(write);
    this.#writes = result.catch(() => undefined);
    return result;
  }

  /** Writes the document unless the file changed on the server since this handle loaded or last wrote it. */
  private async persist(): Promise<void> {
    const { target, server } = this.#options;
    const current = await server.lastModified(target.notebookPath);
    if (current !== this.#lastModified) {
      throw new CoreError(
        'invalidRequest',
        `${target.url} was ${current === undefined ? 'deleted' : 'changed'} on the Jupyter Server since it was loaded here, so this change was not saved and the server's file was left as it is. Reconnect with connect_notebook(url="${target.url}") to load the server's version, then make the change again.`,
        { code: 'file_changed_on_server' },
      );
    }
    this.#lastModified = await server.saveNotebook(target.notebookPath, this.serialize());
  }

  private serialize(): NotebookJson {
    const minor = typeof this.#notebook.nbformat_minor === 'number' ? this.#notebook.nbformat_minor : 5;
    return {
      ...this.#notebook,
      nbformat: 4,
      nbformat_minor: Math.max(minor, 5),
      cells: this.#cells.map(writeCell),
    };
  }
}
