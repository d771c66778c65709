import { type FSWatcher, watch } from 'node:fs';
import { basename, dirname } from 'node:path';
import type { Clock, Logger, Timer } from '@nteract-mcp/foundation';

/** A watch of one notebook file; `close` ends it (and a check still pending). */
export interface NotebookFileWatch {
  close(): void;
}

/**
 * Watches the directory of `path` and calls `onChange` 50 ms after the last event about the file
 * (a rename over it included). A watch that cannot start or fails is logged: the room still checks
 * the file before edits and saves.
 */
export function watchNotebookFile(
  path: string,
  onChange: () => void,
  context: { readonly clock: Clock; readonly logger: Logger; readonly notebookId: string },
): NotebookFileWatch {
  const { clock, logger, notebookId } = context;
  const name = basename(path);
  let watcher: FSWatcher | undefined;
  let timer: Timer | undefined;
  try {
    watcher = watch(dirname(path), { persistent: false }, (_event, changed) => {
      if (changed !== null && changed !== name) return;
      timer?.cancel();
      timer = clock.setTimer(50, () => {
        timer = undefined;
        try {
          onChange();
        } catch (error) {
          logger.warn('checking the notebook file failed', { notebookId, error });
        }
      });
    });
    watcher.on('error', (error) => {
      logger.warn('stopped watching the notebook file; changes are still checked before edits and saves', {
        notebookId,
        error,
      });
      watcher?.close();
      watcher = undefined;
    });
  } catch (error) {
    logger.warn('cannot watch the notebook file; changes are still checked before edits and saves', {
      notebookId,
      error,
    });
  }
  return {
    close: () => {
      timer?.cancel();
      watcher?.close();
      watcher = undefined;
    },
  };
}
