import { readFileSync, type Stats, statSync } from 'node:fs';
import { sha256 } from './room-journal.js';

/** What a room last read from or wrote to its file: enough to tell whether someone else changed it. */
export interface NotebookFileState {
  readonly path: string;
  readonly ino: number;
  readonly size: number;
  readonly mtimeMs: number;
  readonly mode: number;
  readonly sha256: string;
}

/**
 * The file's state after reading or writing `text` there (`stat` taken now unless given; `text`
 * gives the hash, or its hash is given as `{ sha256 }` when the text was written in pieces).
 */
export function notebookFileState(
  path: string,
  text: string | { readonly sha256: string },
  stat: Stats = statSync(path),
): NotebookFileState {
  return {
    path,
    ino: stat.ino,
    size: stat.size,
    mtimeMs: stat.mtimeMs,
    mode: stat.mode & 0o7777,
    sha256: typeof text === 'string' ? sha256(text) : text.sha256,
  };
}

/**
 * The file's text and state when its stat differs from `known` (a read only then), with `changed`
 * telling whether the content differs too (from `known` and from `alsoOurs`, the hash of a write
 * of ours under way); `'missing'` when there is no file at the path; `undefined` when the stat is
 * the same or the file cannot be read now.
 */
export function readNotebookFileIfChanged(
  known: NotebookFileState,
  alsoOurs?: string,
): { readonly text: string; readonly state: NotebookFileState; readonly changed: boolean } | 'missing' | undefined {
  let stat: ReturnType<typeof statSync>;
  try {
    stat = statSync(known.path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code === 'ENOENT' || code === 'ENOTDIR' ? 'missing' : undefined;
  }
  if (stat.ino === known.ino && stat.size === known.size && stat.mtimeMs === known.mtimeMs) return undefined;
  let text: string;
  try {
    text = readFileSync(known.path, 'utf8');
  } catch {
    return undefined;
  }
  const state: NotebookFileState = {
    path: known.path,
    ino: stat.ino,
    size: stat.size,
    mtimeMs: stat.mtimeMs,
    mode: stat.mode & 0o7777,
    sha256: sha256(text),
  };
  return { text, state, changed: state.sha256 !== known.sha256 && state.sha256 !== alsoOurs };
}
