import { adoptCodeMirrorStyles } from './adopt-code-mirror-styles.js';
import type { CellEditor } from './cell-editor.js';

/** The cell editor's class, once its chunk (CodeMirror) is loaded. */
let loaded: typeof CellEditor | undefined;
let loading: Promise<typeof CellEditor> | undefined;

/**
 * The cell editor's class, its chunk loaded on the first call: CodeMirror is most of the page's
 * script, and the first paint shows sources as plain text without it. Its styles go through one
 * constructable stylesheet (see {@link adoptCodeMirrorStyles}), set up before the first editor.
 */
export function loadCellEditor(): Promise<typeof CellEditor> {
  loading ??= import('./cell-editor.js').then((module) => {
    adoptCodeMirrorStyles();
    loaded = module.CellEditor;
    return loaded;
  });
  // A chunk that failed to load (the daemon restarting, say) is asked for again by the next call.
  loading.catch(() => {
    loading = undefined;
  });
  return loading;
}

/** The cell editor's class when its chunk is loaded already (an editor can then be made at once). */
export function loadedCellEditor(): typeof CellEditor | undefined {
  return loaded;
}
