import { readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { type Clock, type Logger, releaseLargeTransient, type Timer } from '@nteract-mcp/foundation';
import type { WireNotebookAnswer } from '@nteract-mcp/runtimed-protocol';
import { DaemonError } from '../daemon-error.js';
import { NotebookDocument } from '../document/notebook-document.js';
import {
  type NotebookFileState,
  notebookFileState,
  readNotebookFileIfChanged,
} from '../persistence/notebook-file-state.js';
import type { UntitledStore } from '../persistence/untitled-store.js';
import { writeFileAtomic } from '../persistence/write-file-atomic.js';
import type { RoomJournalWriter } from './room-journal-writer.js';
import type { RoomSignals } from './room-peers.js';
import type { RoomSettings } from './room-settings.js';
import { type NotebookFileWatch, watchNotebookFile } from './watch-notebook-file.js';

/** The first retry of a failed save, and the longest wait between retries. */
const firstSaveRetryMs = 1_000;
const maxSaveRetryMs = 30_000;

export interface RoomFileKeeperInit {
  readonly notebookId: string;
  readonly document: NotebookDocument;
  readonly path: string | undefined;
  /** Created ephemeral (discarded when its room closes while it has no file). */
  readonly ephemeral: boolean;
  readonly settings: Pick<RoomSettings, 'autosaveDebounceMs' | 'autosaveMaxDelayMs'>;
  readonly untitled: UntitledStore;
  /** The room's journal: marked at each save, restarted after it. */
  readonly journal: RoomJournalWriter;
  /** What was read from `path` (for noticing changes by other programs). */
  readonly fileState: NotebookFileState | undefined;
  /** Binds the room to another file (see `RoomInit.bindPath`). */
  readonly bindPath: (path: string, write: () => Promise<void>) => Promise<void>;
  /** The room is bound to the file `path` now (a save to a new path). */
  readonly onRebound: (path: string) => void;
  /** The document was replaced by the file's content. */
  readonly onReloaded?: () => void;
  /** The room closed: a change of the file seen now is not looked at. */
  readonly isClosed: () => boolean;
  readonly signals: RoomSignals;
  readonly clock: Clock;
  readonly logger: Logger;
}

/**
 * Where one room's document is kept: its file (watched; a change by another program is reloaded,
 * or, under unsaved edits, becomes a conflict with the room's version written beside it), the
 * autosave (debounced, retried with back-off while writes fail), and save-as. Each save marks
 * and then restarts the room's journal (the edits since the last save).
 */
export class RoomFileKeeper {
  readonly #init: RoomFileKeeperInit;
  readonly #document: NotebookDocument;
  #path: string | undefined;
  #dirty = false;
  #dirtySince: number | undefined;
  #saveTimer: Timer | undefined;
  /** The delay of the last save retry (0: the last write succeeded). */
  #saveRetryMs = 0;
  #disposed = false;
  #saving: Promise<void> = Promise.resolve();
  #fileState: NotebookFileState | undefined;
  /** sha256 of a save of ours under way (its rename is not a change by someone else). */
  #writingSha: string | undefined;
  /** That save itself: a request waits for it, so it judges the file against what was written. */
  #writing: Promise<unknown> | undefined;
  /** A change by someone else seen while a save of ours was under way: judged once it is done. */
  #recheckAfterWrite = false;
  #conflict: { readonly copy: string; readonly message: string; readonly mode: number } | undefined;
  #watch: NotebookFileWatch | undefined;
  /** The room's last write of its document: when, and where. */
  #lastSaved: { readonly at: number; readonly path: string } | undefined;

  public constructor(init: RoomFileKeeperInit) {
    this.#init = init;
    this.#document = init.document;
    this.#path = init.path;
    this.#fileState = init.fileState;
    this.watchFile();
  }

  public get path(): string | undefined {
    return this.#path;
  }

  /** Discarded when its room closes: created ephemeral and not saved to a file since. */
  public get ephemeral(): boolean {
    return this.#init.ephemeral && this.#path === undefined;
  }

  /** The conflict message while the file was changed by another program under unsaved edits. */
  public get conflictMessage(): string | undefined {
    return this.#conflict?.message;
  }

  public get lastSaved(): { readonly at: number; readonly path: string } | undefined {
    return this.#lastSaved;
  }

  /** Whether the document is kept anywhere (a file, or the untitled store). */
  public isPersistent(): boolean {
    return this.#path !== undefined || !this.ephemeral;
  }

  /** Resolves once no save of ours to the file is under way. */
  public async ownWriteSettled(): Promise<void> {
    while (this.#writing) await this.#writing;
  }

  /** Throws the conflict message while the file is in conflict; first picks up a change on disk. */
  public assertWritable(): void {
    if (!this.#conflict) this.checkDisk();
    if (this.#conflict) throw new DaemonError('fileConflict', this.#conflict.message);
  }

  /**
   * A peer opens this room by its path: a file changed by another program is loaded now, also
   * over a conflict (the room's version is safe in the conflict copy), so reconnecting loads the file.
   */
  public async reopenFromDisk(): Promise<void> {
    if (!this.#conflict) {
      this.checkDisk();
      return;
    }
    // The conflict copy is written first: after the reload the room's version lives only there.
    await this.#saving;
    if (this.#conflict) this.reloadFromDisk('reopened after a file conflict');
  }

  /** The document changed: it is saved after the debounce, and at least every `autosaveMaxDelayMs`. */
  public markDirty(): void {
    if (this.ephemeral && this.#path === undefined) return;
    this.#dirty = true;
    const now = this.#init.clock.now();
    this.#dirtySince ??= now;
    const { autosaveDebounceMs, autosaveMaxDelayMs } = this.#init.settings;
    const delay = Math.max(0, Math.min(autosaveDebounceMs, this.#dirtySince + autosaveMaxDelayMs - now));
    this.#saveTimer?.cancel();
    this.#saveTimer = this.#init.clock.setTimer(delay, () => {
      this.#saveTimer = undefined;
      this.#saving = this.#saving.then(() => this.writeNow()).catch(() => undefined);
    });
  }

  /**
   * Makes the document durable where it belongs: the file for file-backed rooms, the data dir for
   * persisted untitled ones; nothing for ephemeral ones. Resolves when written.
   */
  public async flush(): Promise<void> {
    this.#saveTimer?.cancel();
    this.#saveTimer = undefined;
    await this.#saving;
    if (!this.#dirty) return;
    const write = this.writeNow();
    this.#saving = write.catch(() => undefined);
    await write;
  }

  /** `save`: writes the document to its file, or to `requestedPath` (which the room moves to). */
  public async save(requestedPath: string | undefined): Promise<WireNotebookAnswer<'save'>> {
    const target = requestedPath ?? this.#path;
    if (target === undefined) {
      throw new DaemonError(
        'noPath',
        "No path specified. This notebook is untitled: give a path, e.g. save_notebook(path='/path/to/file.ipynb').",
      );
    }
    if (!target.startsWith('/')) throw badRequest(`The save path must be absolute, got '${target}'`);
    if (!target.endsWith('.ipynb')) throw badRequest(`The save path must end in .ipynb, got '${target}'`);
    const previous = this.#path;
    // An explicit save overwrites the file; a change on disk not seen yet is seen first (a clean
    // room loads it, a room with unsaved edits enters the conflict, and the agent is told).
    if (this.#conflict === undefined && target === previous) {
      await this.ownWriteSettled();
      this.assertWritable();
    }
    if (target !== previous) {
      // Transactional: the room moves to the new file only once the file is written; a failed
      // write leaves the path, the registry, the watcher and autosave as they were.
      const version = this.#document.version;
      const text = this.#document.ipynbText();
      let written: NotebookFileState | undefined;
      let mark = Number.POSITIVE_INFINITY;
      try {
        await this.#init.bindPath(target, async () => {
          const hash = text.sha256();
          mark = this.#init.journal.markSaving(hash);
          written = notebookFileState(target, { sha256: hash }, await writeFileAtomic(target, text.chunks(), 0o644));
        });
        releaseLargeTransient(text.chars);
      } catch (error) {
        if (DaemonError.is(error)) throw error;
        const kept = previous === undefined ? 'it stays untitled' : `it is still saved to ${previous}`;
        throw new DaemonError(
          'saveFailed',
          `Cannot save to ${target}: ${describeWriteFailure(error)}. Nothing changed: ${kept}.`,
          { cause: error },
        );
      }
      this.#path = target;
      this.#init.onRebound(target);
      this.#fileState = written;
      this.watchFile();
      this.#conflict = undefined;
      // The new file has every edit made before its text was taken: written once, not again below
      // (edits made while it was written are the flush's).
      if (written !== undefined && this.#document.version === version) {
        this.#dirty = false;
        this.#dirtySince = undefined;
        this.savedAs(written, mark);
      }
    } else {
      // An explicit save writes the room's version over a conflict.
      this.#conflict = undefined;
      this.#dirty = true;
    }
    try {
      await this.flush();
    } catch (error) {
      if (DaemonError.is(error)) throw error;
      throw new DaemonError(
        'saveFailed',
        `Cannot save to ${target}: ${describeWriteFailure(error)}. The daemon keeps every edit and tries again; session_status shows when saving works again.`,
        { cause: error },
      );
    }
    if (previous === undefined && !this.#init.ephemeral) await this.#init.untitled.remove(this.#init.notebookId);
    this.#init.signals.broadcast({ event: 'saved', notebook_path: target });
    return { notebook_id: this.#init.notebookId, notebook_path: target };
  }

  /**
   * Stops watching the file and closes the journal; with `discardJournal` (the document is saved
   * and the room goes away: reaped or shut down) the journal file is deleted.
   */
  public dispose(discardJournal: boolean): void {
    this.#disposed = true;
    this.#saveTimer?.cancel();
    this.#saveTimer = undefined;
    this.#watch?.close();
    this.#watch = undefined;
    this.#init.journal.close(discardJournal && !this.#dirty);
  }

  /**
   * Compares the file with what the room last read or wrote. Changed by someone else: without
   * unsaved edits the room loads it; with unsaved edits the room enters a conflict (the file is left
   * as it is, the room's version is written beside it). Synchronous, so a request sees its result.
   */
  private checkDisk(): void {
    const known = this.#fileState;
    if (this.#path === undefined || this.#conflict || !known || known.path !== this.#path) return;
    const seen = readNotebookFileIfChanged(known, this.#writingSha);
    if (seen === 'missing') {
      // (Our own atomic rename may be under way: judged once it settled.)
      if (!this.#writing) this.fileWentMissing(known);
      return;
    }
    if (!seen) return;
    const { signals } = this.#init;
    if (signals.hasCondition('file_missing')) {
      signals.setCondition('file_missing', undefined);
      signals.notice(`${known.path} is back on disk.`);
    }
    if (!seen.changed) {
      if (seen.state.sha256 === known.sha256) this.#fileState = seen.state;
      return;
    }
    if (this.#writing) {
      // Before our rename or after it? Only the finished save can tell: judge it then.
      this.#recheckAfterWrite = true;
      return;
    }
    if (!this.#dirty) {
      let loaded: NotebookDocument;
      try {
        loaded = NotebookDocument.fromIpynb(seen.text, this.#path);
      } catch (error) {
        // Perhaps still being written: the next change of the file brings us back here.
        this.#init.logger.warn('the notebook file changed on disk but cannot be read yet', {
          notebookId: this.#init.notebookId,
          error,
        });
        return;
      }
      this.applyReload(loaded, seen.state, 'changed on disk by another program');
      const count = loaded.cells().length;
      signals.notice(
        `${known.path} was replaced on disk by another program; the notebook was reloaded from it (${count} cell${count === 1 ? '' : 's'} now). Read the cells again before editing.`,
      );
      return;
    }
    this.enterConflict(seen.state);
  }

  /**
   * The file is gone (deleted, or moved away: a file of the same inode in its directory names where
   * to). The room keeps the notebook and tells its peers; the next save writes the file back.
   */
  private fileWentMissing(known: NotebookFileState): void {
    if (this.#init.signals.hasCondition('file_missing')) return;
    const movedTo = sameInodeIn(dirname(known.path), known.ino);
    const what = movedTo === undefined ? 'was deleted or moved away' : `was renamed to ${movedTo}`;
    this.#init.signals.setCondition(
      'file_missing',
      `${known.path} ${what} by another program. The daemon keeps this notebook, and the next edit or save_notebook writes it to ${known.path} again${movedTo === undefined ? '' : ` (connect_notebook(path='${movedTo}') to follow the renamed file instead)`}.`,
    );
  }

  private reloadFromDisk(why: string): void {
    const path = this.#path;
    if (path === undefined) return;
    let text: string;
    let loaded: NotebookDocument;
    try {
      text = readFileSync(path, 'utf8');
      loaded = NotebookDocument.fromIpynb(text, path);
    } catch (error) {
      this.#init.logger.warn('could not reload the notebook file', { notebookId: this.#init.notebookId, error });
      return;
    }
    this.applyReload(loaded, notebookFileState(path, text), why);
  }

  private applyReload(loaded: NotebookDocument, state: NotebookFileState, why: string): void {
    const before = this.#document.version;
    const changes = this.#document.replaceWith(loaded);
    this.#init.onReloaded?.();
    this.#conflict = undefined;
    this.#fileState = state;
    this.#saveTimer?.cancel();
    this.#saveTimer = undefined;
    this.#dirty = false;
    this.#dirtySince = undefined;
    const { signals } = this.#init;
    changes.forEach((change, offset) => {
      const documentVersion = before + offset + 1;
      if (change.op === 'delete')
        signals.broadcast({ event: 'cell_deleted', document_version: documentVersion, cell_id: change.cell_id });
      else if (change.op === 'insert')
        signals.broadcast({
          event: 'cell_inserted',
          document_version: documentVersion,
          index: change.index,
          cell: change.cell,
        });
    });
    this.#init.journal.rotate(state, Number.POSITIVE_INFINITY);
    this.#init.logger.info('reloaded the notebook from its file', {
      notebookId: this.#init.notebookId,
      path: state.path,
      why,
    });
  }

  private enterConflict(state: NotebookFileState): void {
    const path = state.path;
    const copy = conflictCopyPath(path, this.#init.clock.now());
    this.#conflict = {
      copy,
      mode: state.mode,
      message: `${path} was changed on disk by another program while this notebook had unsaved edits; the file was left as it is and your version was saved as ${copy}. Reconnect (connect_notebook with the path) to load the file, or save_notebook to overwrite it with your version.`,
    };
    this.#fileState = state;
    this.#init.logger.warn('notebook file conflict', { notebookId: this.#init.notebookId, path, copy });
    this.#saveTimer?.cancel();
    this.#saveTimer = undefined;
    this.#dirty = true;
    this.#saving = this.#saving.then(() => this.writeNow()).catch(() => undefined);
  }

  private watchFile(): void {
    this.#watch?.close();
    this.#watch = undefined;
    if (this.#path === undefined) return;
    this.#watch = watchNotebookFile(
      this.#path,
      () => {
        if (!this.#init.isClosed()) this.checkDisk();
      },
      this.#init,
    );
  }

  /**
   * After a failed write: the next try in 1 s, then twice as long each time up to 30 s, until one
   * succeeds (a change tries sooner). Returns the delay; none once the room is closed.
   */
  private scheduleSaveRetry(): number | undefined {
    if (this.#disposed) return undefined;
    this.#saveRetryMs = Math.min(this.#saveRetryMs === 0 ? firstSaveRetryMs : this.#saveRetryMs * 2, maxSaveRetryMs);
    if (this.#saveTimer) return this.#saveRetryMs;
    this.#saveTimer = this.#init.clock.setTimer(this.#saveRetryMs, () => {
      this.#saveTimer = undefined;
      this.#saving = this.#saving.then(() => this.writeNow()).catch(() => undefined);
    });
    return this.#saveRetryMs;
  }

  /**
   * Writes the document where it belongs: the file (checked first: changed by someone else, it is
   * not written over), the conflict copy while in conflict, the untitled store for persisted
   * untitled rooms. Then the journal restarts from what was written.
   */
  private async writeNow(): Promise<void> {
    if (!this.#dirty) return;
    if (this.#conflict === undefined && this.#path !== undefined) {
      this.checkDisk();
      if (!this.#dirty) return;
    }
    const { logger, notebookId, signals } = this.#init;
    const target =
      this.#conflict?.copy ?? this.#path ?? (this.ephemeral ? undefined : this.#init.untitled.pathOf(notebookId));
    this.#dirty = false;
    this.#dirtySince = undefined;
    if (target === undefined) return;
    // Taken now (later edits are the next save's); values kept in blobs are read as it is written.
    const text = this.#document.ipynbText();
    const hash = text.sha256();
    const mark = this.#init.journal.markSaving(hash);
    const toFile = target === this.#path;
    // A new file: the conflict copy takes the notebook's mode; untitled store files are private.
    const write = writeFileAtomic(
      target,
      text.chunks(),
      this.#conflict?.mode ?? (this.#path === undefined ? 0o600 : 0o644),
    );
    if (toFile) {
      this.#writingSha = hash;
      this.#writing = write.catch(() => undefined);
    }
    let state: NotebookFileState | undefined;
    let failure: unknown;
    try {
      state = notebookFileState(target, { sha256: hash }, await write);
    } catch (error) {
      failure = error;
    }
    // The notebook's text held in memory and the pieces read from its blobs: given back soon.
    releaseLargeTransient(text.chars);
    // Unsaved again when it failed, before a deferred change is judged (a conflict, not a reload).
    if (state === undefined) this.#dirty = true;
    if (toFile) {
      this.#writingSha = undefined;
      this.#writing = undefined;
      if (state) this.#fileState = state;
      if (this.#recheckAfterWrite) {
        this.#recheckAfterWrite = false;
        this.checkDisk();
      }
    }
    if (state === undefined) {
      const retryMs = this.scheduleSaveRetry();
      logger.error('autosave failed; retrying', { notebookId, path: target, retryInMs: retryMs, error: failure });
      if (DaemonError.is(failure, 'fileReadOnly')) signals.setCondition('file_read_only', failure.message);
      else {
        signals.setCondition(
          'autosave_failing',
          `Saving ${target} failed (${describeWriteFailure(failure)}); the edits are kept by the daemon but are not in the file yet. It tries again every ${Math.round(maxSaveRetryMs / 1000)} s at most.`,
        );
      }
      throw failure;
    }
    this.savedAs(state, mark);
  }

  /** What a successful write of the notebook's file (or its untitled or conflict copy) settles: conditions, the journal. */
  private savedAs(state: NotebookFileState, mark: number): void {
    const { logger, signals } = this.#init;
    const target = state.path;
    const toFile = target === this.#path;
    this.#saveRetryMs = 0;
    const failing = signals.hasCondition('autosave_failing') || signals.hasCondition('file_read_only');
    signals.setCondition('autosave_failing', undefined);
    signals.setCondition('file_read_only', undefined);
    if (failing) signals.notice(`Saving works again: ${target} has every edit.`);
    if (toFile && signals.hasCondition('file_missing')) {
      signals.setCondition('file_missing', undefined);
      signals.notice(`${target} was written again with every edit.`);
    }
    this.#lastSaved = { at: this.#init.clock.now(), path: target };
    logger.debug('saved', { path: target, bytes: state.size });
    this.#init.journal.rotate(state, mark);
  }
}

/** `<dir>/<name>.nteract-conflict-<UTC stamp>.ipynb` beside the notebook. */
function conflictCopyPath(path: string, now: number): string {
  const stamp = new Date(now)
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');
  return join(dirname(path), `${basename(path, '.ipynb')}.nteract-conflict-${stamp}.ipynb`);
}

function badRequest(message: string): DaemonError {
  return new DaemonError('badRequest', message);
}

/** A failed write in a few words: the error code and message (`ENOSPC: no space left on device, …`). */
function describeWriteFailure(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** The notebook file in `dir` whose inode is `ino` (where a renamed file went), if any. */
function sameInodeIn(dir: string, ino: number): string | undefined {
  try {
    for (const name of readdirSync(dir)) {
      if (!name.endsWith('.ipynb')) continue;
      const path = join(dir, name);
      try {
        if (statSync(path).ino === ino) return path;
      } catch {
        // gone meanwhile
      }
    }
  } catch {
    // the directory itself is gone or unreadable
  }
  return undefined;
}
